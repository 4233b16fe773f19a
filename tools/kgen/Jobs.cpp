//===- Jobs.cpp - The kernels a command compiles, compiled in parallel ----===//
#include "Jobs.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <fmt/format.h>
#include <thread>

namespace kgen::tools {

namespace {

template <typename List, typename T> bool contains(const List &l, const T &x) {
  return std::find(l.begin(), l.end(), x) != l.end();
}

std::string opNames() {
  std::vector<std::string> names;
  for (const OpDef &op : registeredOps())
    names.push_back(op.name);
  return llvm::join(names, ", ");
}

} // namespace

std::string tooLong(int64_t length) {
  return fmt::format("length {} is past {}, the longest kgen specializes on; "
                     "rows that long take the dynamic kernel (length 0)",
                     length, kMaxSpecializedLength);
}

std::string lengthTag(const OpDef &op, int64_t length) {
  return length ? fmt::format("{}{}", op.mainDim, length) : "dyn";
}

bool planJobs(const Selection &sel, std::vector<Job> &jobs, std::string &err) {
  jobs.clear();
  for (const std::string &a : sel.archs)
    if (!codegen::findArch(a)) {
      std::vector<std::string> known;
      for (const codegen::Arch &k : codegen::supportedArchs())
        known.push_back(k.name());
      err = fmt::format("unknown arch '{}'; supported: {}", a,
                        llvm::join(known, ", "));
      return false;
    }
  for (const std::string &o : sel.ops)
    if (!findOp(o)) {
      err = fmt::format("unknown op '{}'; the ops: {}", o, opNames());
      return false;
    }
  for (const std::string &d : sel.mainDims)
    if (llvm::none_of(registeredOps(), [&](const OpDef &op) {
          return op.mainDim == d &&
                 (sel.ops.empty() || contains(sel.ops, op.name));
        })) {
      err = fmt::format("--main-dims: no selected op has the main dim '{}'", d);
      return false;
    }
  for (int64_t l : sel.lengths)
    if (l < 0) {
      err = fmt::format("lengths must be >= 0 (0 = dynamic), got {}", l);
      return false;
    }
  for (int64_t l : sel.lengths)
    if (l > kMaxSpecializedLength) {
      err = tooLong(l);
      return false;
    }
  std::vector<std::string> archs;
  for (const std::string &a : sel.archs)
    if (!contains(archs, a))
      archs.push_back(a);
  std::vector<int64_t> lengths = sel.lengths;
  std::sort(lengths.begin(), lengths.end());
  lengths.erase(std::unique(lengths.begin(), lengths.end()), lengths.end());

  for (const std::string &arch : archs)
    for (const OpDef &op : registeredOps()) {
      if ((!sel.ops.empty() && !contains(sel.ops, op.name)) ||
          (!sel.mainDims.empty() && !contains(sel.mainDims, op.mainDim)))
        continue;
      std::vector<int64_t> opLengths = lengths;
      if (!op.lengths.empty()) {
        std::erase_if(opLengths,
                      [&](int64_t l) { return !contains(op.lengths, l); });
        if (opLengths.empty()) {
          opLengths = op.lengths;
          // Said once, where the op was asked for by name.
          if (contains(sel.ops, op.name) && !lengths.empty() &&
              arch == archs.front())
            llvm::errs() << fmt::format(
                "kgen: note: {} is built for {} {} only, none of which "
                "--lengths names: building those\n",
                op.name, op.mainDim,
                llvm::join(llvm::map_range(
                               op.lengths,
                               [](int64_t v) { return std::to_string(v); }),
                           ", "));
        }
      }
      size_t before = jobs.size();
      for (DType dt : op.dtypes)
        for (int64_t len : opLengths) {
          if (!sel.dtypes.empty() && !contains(sel.dtypes, dt))
            continue;
          std::string name = fmt::format("{}_{}_{}_{}", op.name, kgen::name(dt),
                                         lengthTag(op, len), arch);
          jobs.push_back(Job{&op, dt, arch, len, name});
        }
      if (jobs.size() == before && contains(sel.ops, op.name)) {
        std::vector<std::string> dts;
        for (DType dt : op.dtypes)
          dts.emplace_back(kgen::name(dt));
        err = fmt::format("{} has none of the requested dtypes; its dtypes: {}",
                          op.name, llvm::join(dts, ", "));
        return false;
      }
    }
  if (jobs.empty()) {
    err = "the selection builds no kernel (no op has the requested dtypes)";
    return false;
  }
  return true;
}

void compileJobs(std::vector<Job> &jobs, const codegen::CompileOptions &base,
                 codegen::Stage last, unsigned threads,
                 const std::function<void(Job &)> &after) {
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
        j.ok = compiler.compile(k, info, opts, last, j.art, j.error);
      } catch (const std::exception &e) {
        j.error = e.what();
      }
      if (j.ok && after)
        after(j);
    }
  };
  threads = std::max(1u, std::min<unsigned>(threads, jobs.size()));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(work);
  work();
  for (std::thread &t : pool)
    t.join();
}

bool writeFile(const std::string &path, const std::string &text) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (!ec) {
    os << text;
    os.close();
    ec = os.error();
  }
  if (ec) {
    os.clear_error();
    llvm::errs() << "kgen: error: cannot write " << path << ": " << ec.message()
                 << "\n";
    return false;
  }
  return true;
}

bool readJsonFile(const std::string &path, rt::json::Value &out,
                  std::string &err) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf) {
    err = fmt::format("cannot read {}: {}", path, buf.getError().message());
    return false;
  }
  std::string why;
  if (!rt::json::parse((*buf)->getBuffer(), out, why)) {
    err = fmt::format("{}: {}", path, why);
    return false;
  }
  return true;
}

bool makeFolder(const std::string &dir) {
  std::error_code ec = llvm::sys::fs::create_directories(dir);
  if (!ec && !llvm::sys::fs::is_directory(dir))
    ec = std::make_error_code(std::errc::not_a_directory);
  if (ec) {
    llvm::errs() << "kgen: error: cannot create folder " << dir << ": "
                 << ec.message() << "\n";
    return false;
  }
  return true;
}

} // namespace kgen::tools
