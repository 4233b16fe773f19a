//===- Bundle.cpp - Emit many kernels into a folder -----------------------===//
#include "Bundle.h"

#include "ops/Registry.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fmt/format.h>
#include <thread>

namespace kgen::tools {

static bool writeFile(const std::string &path, const std::string &text) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    llvm::errs() << "kgen: error: cannot write " << path << ": " << ec.message()
                 << "\n";
    return false;
  }
  os << text;
  return true;
}

namespace {

struct Job {
  const ops::OpDef *op;
  DType dtype;
  std::string arch;
  int64_t length;
  std::string name;
  // Results.
  bool ok = false;
  bool first = false; ///< the first kernel of its worker (a fresh context)
  std::string error;
  codegen::Artifact art;
};

} // namespace

int emitBundle(const std::string &dir, const std::vector<std::string> &archs,
               const std::vector<int64_t> &lengths,
               const std::vector<std::string> &ops,
               const std::vector<DType> &dtypes,
               const codegen::CompileOptions &base, unsigned threads) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    llvm::errs() << "kgen: error: cannot create " << dir << ": " << ec.message()
                 << "\n";
    return 1;
  }
  auto wanted = [](const auto &list, const auto &x) {
    return list.empty() || std::find(list.begin(), list.end(), x) != list.end();
  };
  std::vector<Job> jobs;
  for (const std::string &arch : archs)
    for (const ops::OpDef &op : ops::registry())
      for (DType dt : op.dtypes)
        for (int64_t len : op.lengths.empty() ? lengths : op.lengths) {
          if (!wanted(ops, op.name) || !wanted(dtypes, dt) ||
              !op.supportsLength(len))
            continue;
          std::string name = fmt::format(
              "{}_{}_{}_{}", op.name, kgen::name(dt),
              len ? fmt::format("{}{}", op.mainDim, len) : std::string("dyn"),
              arch);
          jobs.push_back(Job{&op, dt, arch, len, name});
        }

  // Kernels are independent: each worker compiles with its own Compiler
  // (MLIR and LLVM contexts); files are written afterwards in job order, so
  // the bundle does not depend on the number of workers.
  auto start = std::chrono::steady_clock::now();
  std::atomic<size_t> next{0};
  auto work = [&] {
    codegen::Compiler compiler;
    bool first = true;
    for (size_t i; (i = next.fetch_add(1)) < jobs.size();) {
      Job &j = jobs[i];
      j.first = first;
      first = false;
      codegen::CompileOptions opts = base;
      opts.arch = j.arch;
      try {
        Kernel k = j.op->instantiate(j.dtype, j.length, opts.dims);
        codegen::KernelInfo info{j.op->name, std::string(kgen::name(j.dtype)),
                                 j.name};
        j.ok = compiler.compile(k, info, opts, codegen::Stage::Spec, j.art,
                                j.error);
      } catch (const std::exception &e) {
        j.error = e.what();
      }
    }
  };
  threads = std::max(1u, std::min<unsigned>(threads, jobs.size()));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(work);
  work();
  for (std::thread &t : pool)
    t.join();
  double total = std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - start)
                     .count();

  std::string manifest = "# name\top\tdtype\tarch\tlength\tmillis\n";
  std::vector<double> firsts, later;
  int failures = 0;
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
        "the rest {:.2f} ms), {} failed\n",
        firsts.size() + later.size(), total, threads, firsts[0], median,
        failures);
  }
  return failures;
}

} // namespace kgen::tools
