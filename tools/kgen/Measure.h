//===- Measure.h - ptxas and cuobjdump numbers per kernel -----*- C++ -*-===//
//
// The artifact metrics that `kgen lint` checks and `kgen baseline`/`kgen diff`
// record: per kernel its PTX lines and hash, and per entry (variant) the
// registers, stack, spills and shared memory that `ptxas -v` reports, and the
// SASS instruction count where cuobjdump is found.
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_TOOLS_KGEN_MEASURE_H
#define KGEN_TOOLS_KGEN_MEASURE_H

#include "Jobs.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kgen::tools {

struct EntryMetrics {
  std::string variant; ///< the entry's name past the kernel's ("vec_hold4")
  int64_t registers = 0, barriers = 0, stackBytes = 0, spillStores = 0,
          spillLoads = 0, sharedBytes = 0;
  int64_t sassInstructions = -1; ///< -1: not measured (no cuobjdump)
  std::string ptx, sass;         ///< the entry's text, for lint's patterns
};

struct KernelMetrics {
  std::string name, op, dtype, arch;
  int64_t length = 0;
  int64_t ptxLines = 0;
  uint64_t ptxHash = 0; ///< FNV-1a of the PTX: tells a changed kernel
  std::vector<EntryMetrics> entries;
};

/// The named numbers of an entry, in a fixed order: the keys of lint's
/// `max` limits and of the baseline file.
struct MetricField {
  const char *key;
  int64_t EntryMetrics::*field;
};
const std::vector<MetricField> &entryFields();

/// An entry's variant: its name past the kernel's and "_" ("vec_hold4"), or
/// the whole name where it does not start so.
std::string entryVariant(const std::string &kernel, const std::string &entry);

/// Parses `ptxas -v` output into one EntryMetrics per "Compiling entry
/// function" (variant = the name past `base` + "_"). False with `err` when
/// an entry's lines are missing.
bool parsePtxasReport(const std::string &report, const std::string &base,
                      std::vector<EntryMetrics> &out, std::string &err);

/// The text of each `.entry NAME(` of a PTX module, by name.
std::map<std::string, std::string> ptxEntries(const std::string &ptx);
/// The text of each "Function : NAME" of `cuobjdump -sass`, by name.
std::map<std::string, std::string> sassFunctions(const std::string &sass);
/// Instructions in a function's SASS (lines with a "/*0010*/" address).
int64_t countSassInstructions(const std::string &function);

struct MeasureOptions {
  std::string ptxas;     ///< required
  std::string cuobjdump; ///< "" : SASS not measured
  bool keepText = false; ///< keep each entry's PTX and SASS (lint)
  /// Kernels measured before with this ptxas and no cuobjdump (a baseline's),
  /// by name: one whose PTX hashes the same takes their numbers and skips
  /// ptxas, which gives the same PTX the same numbers.
  const std::map<std::string, const KernelMetrics *> *known = nullptr;
};

/// Compiles `jobs` and measures each one that compiled; a kernel that fails
/// to compile or assemble keeps ok = false and its error. `out` is in job
/// order, one per job that succeeded. Returns how many took `known` numbers.
size_t measureJobs(std::vector<Job> &jobs, const codegen::CompileOptions &base,
                   unsigned threads, const MeasureOptions &opts,
                   std::vector<KernelMetrics> &out);

} // namespace kgen::tools

#endif // KGEN_TOOLS_KGEN_MEASURE_H
