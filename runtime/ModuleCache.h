//===- ModuleCache.h - Loaded modules and functions -------------*- C++ -*-===//
//
// JIT-compiling PTX is slow, so modules are loaded once per (image, context)
// and kept for the life of the process; an image is PTX text or a cubin
// (cuModuleLoadDataEx takes either). Functions are cached per (module,
// entry). The cache's mutex guards its table; each module's own mutex its
// load and functions, so a long JIT blocks only launches of that module.
//
//===----------------------------------------------------------------------===//

#ifndef KGEN_RUNTIME_MODULECACHE_H
#define KGEN_RUNTIME_MODULECACHE_H

#include "runtime/Driver.h"
#include "runtime/Spec.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace kgen::rt {

/// FNV-1a 64 of `text`: the cache key (entries also compare the full text).
uint64_t hashText(std::string_view text);

/// The cache's key of context `ctx`: its id (CUDA 12+), which a later
/// context never reuses, else its handle.
uint64_t contextKey(const Driver &d, CUcontext ctx);

/// The CUfunction for `variant.entry` of `image` in the current context `ctx`
/// (of key `ctxKey`),
/// ready to launch with `variant`'s block and shared memory, and the
/// multiprocessors of the context's device (which place few rows). Loads and
/// caches as needed. On failure returns KGEN_ERROR_JIT (with the JIT log) or
/// KGEN_ERROR_CUDA, with the reason in `err`.
kgen_status getFunction(const Driver &d, CUcontext ctx, uint64_t ctxKey,
                        const std::shared_ptr<const std::string> &image,
                        uint64_t imageHash, const Variant &variant,
                        CUfunction &out, int &multiprocessors,
                        std::string &err);

/// The compute capability of the device of the current context (of key
/// `ctxKey`) as major * 10 + minor (90 for an H100), cached per context.
kgen_status contextArch(const Driver &d, uint64_t ctxKey, int &sm,
                        std::string &err);

} // namespace kgen::rt

#endif // KGEN_RUNTIME_MODULECACHE_H
