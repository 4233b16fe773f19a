//===- Baseline.h - Stored artifact metrics and their diff ------*- C++ -*-===//
//
// `kgen baseline save FILE` measures a selection (Measure.h) and writes the
// selection and each kernel's metrics to FILE. `kgen diff FILE` measures the
// same selection again and prints what changed; with --fail-on-regression it
// exits 1 when a kernel or entry is gone, spills or stack grew, or registers,
// SASS instructions or PTX lines grew past their slack. With --config it
// also lints the kernels it measured. Numerics and times measured on a GPU
// (GpuRecords.h) are stored and compared when given: a kernel that failed a
// case, or whose worst |err|/tol grew past its slack, and a case slower past
// the time slack, are regressions.
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_TOOLS_KGEN_BASELINE_H
#define KGEN_TOOLS_KGEN_BASELINE_H

#include "GpuRecords.h"
#include "Lint.h"
#include "Measure.h"

#include <map>
#include <string>
#include <vector>

namespace kgen::tools {

struct Baseline {
  std::string ptxas; ///< ptxas's version line when saved
  Selection selection;
  std::vector<KernelMetrics> kernels; ///< without PTX or SASS text
  /// Measured on a GPU by kgen-fuzz (GpuRecords.h), when given: numerics
  /// by kernel, times by case (passing cases only).
  std::map<std::string, KernelNumerics> numerics;
  std::map<std::string, CaseTimes> times;
};

std::string writeBaseline(const Baseline &b);
/// False with `err` ("FILE: kernels.NAME: ...") for a malformed file.
bool readBaseline(const std::string &path, Baseline &out, std::string &err);

struct DiffOptions {
  int64_t registersSlack = 0; ///< registers may grow by this much
  double growthSlack = 0.05;  ///< PTX lines and SASS may grow by this share
  bool verbose = false;       ///< every changed metric, not the first 40
  double numericsSlack = 0.25; ///< worst |err|/tol may grow by this much
  double timeSlack = 0.05;     ///< cold and warm times may grow by this share
  double timeFloorUs = 0.2;    ///< ... or by this much (launches of a us)
};

struct DiffResult {
  int regressions = 0, improvements = 0, changedPtx = 0;
  int comparedNumerics = 0, comparedTimes = 0; ///< kernels, cases
  double coldGeomean = 1; ///< after / before over the compared cases
  std::string table; ///< the changed rows
};
DiffResult diffBaselines(const Baseline &before, const Baseline &after,
                         const DiffOptions &opts);

struct BaselineTools {
  std::string ptxas, cuobjdump, cudaPath;
};

/// Tables from a GPU to store or compare beside the artifacts: paths of
/// `kgen-fuzz run --report` and `kgen-fuzz time` output, or "".
struct GpuTables {
  std::string numerics, times;
};

/// `kgen baseline save FILE`: returns the exit code.
int saveBaseline(const std::string &path, const Selection &sel,
                 const codegen::CompileOptions &base, unsigned threads,
                 const BaselineTools &tools, const GpuTables &gpu);

/// `kgen diff FILE`: returns the exit code. `lintConfig` may be "".
int runDiff(const std::string &path, const DiffOptions &opts,
            bool failOnRegression, const std::string &lintConfig,
            const codegen::CompileOptions &base, unsigned threads,
            const BaselineTools &tools, const GpuTables &gpu);

} // namespace kgen::tools

#endif // KGEN_TOOLS_KGEN_BASELINE_H
