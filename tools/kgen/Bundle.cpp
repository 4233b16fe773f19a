//===- Bundle.cpp - Emit many kernels into a folder -----------------------===//
#include "Bundle.h"

#include "ops/Registry.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>

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

int emitBundle(const std::string &dir, const std::vector<std::string> &archs,
               const std::vector<int64_t> &lengths,
               const std::vector<std::string> &ops,
               const std::vector<DType> &dtypes,
               const codegen::CompileOptions &base) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    llvm::errs() << "kgen: error: cannot create " << dir << ": " << ec.message()
                 << "\n";
    return 1;
  }
  codegen::Compiler compiler;
  std::string manifest = "# name\top\tdtype\tarch\tlength\tmillis\n";
  std::vector<double> times;
  int failures = 0;
  auto start = std::chrono::steady_clock::now();
  for (const std::string &arch : archs)
    for (const ops::OpDef &op : ops::registry())
      for (DType dt : op.dtypes)
        for (int64_t len : op.lengths.empty() ? lengths : op.lengths) {
          auto wanted = [](const auto &list, const auto &x) {
            return list.empty() ||
                   std::find(list.begin(), list.end(), x) != list.end();
          };
          if (!wanted(ops, op.name) || !wanted(dtypes, dt) ||
              !op.supportsLength(len))
            continue;
          std::string name = fmt::format(
              "{}_{}_{}_{}", op.name, kgen::name(dt),
              len ? fmt::format("{}{}", op.mainDim, len) : std::string("dyn"),
              arch);
          codegen::CompileOptions opts = base;
          opts.arch = arch;
          Kernel k = op.instantiate(dt, len, opts.dims);
          codegen::KernelInfo info{op.name, std::string(kgen::name(dt)), name};
          codegen::Artifact art;
          std::string error;
          if (!compiler.compile(k, info, opts, codegen::Stage::Spec, art,
                                error)) {
            llvm::errs() << "kgen: error: " << name << ": " << error << "\n";
            ++failures;
            continue;
          }
          if (!writeFile(dir + "/" + name + ".ptx", art.ptx) ||
              !writeFile(dir + "/" + name + ".json", art.spec)) {
            ++failures;
            continue;
          }
          times.push_back(art.millis);
          manifest += fmt::format("{}\t{}\t{}\t{}\t{}\t{:.2f}\n", name, op.name,
                                  kgen::name(dt), arch, len, art.millis);
          llvm::outs() << fmt::format(
              "  {:<44} {:7.2f} ms  (kgen {:.1f}, gpu {:.1f}, llvm {:.1f}, "
              "ptx {:.1f}, spec {:.1f})\n",
              name, art.millis, art.stageMillis[0], art.stageMillis[1],
              art.stageMillis[2], art.stageMillis[3], art.stageMillis[4]);
        }
  double total = std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - start)
                     .count();
  if (!writeFile(dir + "/manifest.tsv", manifest))
    ++failures;
  if (!times.empty()) {
    std::vector<double> later(times.begin() + 1, times.end());
    std::sort(later.begin(), later.end());
    double median = later.empty() ? times[0] : later[later.size() / 2];
    llvm::outs() << fmt::format(
        "{} kernels in {:.0f} ms (first {:.1f} ms, median of the rest {:.2f} "
        "ms), {} failed\n",
        times.size(), total, times[0], median, failures);
  }
  return failures;
}

} // namespace kgen::tools
