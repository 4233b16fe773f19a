//===- GpuRecords.h - The tables kgen-fuzz writes on a GPU ------*- C++ -*-===//
//
// kgen runs where LLVM is, kgen-fuzz where the GPU is; they meet in two
// tab-separated tables. `kgen-fuzz time` writes a case's times (kgen tune
// reads them; a baseline stores them), `kgen-fuzz run --report` each
// kernel's numerics over a fixed fuzz set (a baseline stores them), and
// bench/tune_check.sh each entry's counts of SASS instructions (kgen tune).
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_TOOLS_KGEN_GPURECORDS_H
#define KGEN_TOOLS_KGEN_GPURECORDS_H

#include <cstdint>
#include <map>
#include <string>

namespace kgen::tools {

/// A row of `kgen-fuzz time`: case, status, bytes, cold_us, warm_us,
/// memcpy_cold_us, memcpy_warm_us, note.
struct CaseTimes {
  bool pass = false;
  std::string status;
  double bytes = 0, cold = 0, warm = 0, memcpyCold = 0, memcpyWarm = 0;
};

/// A row of `kgen-fuzz run --report`: kernel, cases, failed, worst, where
/// worst is the largest |got - ref| / tolerance over the kernel's cases.
struct KernelNumerics {
  int64_t cases = 0, failed = 0;
  double worst = 0;
};

/// A row of tune_check.sh's sass.tsv: kernel, entry, then the entry's
/// 128-bit global loads, L2 prefetches and cluster barriers in its SASS.
struct SassCounts {
  int64_t loads128 = 0, prefetch = 0, cluster = 0;
};

/// Reads a table, keyed by its first column (sass.tsv: by kernel and entry);
/// false with `err` ("FILE:LINE:
/// ...") for a file that is not one, or past 16 MiB.
bool readTimes(const std::string &path, std::map<std::string, CaseTimes> &out,
               std::string &err);
bool readNumerics(const std::string &path,
                  std::map<std::string, KernelNumerics> &out, std::string &err);
bool readSass(const std::string &path,
              std::map<std::pair<std::string, std::string>, SassCounts> &out,
              std::string &err);

/// A regular file of at most 16 MiB, read whole; false with `err`.
bool readSmallFile(const std::string &path, std::string &out, std::string &err);

} // namespace kgen::tools

#endif // KGEN_TOOLS_KGEN_GPURECORDS_H
