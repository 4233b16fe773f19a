//===- Toolkit.cpp - The CUDA toolkit's ptxas and cuobjdump ---------------===//
#include "Toolkit.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

namespace kgen::tools {

namespace {

/// Temporary files removed on destruction.
struct TempFiles {
  llvm::SmallVector<llvm::SmallString<128>, 4> paths;
  ~TempFiles() {
    for (auto &p : paths)
      llvm::sys::fs::remove(p);
  }
  /// A new temporary file; "" when it cannot be made.
  llvm::StringRef make(llvm::StringRef suffix) {
    llvm::SmallString<128> p;
    if (llvm::sys::fs::createTemporaryFile("kgen", suffix, p))
      return "";
    paths.push_back(p);
    return paths.back();
  }
};

bool writeBytes(llvm::StringRef path, const std::string &bytes) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  os << bytes;
  os.close();
  bool ok = !ec && !os.has_error();
  os.clear_error();
  return ok;
}

std::string readBytes(llvm::StringRef path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  return buf ? (*buf)->getBuffer().str() : "";
}

/// Runs argv with stdout and stderr into `log`; false with `err` ("(exit 1):
/// the log") when it does not exit 0.
bool run(llvm::ArrayRef<llvm::StringRef> argv, llvm::StringRef log,
         std::string &err) {
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log, log};
  std::string execErr;
  int rc = llvm::sys::ExecuteAndWait(argv[0], argv, std::nullopt, redirects, 0,
                                     0, &execErr);
  if (rc == 0)
    return true;
  err = fmt::format("({}): {}",
                    execErr.empty() ? "exit " + std::to_string(rc) : execErr,
                    llvm::StringRef(readBytes(log)).trim().str());
  return false;
}

} // namespace

std::string findTool(const std::string &name, const std::string &explicitPath,
                     const std::string &cudaPath, std::string &why) {
  if (!explicitPath.empty()) {
    if (llvm::sys::fs::can_execute(explicitPath))
      return explicitPath;
    why = fmt::format("--{} {} is not an executable", name, explicitPath);
    return "";
  }
  llvm::SmallString<256> inCuda(cudaPath);
  llvm::sys::path::append(inCuda, "bin", name);
  if (llvm::sys::fs::can_execute(inCuda))
    return std::string(inCuda);
  if (auto onPath = llvm::sys::findProgramByName(name))
    return *onPath;
  why = fmt::format("no {} in {}/bin or on PATH", name, cudaPath);
  return "";
}

bool runPtxas(const std::string &ptxas, const std::string &arch,
              const std::string &ptx, bool verbose, std::string &cubin,
              std::string &report, std::string &err) {
  TempFiles tmp;
  llvm::StringRef in = tmp.make("ptx"), out = tmp.make("cubin"),
                  log = tmp.make("log");
  if (in.empty() || out.empty() || log.empty() || !writeBytes(in, ptx)) {
    err = "cannot write a temporary file for ptxas";
    return false;
  }
  std::string archFlag = "-arch=" + arch;
  llvm::SmallVector<llvm::StringRef> argv = {ptxas, archFlag};
  if (verbose)
    argv.push_back("-v");
  argv.append({"-o", out, in});
  if (!run(argv, log, err)) {
    err = "ptxas " + archFlag + " failed " + err;
    return false;
  }
  cubin = readBytes(out);
  if (cubin.empty()) {
    err = "cannot read ptxas's output";
    return false;
  }
  if (verbose)
    report = readBytes(log);
  return true;
}

bool runCuobjdump(const std::string &cuobjdump, const std::string &cubin,
                  std::string &sass, std::string &err) {
  TempFiles tmp;
  llvm::StringRef in = tmp.make("cubin"), log = tmp.make("sass");
  if (in.empty() || log.empty() || !writeBytes(in, cubin)) {
    err = "cannot write a temporary file for cuobjdump";
    return false;
  }
  if (!run({cuobjdump, "-sass", in}, log, err)) {
    err = "cuobjdump -sass failed " + err;
    return false;
  }
  sass = readBytes(log);
  return true;
}

std::string toolVersion(const std::string &tool) {
  TempFiles tmp;
  llvm::StringRef log = tmp.make("txt");
  std::string err;
  if (log.empty() || !run({tool, "--version"}, log, err))
    return "";
  // `lines` points into the text, so it must outlive them (not a temporary).
  std::string text = readBytes(log);
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(text).trim().split(lines, '\n');
  for (llvm::StringRef l : lines)
    if (l.starts_with("Build "))
      return l.trim().str();
  return lines.empty() ? "" : lines.back().trim().str();
}

} // namespace kgen::tools
