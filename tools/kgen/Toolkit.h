//===- Toolkit.h - The CUDA toolkit's ptxas and cuobjdump -------*- C++ -*-===//
//
// kgen runs the toolkit's programs as a user would: ptxas for cubins and its
// -v report (aot, lint, baseline), cuobjdump for the SASS (lint, where
// found). Neither is needed to make PTX.
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_TOOLS_KGEN_TOOLKIT_H
#define KGEN_TOOLS_KGEN_TOOLKIT_H

#include <string>

namespace kgen::tools {

/// `explicitPath` if given (it must be executable), else cudaPath/bin/NAME,
/// else NAME on PATH; "" with `why` when none is.
std::string findTool(const std::string &name, const std::string &explicitPath,
                     const std::string &cudaPath, std::string &why);

/// Runs `ptxas -arch=ARCH [-v]` on `ptx`. Sets `cubin` and, with `verbose`,
/// `report` (its -v lines); false with `err` on failure.
bool runPtxas(const std::string &ptxas, const std::string &arch,
              const std::string &ptx, bool verbose, std::string &cubin,
              std::string &report, std::string &err);

/// Runs `cuobjdump -sass` on a cubin; its text in `sass`, or false and `err`.
bool runCuobjdump(const std::string &cuobjdump, const std::string &cubin,
                  std::string &sass, std::string &err);

/// The first line of `TOOL --version` that names a build ("Build cuda_..."),
/// else its last line; "" when it does not run.
std::string toolVersion(const std::string &tool);

} // namespace kgen::tools

#endif // KGEN_TOOLS_KGEN_TOOLKIT_H
