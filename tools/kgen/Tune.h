//===- Tune.h - kgen tune: measured choices of the schedule -----*- C++ -*-===//
//
// A tuning run is a folder. `kgen tune plan RUN --space FILE` takes a base
// profile and, per value a space file lists for an option, a candidate that
// changes that option alone (so each candidate is also the base's ablation
// of one choice); it compiles each candidate's bundle of the selection and
// writes the cases to time. On a GPU, bench/tune_check.sh RUN times every
// case of every candidate with `kgen-fuzz time` (each case checked against
// the interpreter first), the base first and last. `kgen tune pick RUN`
// reads those times, sets the noise from the base's two runs, and writes
// summary.md (per candidate: geomean against the base, cold and in graphs,
// its worst case and the cases slower than their noise; per case: the
// base's share of memcpy; per candidate, whether its SASS has what its
// schedule claims, where tune_check.sh could read the SASS: SassClaims.h)
// and profile.json: the base with every change that won past the noise.
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_TOOLS_KGEN_TUNE_H
#define KGEN_TOOLS_KGEN_TUNE_H

#include "Jobs.h"

#include <string>
#include <vector>

namespace kgen::tools {

struct TunePlan {
  std::string run;           ///< the run folder
  std::string space;         ///< the space file
  std::vector<int64_t> rows; ///< rows of each case
};

/// `kgen tune plan`: returns the exit code. `base` holds the base profile
/// (none: the arch's own); `sel` names exactly one arch.
int tunePlan(const TunePlan &plan, const Selection &sel,
             const codegen::CompileOptions &base, unsigned threads);

/// `kgen tune pick RUN`: returns the exit code. `noise` is the least
/// relative change that counts, raised to what the base's two runs show;
/// `lintConfig` ("": none) says which entries claim 128-bit loads.
int tunePick(const std::string &run, double noise,
             const std::string &lintConfig);

} // namespace kgen::tools

#endif // KGEN_TOOLS_KGEN_TUNE_H
