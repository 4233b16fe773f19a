//! The few CUDA driver calls this example needs, loaded at run time.
//!
//! libcuda.so.1 is opened with dlopen instead of being linked, so the binary
//! still starts (and reports "no GPU") on machines without a driver.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::mem;

type CUresult = c_int;
pub type CUdeviceptr = u64;

extern "C" {
    // From libc (libdl before glibc 2.34), which Rust's std already links.
    fn dlopen(filename: *const c_char, flag: c_int) -> *mut c_void;
    fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    fn dlerror() -> *mut c_char;
}
const RTLD_NOW: c_int = 2;

type MemAlloc = unsafe extern "C" fn(*mut CUdeviceptr, usize) -> CUresult;
type MemFree = unsafe extern "C" fn(CUdeviceptr) -> CUresult;
type MemcpyHtoD = unsafe extern "C" fn(CUdeviceptr, *const c_void, usize) -> CUresult;
type MemcpyDtoH = unsafe extern "C" fn(*mut c_void, CUdeviceptr, usize) -> CUresult;
type CtxSynchronize = unsafe extern "C" fn() -> CUresult;

pub struct Driver {
    mem_alloc: MemAlloc,
    mem_free: MemFree,
    memcpy_htod: MemcpyHtoD,
    memcpy_dtoh: MemcpyDtoH,
    ctx_synchronize: CtxSynchronize,
}

fn dl_error() -> String {
    let e = unsafe { dlerror() };
    if e.is_null() {
        "unknown dlopen error".into()
    } else {
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

fn check(what: &str, r: CUresult) -> Result<(), String> {
    if r == 0 {
        Ok(())
    } else {
        Err(format!("{what} failed with CUresult {r}"))
    }
}

impl Driver {
    /// Loads the functions; call it after kgen_device_open succeeded (the
    /// driver is then present and a context is current). The library is never
    /// closed: the function pointers must stay valid until exit.
    pub fn load() -> Result<Driver, String> {
        let lib = unsafe { dlopen(c"libcuda.so.1".as_ptr(), RTLD_NOW) };
        if lib.is_null() {
            return Err(format!("dlopen(libcuda.so.1): {}", dl_error()));
        }
        let sym = |name: &CStr| -> Result<*mut c_void, String> {
            let p = unsafe { dlsym(lib, name.as_ptr()) };
            if p.is_null() {
                Err(format!("dlsym({}): {}", name.to_string_lossy(), dl_error()))
            } else {
                Ok(p)
            }
        };
        // SAFETY: each symbol has the signature of cuda.h's declaration (the
        // _v2 names are the 64-bit CUdeviceptr versions cuda.h maps to).
        unsafe {
            Ok(Driver {
                mem_alloc: mem::transmute::<*mut c_void, MemAlloc>(sym(c"cuMemAlloc_v2")?),
                mem_free: mem::transmute::<*mut c_void, MemFree>(sym(c"cuMemFree_v2")?),
                memcpy_htod: mem::transmute::<*mut c_void, MemcpyHtoD>(sym(c"cuMemcpyHtoD_v2")?),
                memcpy_dtoh: mem::transmute::<*mut c_void, MemcpyDtoH>(sym(c"cuMemcpyDtoH_v2")?),
                ctx_synchronize: mem::transmute::<*mut c_void, CtxSynchronize>(sym(
                    c"cuCtxSynchronize",
                )?),
            })
        }
    }

    /// Waits for all work in the current context (the default stream included).
    pub fn synchronize(&self) -> Result<(), String> {
        check("cuCtxSynchronize", unsafe { (self.ctx_synchronize)() })
    }

    /// A device copy of `data` (bf16 values kept as their u16 bits).
    pub fn upload(&self, data: &[u16]) -> Result<DeviceBuffer<'_>, String> {
        let buf = self.alloc(mem::size_of_val(data))?;
        check("cuMemcpyHtoD", unsafe {
            (self.memcpy_htod)(buf.ptr, data.as_ptr().cast(), buf.bytes)
        })?;
        Ok(buf)
    }

    pub fn alloc(&self, bytes: usize) -> Result<DeviceBuffer<'_>, String> {
        let mut ptr = 0;
        check("cuMemAlloc", unsafe { (self.mem_alloc)(&mut ptr, bytes) })?;
        Ok(DeviceBuffer {
            driver: self,
            ptr,
            bytes,
        })
    }
}

/// A device allocation freed on drop.
pub struct DeviceBuffer<'a> {
    driver: &'a Driver,
    pub ptr: CUdeviceptr,
    bytes: usize,
}

impl DeviceBuffer<'_> {
    /// Copies the whole buffer into `out` (synchronous: waits for prior work
    /// on the default stream).
    pub fn download(&self, out: &mut [u16]) -> Result<(), String> {
        assert_eq!(mem::size_of_val(out), self.bytes, "download size mismatch");
        check("cuMemcpyDtoH", unsafe {
            (self.driver.memcpy_dtoh)(out.as_mut_ptr().cast(), self.ptr, self.bytes)
        })
    }
}

impl Drop for DeviceBuffer<'_> {
    fn drop(&mut self) {
        unsafe { (self.driver.mem_free)(self.ptr) };
    }
}
