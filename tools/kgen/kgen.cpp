//===- kgen.cpp - The kgen command line -----------------------------------===//
//
//   kgen list
//   kgen emit OP --arch sm_90 --dtype bf16 [--hidden N] --emit=ptx [-o FILE]
//   kgen bundle -o DIR [--arch sm_90,...] [--lengths 0,4096,...]
//
//===----------------------------------------------------------------------===//
#include "Bundle.h"

#include "codegen/Pipeline/Pipeline.h"
#include "ops/Registry.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>
#include <thread>

namespace cl = llvm::cl;
using namespace kgen;

static cl::SubCommand listCmd("list", "List the bundled ops");
static cl::SubCommand emitCmd("emit", "Compile one op and print a stage");
static cl::SubCommand
    bundleCmd("bundle",
              "Compile every op x dtype for archs and lengths into a folder");

static cl::OptionCategory cat("kgen options");

static cl::opt<std::string> opName(cl::Positional, cl::desc("<op>"),
                                   cl::sub(emitCmd));
static cl::opt<std::string> arch("arch",
                                 cl::desc("Target GPU (sm_75, sm_80, sm_86, "
                                          "sm_89, sm_90, sm_90a, sm_100)"),
                                 cl::init("sm_90"), cl::sub(emitCmd),
                                 cl::cat(cat));
static cl::opt<std::string> dtype("dtype",
                                  cl::desc("Data type: f32, f16, bf16"),
                                  cl::init("bf16"), cl::sub(emitCmd),
                                  cl::cat(cat));
static cl::opt<int64_t>
    hidden("hidden",
           cl::desc("Specialize on this row length (the op's main dim); "
                    "without it the kernel takes the length at run time"),
           cl::init(0), cl::sub(emitCmd), cl::cat(cat));
static cl::list<std::string>
    dimValues("dim", cl::desc("Specialize a dim: --dim NAME=VALUE"),
              cl::sub(emitCmd), cl::cat(cat));
static cl::opt<codegen::Stage> emitStage(
    "emit", cl::desc("The stage to print"), cl::init(codegen::Stage::Ptx),
    cl::values(
        clEnumValN(codegen::Stage::Kgen, "kgen",
                   "the kgen dialect, scheduled and vectorized"),
        clEnumValN(codegen::Stage::Gpu, "gpu", "gpu.func kernels"),
        clEnumValN(codegen::Stage::Llvm, "llvm", "the nvvm/llvm dialects"),
        clEnumValN(codegen::Stage::Ptx, "ptx", "PTX"),
        clEnumValN(codegen::Stage::Spec, "spec", "the JSON launch spec")),
    cl::sub(emitCmd), cl::cat(cat));
static cl::opt<std::string>
    output("o", cl::desc("Output file (emit) or folder (bundle)"),
           cl::value_desc("path"), cl::init("-"), cl::sub(emitCmd),
           cl::sub(bundleCmd), cl::cat(cat));
static cl::opt<int64_t> threadsPerRow(
    "threads-per-row", cl::desc("Override the schedule's threads per row"),
    cl::init(0), cl::sub(emitCmd), cl::sub(bundleCmd), cl::cat(cat));
static cl::opt<int64_t> rowsPerBlock(
    "rows-per-block", cl::desc("Override the schedule's rows per block"),
    cl::init(0), cl::sub(emitCmd), cl::sub(bundleCmd), cl::cat(cat));
static cl::opt<bool>
    debugIR("debug-ir",
            cl::desc("Print the IR after every pass and pass timings"),
            cl::init(false), cl::sub(emitCmd), cl::cat(cat));
static cl::opt<std::string> cudaPath("cuda-path",
                                     cl::desc("CUDA toolkit (for libdevice)"),
                                     cl::init("/usr/local/cuda"),
                                     cl::sub(emitCmd), cl::sub(bundleCmd),
                                     cl::cat(cat));
static cl::list<std::string> bundleArchs("archs",
                                         cl::desc("Archs to compile for"),
                                         cl::CommaSeparated, cl::sub(bundleCmd),
                                         cl::cat(cat));
static cl::list<int64_t>
    bundleLengths("lengths",
                  cl::desc("Row lengths (the op's main dim) to specialize "
                           "on; 0 = the dynamic kernel"),
                  cl::CommaSeparated, cl::sub(bundleCmd), cl::cat(cat));

static cl::list<std::string>
    bundleOps("ops", cl::desc("Ops to compile (default: all)"),
              cl::CommaSeparated, cl::sub(bundleCmd), cl::cat(cat));
static cl::opt<unsigned>
    bundleJobs("jobs",
               cl::desc("Threads compiling the bundle (default: every core)"),
               cl::init(0), cl::sub(bundleCmd), cl::cat(cat));
static cl::list<std::string>
    bundleDtypes("dtypes", cl::desc("Dtypes to compile (default: each op's)"),
                 cl::CommaSeparated, cl::sub(bundleCmd), cl::cat(cat));

static int fail(const std::string &msg) {
  llvm::errs() << "kgen: error: " << msg << "\n";
  return 1;
}

static std::string archList() {
  std::vector<std::string> names;
  for (const codegen::Arch &a : codegen::supportedArchs())
    names.push_back(a.name);
  return llvm::join(names, ", ");
}

static int runList() {
  for (const ops::OpDef &op : ops::registry())
    llvm::outs() << fmt::format("{:<20} {}\n", op.name, op.summary);
  return 0;
}

