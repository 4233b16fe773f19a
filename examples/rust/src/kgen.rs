//! A small safe wrapper over kgen's C API (kgen_runtime.h).

use std::ffi::{c_char, c_int, c_void, CStr};
use std::fmt;
use std::ptr::{self, NonNull};

/// The C declarations, laid out exactly as in kgen_runtime.h.
#[allow(non_camel_case_types, dead_code)]
pub mod ffi {
    use std::ffi::{c_char, c_int, c_void};

    // kgen_status is returned by C: keep it a plain int, since a Rust enum
    // holding a value it does not list would be undefined behaviour.
    pub type kgen_status = c_int;
    pub const KGEN_OK: kgen_status = 0;
    pub const KGEN_ERROR_NO_DRIVER: kgen_status = 1;
    pub const KGEN_ERROR_NO_DEVICE: kgen_status = 2;
    pub const KGEN_ERROR_NO_CONTEXT: kgen_status = 3;
    pub const KGEN_ERROR_INVALID_SPEC: kgen_status = 4;
    pub const KGEN_ERROR_INVALID_ARGUMENT: kgen_status = 5;
    pub const KGEN_ERROR_MISALIGNED: kgen_status = 6;
    pub const KGEN_ERROR_JIT: kgen_status = 7;
    pub const KGEN_ERROR_CUDA: kgen_status = 8;
    pub const KGEN_ERROR_INTERNAL: kgen_status = 9;

    // These two only go from Rust to C, so repr(C) enums (C ints) are safe.
    #[repr(C)]
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum kgen_dtype {
        KGEN_F32,
        KGEN_F16,
        KGEN_BF16,
        KGEN_F8E4M3,
        KGEN_F8E5M2,
        KGEN_I32,
        KGEN_I64,
        KGEN_I8,
    }

    #[repr(C)]
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum kgen_arg_kind {
        KGEN_ARG_TENSOR,
        KGEN_ARG_SCALAR,
        KGEN_ARG_DIM,
    }

    #[repr(C)]
    #[derive(Clone, Copy, Debug)]
    pub struct kgen_arg {
        pub kind: kgen_arg_kind,
        pub dtype: kgen_dtype,
        pub ptr: *const c_void,
        pub row_stride: i64,
        pub f: f64,
        pub i: i64,
    }

    /// Opaque; only ever behind a pointer.
    #[repr(C)]
    pub struct kgen_kernel {
        _private: [u8; 0],
    }

    extern "C" {
        pub fn kgen_runtime_version() -> *const c_char;
        pub fn kgen_last_error() -> *const c_char;
        pub fn kgen_kernel_create(
            ptx: *const c_char,
            ptx_len: usize,
            spec_json: *const c_char,
            spec_len: usize,
            out: *mut *mut kgen_kernel,
        ) -> kgen_status;
        pub fn kgen_kernel_destroy(kernel: *mut kgen_kernel);
        pub fn kgen_launch(
            kernel: *const kgen_kernel,
            args: *const kgen_arg,
            nargs: usize,
            rows: i64,
            cu_stream: *mut c_void,
        ) -> kgen_status;
        pub fn kgen_device_open(ordinal: c_int, cu_context_out: *mut *mut c_void) -> kgen_status;
    }
}

pub use ffi::kgen_dtype as DType;

/// A failed kgen call: its status and kgen_last_error() read right after it.
#[derive(Debug, Clone)]
pub struct Error {
    pub status: ffi::kgen_status,
    pub message: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "kgen status {}: {}", self.status, self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// The message is thread-local and overwritten by the next kgen call, so
/// read it at once, on the thread that made the failing call.
pub fn last_error() -> String {
    // SAFETY: kgen_last_error never returns NULL.
    unsafe { CStr::from_ptr(ffi::kgen_last_error()) }
        .to_string_lossy()
        .into_owned()
}

fn check(status: ffi::kgen_status) -> Result<()> {
    if status == ffi::KGEN_OK {
        Ok(())
    } else {
        Err(Error {
            status,
            message: last_error(),
        })
    }
}

pub fn runtime_version() -> String {
    // SAFETY: a static NUL-terminated string.
    unsafe { CStr::from_ptr(ffi::kgen_runtime_version()) }
        .to_string_lossy()
        .into_owned()
}

/// cuInit, then makes device `ordinal`'s primary context current on this thread.
pub fn device_open(ordinal: i32) -> Result<()> {
    check(unsafe { ffi::kgen_device_open(ordinal, ptr::null_mut()) })
}

/// One launch argument, in the spec's parameter order.
pub type Arg = ffi::kgen_arg;

/// A tensor at device address `ptr` (a CUdeviceptr); `row_stride` in
/// elements, 0 for contiguous rows.
pub fn tensor(dtype: DType, ptr: u64, row_stride: i64) -> Arg {
    Arg {
        kind: ffi::kgen_arg_kind::KGEN_ARG_TENSOR,
        dtype,
        ptr: ptr as usize as *const c_void,
        row_stride,
        f: 0.0,
        i: 0,
    }
}

/// The value of a dim parameter (a row length chosen at launch), > 0.
pub fn dim(value: i64) -> Arg {
    Arg {
        kind: ffi::kgen_arg_kind::KGEN_ARG_DIM,
        dtype: DType::KGEN_I64,
        ptr: ptr::null(),
        row_stride: 0,
        f: 0.0,
        i: value,
    }
}

/// A kernel created from kgen's PTX and spec; destroyed on drop.
pub struct Kernel {
    raw: NonNull<ffi::kgen_kernel>,
}

// The header guarantees a kgen_kernel is immutable after creation and may be
// launched from several threads at once.
unsafe impl Send for Kernel {}
unsafe impl Sync for Kernel {}

impl Kernel {
    /// Parses and validates the spec; needs no GPU. Both texts are copied.
    pub fn new(ptx: &str, spec_json: &str) -> Result<Self> {
        let mut raw = ptr::null_mut();
        check(unsafe {
            ffi::kgen_kernel_create(
                ptx.as_ptr().cast::<c_char>(),
                ptx.len(),
                spec_json.as_ptr().cast::<c_char>(),
                spec_json.len(),
                &mut raw,
            )
        })?;
        Ok(Kernel {
            raw: NonNull::new(raw).expect("kgen_kernel_create returned OK and NULL"),
        })
    }

    /// Launches over `rows` rows on `stream` (a CUstream, NULL: the default
    /// stream) in the CUDA context current on this thread. rows == 0 only
    /// checks the arguments (no driver needed).
    ///
    /// # Safety
    /// The runtime checks kinds, dtypes, dims and alignment, not memory: every
    /// tensor must be a live device allocation holding `rows` rows at its
    /// stride, and must stay alive until the kernel has run on `stream`.
    pub unsafe fn launch(&self, args: &[Arg], rows: i64, stream: *mut c_void) -> Result<()> {
        check(ffi::kgen_launch(
            self.raw.as_ptr(),
            args.as_ptr(),
            args.len(),
            rows,
            stream,
        ))
    }
}

impl Drop for Kernel {
    fn drop(&mut self) {
        unsafe { ffi::kgen_kernel_destroy(self.raw.as_ptr()) }
    }
}

// kgen_arg's enums must be C ints and its size the header's (64-bit targets,
// the only ones CUDA supports), or every argument would be misread.
const _: () = assert!(std::mem::size_of::<DType>() == std::mem::size_of::<c_int>());
#[cfg(target_pointer_width = "64")]
const _: () = assert!(std::mem::size_of::<Arg>() == 40);
