//===- CompileCache.cpp - Compiled kernels kept by content ----------------===//
#include "codegen/Pipeline/CompileCache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <map>
#include <mutex>

namespace kgen::codegen {
namespace {

std::string hex64(uint64_t v) { return llvm::utohexstr(v, true, 16); }

/// The running executable's bytes, hashed once.
const std::string &executableHash() {
  static const std::string hash = [] {
    static int anchor;
    std::string exe = llvm::sys::fs::getMainExecutable(nullptr, &anchor);
    auto buffer = llvm::MemoryBuffer::getFile(exe, /*IsText=*/false);
    // Unreadable: a key no other process shares, so nothing is reused.
    if (exe.empty() || !buffer)
      return "pid" + std::to_string(llvm::sys::Process::getProcessId());
    return hex64(llvm::xxh3_64bits((*buffer)->getBuffer()));
  }();
  return hash;
}

bool readFile(const std::string &path, std::string &out) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return false;
  out = (*buffer)->getBuffer().str();
  return true;
}

void writeAtomically(const std::string &path, const std::string &text) {
  llvm::SmallString<128> temp;
  int fd;
  if (llvm::sys::fs::createUniqueFile(path + ".%%%%%%.tmp", fd, temp))
    return;
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << text;
    os.close();
    if (os.has_error()) {
      os.clear_error();
      llvm::sys::fs::remove(temp);
      return;
    }
  }
  if (llvm::sys::fs::rename(temp, path))
    llvm::sys::fs::remove(temp);
}

} // namespace

std::string compilerIdentity(const std::string &cudaPath) {
  static std::mutex lock;
  static std::map<std::string, std::string> known;
  std::lock_guard<std::mutex> guard(lock);
  auto it = known.find(cudaPath);
  if (it != known.end())
    return it->second;
  llvm::sys::fs::file_status st;
  std::string libdevice = cudaPath + "/nvvm/libdevice/libdevice.10.bc";
  std::string id = executableHash() + "|" + libdevice;
  if (!llvm::sys::fs::status(libdevice, st))
    id +=
        "|" + std::to_string(st.getSize()) + "|" +
        std::to_string(st.getLastModificationTime().time_since_epoch().count());
  return known[cudaPath] = id;
}

std::string cacheName(const std::string &key) {
  llvm::XXH128_hash_t h = llvm::xxh3_128bits(llvm::ArrayRef(
      reinterpret_cast<const uint8_t *>(key.data()), key.size()));
  return hex64(h.high64) + hex64(h.low64);
}

bool readCached(const std::string &dir, const std::string &name, bool withSpec,
                std::string &ptx, std::string &spec) {
  std::string base = dir + "/" + name.substr(0, 2) + "/" + name;
  return readFile(base + ".ptx", ptx) &&
         (!withSpec || readFile(base + ".json", spec));
}

void writeCached(const std::string &dir, const std::string &name,
                 const std::string &ptx, const std::string *spec) {
  std::string sub = dir + "/" + name.substr(0, 2);
  if (llvm::sys::fs::create_directories(sub))
    return;
  std::string base = sub + "/" + name;
  // The spec first: a reader that finds the PTX finds the spec too.
  if (spec)
    writeAtomically(base + ".json", *spec);
  writeAtomically(base + ".ptx", ptx);
}

} // namespace kgen::codegen
