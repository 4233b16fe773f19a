//===- Bundle.cpp - Emit many kernels into a folder -----------------------===//
#include "Bundle.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>

namespace kgen::tools {

int emitBundle(const std::string &dir, const Selection &sel,
               const codegen::CompileOptions &base, unsigned threads) {
  std::vector<Job> jobs;
  std::string err;
  if (!planJobs(sel, jobs, err)) {
    llvm::errs() << "kgen: error: " << err << "\n";
    return 1;
  }
  if (!makeFolder(dir))
    return 1;
  auto start = std::chrono::steady_clock::now();
  compileJobs(jobs, base, codegen::Stage::Spec, threads);
  double total = std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - start)
                     .count();
  threads = std::max(1u, std::min<unsigned>(threads, jobs.size()));

  std::string manifest = "# name\top\tdtype\tarch\tlength\tmillis\n";
  std::vector<double> firsts, later;
  int failures = 0, cached = 0;
  for (Job &j : jobs) {
    if (!j.ok) {
      llvm::errs() << "kgen: error: " << j.name << ": " << j.error << "\n";
      ++failures;
      continue;
    }
    if (!writeFile(dir + "/" + j.name + ".ptx", j.art.ptx) ||
        !writeFile(dir + "/" + j.name + ".json", j.art.spec)) {
      ++failures;
      continue;
    }
    (j.first ? firsts : later).push_back(j.art.millis);
    cached += j.art.cached;
    manifest +=
        fmt::format("{}\t{}\t{}\t{}\t{}\t{:.2f}\n", j.name, j.op->name,
                    kgen::name(j.dtype), j.arch, j.length, j.art.millis);
    const double *s = j.art.stageMillis;
    llvm::outs() << fmt::format(
        "  {:<44} {:7.2f} ms  (kgen {:.1f}, gpu {:.1f}, llvm {:.1f}, "
        "ptx {:.1f}, spec {:.1f})\n",
        j.name, j.art.millis, s[0], s[1], s[2], s[3], s[4]);
  }
  if (!writeFile(dir + "/manifest.tsv", manifest))
    ++failures;
  if (!firsts.empty()) {
    std::sort(later.begin(), later.end());
    double median = later.empty() ? firsts[0] : later[later.size() / 2];
    llvm::outs() << fmt::format(
        "{} kernels in {:.0f} ms on {} thread(s) (first {:.1f} ms, median of "
        "the rest {:.2f} ms), {} from the cache, {} failed\n",
        firsts.size() + later.size(), total, threads, firsts[0], median, cached,
        failures);
  }
  return failures;
}

} // namespace kgen::tools
