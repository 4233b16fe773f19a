//===- CompileCache.h - Compiled kernels kept by content --------*- C++ -*-===//
//
// A folder of artifacts (PTX, and the spec where one was asked for) named
// by a hash of everything that determines them: the compiler's own bytes,
// libdevice, the imported kernel, the arch, the profile and the forced
// schedule. A rebuild of unchanged kernels then reads instead of
// compiling; any change to one of those is a new name, never a stale hit.
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_CODEGEN_PIPELINE_COMPILECACHE_H
#define KGEN_CODEGEN_PIPELINE_COMPILECACHE_H

#include <string>

namespace kgen::codegen {

/// What identifies this build of the compiler (the running executable's
/// bytes, hashed once) and the libdevice under `cudaPath` (its size and
/// time): part of every key.
std::string compilerIdentity(const std::string &cudaPath);

/// The file name (32 hex digits, a 128-bit hash) of a key's text.
std::string cacheName(const std::string &key);

/// Reads `dir`/NAME.ptx and, with `withSpec`, NAME.json; false when either
/// is missing.
bool readCached(const std::string &dir, const std::string &name, bool withSpec,
                std::string &ptx, std::string &spec);

/// Writes them, each through a temporary file renamed into place, so that
/// compiles running at once never read half a file. Failures are ignored:
/// the cache only saves time.
void writeCached(const std::string &dir, const std::string &name,
                 const std::string &ptx, const std::string *spec);

} // namespace kgen::codegen

#endif // KGEN_CODEGEN_PIPELINE_COMPILECACHE_H
