//! Embeds kgen's silu_and_mul kernel (bf16, any row length) and launches it
//! through kgen's C API, checking the result against a CPU reference.
//!
//! Exit codes: 0 passed, 1 failed, 77 skipped (no CUDA driver or device).

mod cuda;
mod kgen;

use std::process::ExitCode;
use std::ptr;

use kgen::DType;

// Written by build.rs with `kgen emit`; the binary carries them, so it needs
// no kgen files at run time.
const PTX: &str = include_str!(concat!(env!("OUT_DIR"), "/silu_and_mul.ptx"));
const SPEC: &str = include_str!(concat!(env!("OUT_DIR"), "/silu_and_mul.json"));

/// The spec's params, in order: x [rows, 2d] bf16, y [rows, d] bf16, dim d.
fn silu_and_mul_args(x: u64, y: u64, d: i64) -> [kgen::Arg; 3] {
    [
        kgen::tensor(DType::KGEN_BF16, x, 0),
        kgen::tensor(DType::KGEN_BF16, y, 0),
        kgen::dim(d),
    ]
}

fn main() -> ExitCode {
    println!("kgen runtime {}", kgen::runtime_version());

    // Creating the kernel parses the spec only: it needs no GPU.
    let kernel = match kgen::Kernel::new(PTX, SPEC) {
        Ok(k) => k,
        Err(e) => {
            eprintln!("kgen_kernel_create: {e}");
            return ExitCode::FAILURE;
        }
    };
    println!("created silu_and_mul ({} bytes of PTX)", PTX.len());

    if let Err(message) = check_wrong_dtype(&kernel) {
        eprintln!("error path check failed: {message}");
        return ExitCode::FAILURE;
    }

    if let Err(e) = kgen::device_open(0) {
        if e.status == kgen::ffi::KGEN_ERROR_NO_DRIVER
            || e.status == kgen::ffi::KGEN_ERROR_NO_DEVICE
        {
            eprintln!("no GPU: {}", e.message);
            return ExitCode::from(77);
        }
        eprintln!("kgen_device_open: {e}");
        return ExitCode::FAILURE;
    }
    let driver = match cuda::Driver::load() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };

    let rows = 7;
    let mut ok = true;
    // The kernel takes d at run time: d = 1000 checks a length other than 4096.
    for d in [4096, 1000] {
        match run_case(&kernel, &driver, rows, d) {
            Ok(ulp) => {
                let pass = ulp <= 1;
                println!(
                    "rows={rows} d={d}: max diff {ulp} bf16 ulp: {}",
                    if pass { "ok" } else { "MISMATCH" }
                );
                ok &= pass;
            }
            Err(e) => {
                eprintln!("rows={rows} d={d}: {e}");
                ok = false;
            }
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// The error a user hits first: a tensor of the wrong dtype. rows = 0 runs
/// every argument check without touching the driver, so this runs in CI too.
fn check_wrong_dtype(kernel: &kgen::Kernel) -> Result<(), String> {
    let mut args = silu_and_mul_args(0, 0, 4096);
    args[0].dtype = DType::KGEN_F16;
    // SAFETY: rows = 0 launches nothing, so no memory is touched.
    match unsafe { kernel.launch(&args, 0, ptr::null_mut()) } {
        Ok(()) => Err("an f16 tensor for a bf16 kernel was accepted".into()),
        // The message names the expected dtype (bf16) and the one passed (f16).
        Err(e)
            if e.status == kgen::ffi::KGEN_ERROR_INVALID_ARGUMENT
                && e.message.contains("bf16")
                && e.message.replace("bf16", "").contains("f16") =>
        {
            println!("wrong dtype rejected as expected: {}", e.message);
            Ok(())
        }
        Err(e) => Err(format!(
            "expected KGEN_ERROR_INVALID_ARGUMENT naming f16, got {e}"
        )),
    }
}

/// Launches on [rows, 2d] inputs and returns the largest difference from the
/// CPU reference, in bf16 ulps.
fn run_case(
    kernel: &kgen::Kernel,
    driver: &cuda::Driver,
    rows: usize,
    d: usize,
) -> Result<u32, String> {
    // Deterministic inputs in about [-6, 6), bf16 bits.
    let x: Vec<u16> = (0..rows * 2 * d)
        .map(|i| {
            f32_to_bf16(((i as u32).wrapping_mul(2654435761) >> 20) as f32 / 4096.0 * 12.0 - 6.0)
        })
        .collect();
    // NaN everywhere: a kernel that writes nothing fails the comparison.
    let mut y = vec![0xFFFFu16; rows * d];

    let x_dev = driver.upload(&x)?;
    let y_dev = driver.upload(&y)?;
    let args = silu_and_mul_args(x_dev.ptr, y_dev.ptr, d as i64);
    // SAFETY: x_dev and y_dev hold rows contiguous rows of 2d and d bf16s and
    // outlive the launch (synchronize below waits for it).
    unsafe { kernel.launch(&args, rows as i64, ptr::null_mut()) }.map_err(|e| e.to_string())?;
    driver.synchronize()?;
    y_dev.download(&mut y)?;

    let mut max_ulp = 0;
    for r in 0..rows {
        for j in 0..d {
            let want = silu_and_mul_ref(x[r * 2 * d + j], x[r * 2 * d + d + j]);
            max_ulp = max_ulp.max(ulp_diff(y[r * d + j], want));
        }
    }
    Ok(max_ulp)
}

/// kgen's semantics (ops/SiluAndMul.cpp): silu(a) in f32, rounded to bf16,
/// then times b in f32, rounded to bf16 again (as PyTorch does on bf16).
fn silu_and_mul_ref(a: u16, b: u16) -> u16 {
    let a = bf16_to_f32(a);
    let silu = f32_to_bf16(a / (1.0 + (-a).exp()));
    f32_to_bf16(bf16_to_f32(silu) * bf16_to_f32(b))
}

fn bf16_to_f32(h: u16) -> f32 {
    f32::from_bits((h as u32) << 16)
}

/// Round to nearest, ties to even, like the GPU's cvt.rn.bf16.f32.
fn f32_to_bf16(f: f32) -> u16 {
    if f.is_nan() {
        return 0x7FC0;
    }
    let bits = f.to_bits();
    ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) as u16
}

/// Distance in representable bf16 values; NaN is infinitely far.
fn ulp_diff(a: u16, b: u16) -> u32 {
    if bf16_to_f32(a).is_nan() || bf16_to_f32(b).is_nan() {
        return u32::MAX;
    }
    // Map sign-magnitude bits onto a line where neighbours differ by 1.
    let key = |h: u16| {
        if h & 0x8000 != 0 {
            -((h & 0x7FFF) as i32)
        } else {
            h as i32
        }
    };
    key(a).abs_diff(key(b))
}
