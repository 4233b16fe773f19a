//! Emits the kernel's PTX and spec with `kgen emit` into OUT_DIR (src/main.rs
//! embeds them with include_str!) and links kgen's static runtime.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const OP: &str = "silu_and_mul";
const DTYPE: &str = "bf16";

fn main() {
    println!("cargo:rerun-if-env-changed=KGEN_PREFIX");
    println!("cargo:rerun-if-env-changed=KGEN_ARCH");
    println!("cargo:rerun-if-changed=build.rs");

    let prefix = match env::var_os("KGEN_PREFIX") {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => fail(
            "KGEN_PREFIX is not set: set it to kgen's install prefix \
                   (the folder holding bin/kgen and lib/libkgen_runtime.a), \
                   e.g. KGEN_PREFIX=/opt/kgen cargo run --release",
        ),
    };
    let kgen = prefix.join("bin/kgen");
    if !kgen.is_file() {
        fail(&format!(
            "KGEN_PREFIX={}: {} is missing; is KGEN_PREFIX kgen's install prefix?",
            prefix.display(),
            kgen.display()
        ));
    }
    let runtime = prefix.join("lib/libkgen_runtime.a");
    if !runtime.is_file() {
        fail(&format!(
            "KGEN_PREFIX={}: {} is missing",
            prefix.display(),
            runtime.display()
        ));
    }
    println!("cargo:rerun-if-changed={}", kgen.display());
    println!("cargo:rerun-if-changed={}", runtime.display());

    // The PTX must be for an arch at or below the GPU's: sm_90 runs on
    // H100 and newer; KGEN_ARCH=sm_80 targets A100 (and, through the JIT, newer).
    let arch = env::var("KGEN_ARCH").unwrap_or_else(|_| "sm_90".into());
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    // No --hidden: the kernel takes its row length d at launch time.
    emit(&kgen, &arch, "ptx", &out_dir.join(format!("{OP}.ptx")));
    emit(&kgen, &arch, "spec", &out_dir.join(format!("{OP}.json")));

    println!(
        "cargo:rustc-link-search=native={}",
        prefix.join("lib").display()
    );
    println!("cargo:rustc-link-lib=static=kgen_runtime");
    // The runtime opens libcuda.so.1 with dlopen; before glibc 2.34 dlopen
    // and pthreads live in libdl and libpthread (later they are stubs).
    println!("cargo:rustc-link-lib=dylib=dl");
    println!("cargo:rustc-link-lib=dylib=pthread");
}

fn emit(kgen: &Path, arch: &str, stage: &str, out: &Path) {
    let status = Command::new(kgen)
        .args(["emit", OP, "--arch", arch, "--dtype", DTYPE])
        .arg(format!("--emit={stage}"))
        .arg("-o")
        .arg(out)
        .status()
        .unwrap_or_else(|e| fail(&format!("cannot run {}: {e}", kgen.display())));
    if !status.success() {
        fail(&format!(
            "`{} emit {OP} --arch {arch} --dtype {DTYPE} --emit={stage}` failed ({status})",
            kgen.display()
        ));
    }
}

fn fail(message: &str) -> ! {
    eprintln!("error: {message}");
    std::process::exit(1);
}