static int runEmit() {
  if (opName.empty())
    return fail("emit needs an op name; `kgen list` shows them");
  const ops::OpDef *op = ops::findOp(opName);
  if (!op)
    return fail(fmt::format("unknown op '{}'; `kgen list` shows the ops",
                            opName.getValue()));
  if (!codegen::findArch(arch))
    return fail(fmt::format("unknown arch '{}'; supported: {}", arch.getValue(),
                            archList()));
  std::optional<DType> dt = parseDType(dtype);
  if (!dt ||
      std::find(op->dtypes.begin(), op->dtypes.end(), *dt) == op->dtypes.end())
    return fail(fmt::format("'{}' is not a dtype of {}; use f32, f16 or bf16",
                            dtype.getValue(), op->name));
  codegen::CompileOptions opts;
  opts.arch = arch;
  opts.threadsPerRow = threadsPerRow;
  opts.rowsPerBlock = rowsPerBlock;
  opts.cudaPath = cudaPath;
  opts.debugIR = debugIR;
  int64_t length = 0;
  if (hidden.getNumOccurrences()) {
    if (hidden < 1)
      return fail(
          fmt::format("--hidden must be >= 1, got {}", hidden.getValue()));
    length = hidden;
  }
  if (!op->supportsLength(length))
    return fail(fmt::format(
        "{} is built for {} in {{{}}} only; pass --hidden with one of them",
        op->name, op->mainDim,
        llvm::join(llvm::map_range(op->lengths,
                                   [](int64_t v) { return std::to_string(v); }),
                   ", ")));
  try {
    Kernel k = op->instantiate(*dt, length, opts.dims);
    for (const std::string &dv : dimValues) {
      auto [name, value] = llvm::StringRef(dv).split('=');
      int64_t v;
      if (value.getAsInteger(10, v) || v < 1)
        return fail(fmt::format(
            "--dim expects NAME=VALUE with VALUE >= 1, got '{}'", dv));
      if (std::find(k.dims.begin(), k.dims.end(), name.str()) == k.dims.end())
        return fail(fmt::format("{} has no dim '{}'; its dims: {}", op->name,
                                name.str(), llvm::join(k.dims, ", ")));
      opts.dims[name.str()] = v;
    }
    std::string entry = fmt::format("{}_{}", op->name, dtype.getValue());
    codegen::KernelInfo info{op->name, dtype, entry};
    codegen::Compiler compiler;
    codegen::Artifact art;
    std::string error;
    if (!compiler.compile(k, info, opts, emitStage, art, error))
      return fail(error);
    const std::string *text[] = {&art.kgen, &art.gpu, &art.llvm, &art.ptx,
                                 &art.spec};
    std::error_code ec;
    llvm::raw_fd_ostream os(output, ec);
    if (ec)
      return fail(
          fmt::format("cannot write {}: {}", output.getValue(), ec.message()));
    os << *text[(int)emitStage.getValue()];
  } catch (const UserError &e) {
    return fail(e.what());
  }
  return 0;
}

static int runBundle() {
  if (output == "-")
    return fail("bundle needs an output folder: -o DIR");
  std::vector<std::string> archs(bundleArchs.begin(), bundleArchs.end());
  if (archs.empty())
    archs.push_back("sm_90");
  for (const std::string &a : archs)
    if (!codegen::findArch(a))
      return fail(
          fmt::format("unknown arch '{}'; supported: {}", a, archList()));
  std::vector<int64_t> lengths(bundleLengths.begin(), bundleLengths.end());
  if (lengths.empty())
    lengths = {0, 4096};
  for (int64_t l : lengths)
    if (l < 0)
      return fail(
          fmt::format("--lengths must be >= 0 (0 = dynamic), got {}", l));
  std::vector<std::string> ops(bundleOps.begin(), bundleOps.end());
  for (const std::string &o : ops)
    if (!ops::findOp(o))
      return fail(fmt::format("unknown op '{}'; `kgen list` shows the ops", o));
  std::vector<DType> dtypes;
  for (const std::string &d : bundleDtypes) {
    std::optional<DType> dt = parseDType(d);
    if (!dt)
      return fail(fmt::format("unknown dtype '{}'; use f32, f16 or bf16", d));
    dtypes.push_back(*dt);
  }
  codegen::CompileOptions opts;
  opts.threadsPerRow = threadsPerRow;
  opts.rowsPerBlock = rowsPerBlock;
  opts.cudaPath = cudaPath;
  try {
    unsigned jobs = bundleJobs
                        ? unsigned(bundleJobs)
                        : std::max(1u, std::thread::hardware_concurrency());
    return tools::emitBundle(output, archs, lengths, ops, dtypes, opts, jobs)
               ? 1
               : 0;
  } catch (const UserError &e) {
    return fail(e.what());
  }
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(cat);
  cl::ParseCommandLineOptions(
      argc, argv,
      "kgen: fused GPU row kernels from a C++ DSL\n\n"
      "  kgen list                          the bundled ops\n"
      "  kgen emit rmsnorm --arch sm_90 --dtype bf16 --hidden 4096 --emit=ptx\n"
      "  kgen bundle -o kernels --archs sm_90 --lengths 0,4096\n");
  if (listCmd)
    return runList();
  if (emitCmd)
    return runEmit();
  if (bundleCmd)
    return runBundle();
  return fail("expected a command: list, emit or bundle (see kgen --help)");
}
