//===- GpuRecords.cpp - The tables kgen-fuzz writes on a GPU --------------===//
#include "GpuRecords.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <fmt/format.h>

namespace kgen::tools {

namespace {

constexpr uint64_t kMaxFileBytes = 16 << 20;

/// Each line past the header, split at tabs; false with `err` when a line
/// has fewer than `fields`.
template <typename F>
bool forEachRow(const std::string &path, size_t fields, std::string &err,
                F row) {
  std::string text;
  if (!readSmallFile(path, text, err))
    return false;
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(text).split(lines, '\n', -1, false);
  for (size_t i = 1; i < lines.size(); ++i) {
    llvm::SmallVector<llvm::StringRef> f;
    lines[i].split(f, '\t');
    std::string at = fmt::format("{}:{}: ", path, i + 1);
    if (f.size() < fields) {
      err = at + fmt::format("expected {} tab-separated fields", fields);
      return false;
    }
    if (!row(f, at))
      return false;
  }
  return true;
}

} // namespace

bool readSmallFile(const std::string &path, std::string &out,
                   std::string &err) {
  uint64_t size = 0;
  if (!llvm::sys::fs::is_regular_file(path) ||
      llvm::sys::fs::file_size(path, size) || size > kMaxFileBytes) {
    err = "'" + path + "' is not a readable file of at most 16 MiB";
    return false;
  }
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer) {
    err = "cannot read '" + path + "': " + buffer.getError().message();
    return false;
  }
  out = (*buffer)->getBuffer().str();
  return true;
}

bool readTimes(const std::string &path, std::map<std::string, CaseTimes> &out,
               std::string &err) {
  return forEachRow(path, 8, err, [&](auto &f, const std::string &at) {
    CaseTimes t;
    t.status = f[1].str();
    t.pass = f[1] == "pass";
    if (t.pass &&
        (f[2].getAsDouble(t.bytes) || f[3].getAsDouble(t.cold) ||
         f[4].getAsDouble(t.warm) || f[5].getAsDouble(t.memcpyCold) ||
         f[6].getAsDouble(t.memcpyWarm) || t.cold <= 0 || t.warm <= 0)) {
      err = at + "a passing case needs positive times";
      return false;
    }
    out[f[0].str()] = t;
    return true;
  });
}

bool readNumerics(const std::string &path,
                  std::map<std::string, KernelNumerics> &out,
                  std::string &err) {
  return forEachRow(path, 4, err, [&](auto &f, const std::string &at) {
    KernelNumerics n;
    if (f[1].getAsInteger(10, n.cases) || f[2].getAsInteger(10, n.failed) ||
        f[3].getAsDouble(n.worst) || n.cases < 0 || n.failed < 0 ||
        n.failed > n.cases || !std::isfinite(n.worst) || n.worst < 0) {
      err = at + "expected KERNEL, CASES, FAILED <= CASES, WORST >= 0";
      return false;
    }
    out[f[0].str()] = n;
    return true;
  });
}

bool readSass(const std::string &path,
              std::map<std::pair<std::string, std::string>, SassCounts> &out,
              std::string &err) {
  return forEachRow(path, 5, err, [&](auto &f, const std::string &at) {
    SassCounts c;
    if (f[2].getAsInteger(10, c.loads128) ||
        f[3].getAsInteger(10, c.prefetch) || f[4].getAsInteger(10, c.cluster)) {
      err = at + "expected KERNEL, ENTRY and three counts";
      return false;
    }
    out[{f[0].str(), f[1].str()}] = c;
    return true;
  });
}

} // namespace kgen::tools
