//===- Baseline.h - Stored artifact metrics and their diff ------*- C++ -*-===//
//
// `kgen baseline save FILE` measures a selection (Measure.h) and writes the
// selection and each kernel's metrics to FILE. `kgen diff FILE` measures the
// same selection again and prints what changed; with --fail-on-regression it
// exits 1 when a kernel or entry is gone, spills or stack grew, or registers,
// SASS instructions or PTX lines grew past their slack. With --config it
// also lints the kernels it measured.
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_TOOLS_KGEN_BASELINE_H
#define KGEN_TOOLS_KGEN_BASELINE_H

#include "Lint.h"
#include "Measure.h"

#include <string>
#include <vector>

namespace kgen::tools {

struct Baseline {
  std::string ptxas; ///< ptxas's version line when saved
  Selection selection;
  std::vector<KernelMetrics> kernels; ///< without PTX or SASS text
};

std::string writeBaseline(const Baseline &b);
/// False with `err` ("FILE: kernels.NAME: ...") for a malformed file.
bool readBaseline(const std::string &path, Baseline &out, std::string &err);

struct DiffOptions {
  int64_t registersSlack = 0; ///< registers may grow by this much
  double growthSlack = 0.05;  ///< PTX lines and SASS may grow by this share
  bool verbose = false;       ///< every changed metric, not the first 40
};

struct DiffResult {
  int regressions = 0, improvements = 0, changedPtx = 0;
  std::string table; ///< the changed rows
};
DiffResult diffBaselines(const Baseline &before, const Baseline &after,
                         const DiffOptions &opts);

struct BaselineTools {
  std::string ptxas, cuobjdump, cudaPath;
};

/// `kgen baseline save FILE`: returns the exit code.
int saveBaseline(const std::string &path, const Selection &sel,
                 const codegen::CompileOptions &base, unsigned threads,
                 const BaselineTools &tools);

/// `kgen diff FILE`: returns the exit code. `lintConfig` may be "".
int runDiff(const std::string &path, const DiffOptions &opts,
            bool failOnRegression, const std::string &lintConfig,
            const codegen::CompileOptions &base, unsigned threads,
            const BaselineTools &tools);

} // namespace kgen::tools

#endif // KGEN_TOOLS_KGEN_BASELINE_H
