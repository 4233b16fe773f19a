//===- SassClaims.h - Schedule claims checked in SASS -----------*- C++ -*-===//
//
// What a kernel's schedule meant the machine code to do: 128-bit loads where
// a lint rule requires LDG.E.128 of the entry (ops/lint.json's `_vec` rule),
// L2 prefetches (the spec's schedule.prefetch_blocks), cluster barriers
// (cluster variants). bench/tune_check.sh counts those instructions per entry
// in the SASS (cuobjdump on the GPU machine) into sass.tsv; this checks each
// claim against the counts, so a tuning run cannot credit a feature that ptxas
// dropped.
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_TOOLS_KGEN_SASSCLAIMS_H
#define KGEN_TOOLS_KGEN_SASSCLAIMS_H

#include <string>
#include <vector>

namespace kgen::tools {

struct LintConfig;

struct SassCheck {
  /// Entries claiming each feature, and those whose SASS has it.
  int loads128 = 0, loads128Found = 0;
  int prefetch = 0, prefetchFound = 0;
  int cluster = 0, clusterFound = 0;
  int entries = 0; ///< entries of sass.tsv
  /// "kernel entry: no 128-bit loads", one per miss.
  std::vector<std::string> misses;
};

/// Checks the kernels of `kernelsDir` (a bundle: manifest.tsv and the
/// specs) against `sassTsv` (GpuRecords.h's readSass); `lint` null: no
/// 128-bit load is claimed. False with `err` for an unreadable or malformed
/// file, or an entry the SASS lacks.
bool checkSassClaims(const std::string &kernelsDir, const std::string &sassTsv,
                     const LintConfig *lint, SassCheck &out, std::string &err);

} // namespace kgen::tools

#endif // KGEN_TOOLS_KGEN_SASSCLAIMS_H
