//===- Bundle.h - Emit many kernels into a folder ---------------*- C++ -*-===//
#ifndef KGEN_TOOLS_KGEN_BUNDLE_H
#define KGEN_TOOLS_KGEN_BUNDLE_H

#include "codegen/Pipeline/Pipeline.h"

#include <string>
#include <vector>

namespace kgen::tools {

/// Compiles every bundled op x dtype x arch x row length (0 = the dynamic
/// kernel) into `dir` as NAME.ptx + NAME.json, writes dir/manifest.tsv, and
/// prints one line per kernel with its compile time. Empty `ops` / `dtypes`
/// mean all. Compiles on `threads` threads; the output does not depend on
/// it. Returns the number of failures.
int emitBundle(const std::string &dir, const std::vector<std::string> &archs,
               const std::vector<int64_t> &lengths,
               const std::vector<std::string> &ops,
               const std::vector<DType> &dtypes,
               const codegen::CompileOptions &base, unsigned threads);

} // namespace kgen::tools

#endif // KGEN_TOOLS_KGEN_BUNDLE_H
