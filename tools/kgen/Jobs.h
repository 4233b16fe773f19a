//===- Jobs.h - The kernels a command compiles, compiled in parallel -*- C++
//-*-===//
#ifndef KGEN_TOOLS_KGEN_JOBS_H
#define KGEN_TOOLS_KGEN_JOBS_H

#include "codegen/Pipeline/Pipeline.h"
#include "dsl/Registry.h"
#include "runtime/Json.h"

#include <functional>
#include <string>
#include <vector>

namespace kgen::tools {

/// A specialized kernel unrolls its row: longer rows take the dynamic kernel,
/// which any length fits (and compile time and memory stay bounded).
inline constexpr int64_t kMaxSpecializedLength = int64_t(1) << 20;
/// The error for a length past kMaxSpecializedLength.
std::string tooLong(int64_t length);

/// What to compile: empty ops / dtypes mean all; length 0 is the dynamic
/// kernel. An op built for fixed lengths takes those of `lengths` it has,
/// or all of its own when `lengths` names none of them.
struct Selection {
  std::vector<std::string> archs;
  std::vector<int64_t> lengths;
  std::vector<std::string> ops;
  std::vector<DType> dtypes;
  /// Non-empty: only the ops whose main dim (OpDef::mainDim) is one of these.
  std::vector<std::string> mainDims;
};

struct Job {
  const OpDef *op;
  DType dtype;
  std::string arch;
  int64_t length;
  std::string name; ///< OP_DTYPE_{MAINDIM}{LENGTH}|dyn_ARCH
  // Results.
  bool ok = false;
  bool first = false; ///< the first kernel of its worker (a fresh context)
  std::string error;
  codegen::Artifact art;
};

/// The jobs of `sel`, in a fixed order (arch, op, dtype, length). Unknown
/// names and a selection that builds nothing are errors (false, `err`).
bool planJobs(const Selection &sel, std::vector<Job> &jobs, std::string &err);

/// "hidden4096" or "dyn": a kernel's length in file and symbol names.
std::string lengthTag(const OpDef &op, int64_t length);

/// Compiles every job up to `last` on `threads` threads, each with its own
/// Compiler (MLIR and LLVM contexts); results do not depend on the count.
/// `after`, when set, runs on the worker right after a job compiled.
void compileJobs(std::vector<Job> &jobs, const codegen::CompileOptions &base,
                 codegen::Stage last, unsigned threads,
                 const std::function<void(Job &)> &after = {});

/// Writes `text` to `path`; on failure prints "kgen: error: cannot write ..."
/// and returns false.
bool writeFile(const std::string &path, const std::string &text);
/// Reads and parses the JSON file `path` (the runtime's strict reader, with
/// its size and depth caps); false with `err` ("PATH: line L, ...").
bool readJsonFile(const std::string &path, rt::json::Value &out,
                  std::string &err);
/// Creates folder `dir` and its parents, or prints why not.
bool makeFolder(const std::string &dir);

} // namespace kgen::tools

#endif // KGEN_TOOLS_KGEN_JOBS_H
