//===- Bundle.h - Emit many kernels into a folder ---------------*- C++ -*-===//
#ifndef KGEN_TOOLS_KGEN_BUNDLE_H
#define KGEN_TOOLS_KGEN_BUNDLE_H

#include "Jobs.h"

#include <string>
#include <vector>

namespace kgen::tools {

/// Compiles the kernels of `sel` into `dir` as NAME.ptx + NAME.json, writes
/// dir/manifest.tsv, and prints one line per kernel with its compile time.
/// Compiles on `threads` threads; the output does not depend on it. Returns
/// the number of failures.
int emitBundle(const std::string &dir, const Selection &sel,
               const codegen::CompileOptions &base, unsigned threads);

} // namespace kgen::tools

#endif // KGEN_TOOLS_KGEN_BUNDLE_H
