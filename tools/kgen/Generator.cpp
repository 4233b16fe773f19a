//===- Generator.cpp - The kgen command line over the registered ops ------===//
//
//   kgen list
//   kgen emit OP --arch sm_90 --dtype bf16 [--hidden N] --emit=ptx [-o FILE]
//   kgen bundle -o DIR [--archs sm_90,...] [--lengths 0,4096,...]
//   kgen aot -o DIR --name LIB [--archs ...] [--lengths ...] [--ops ...]
//   kgen lint --config FILE [--archs ...] [--lengths ...] [--ops ...]
//   kgen baseline save FILE [--archs ...] [--lengths ...] [--ops ...]
//                           [--numerics TABLE] [--times TABLE]
//   kgen diff FILE [--fail-on-regression] [--config FILE] [--numerics TABLE]
//                  [--times TABLE]
//
// The shipped kgen is this program linked with ops/; a user's generator is
// the same program linked with the user's op files.
//
//===----------------------------------------------------------------------===//
#include "tools/kgen/Generator.h"

#include "Aot.h"
#include "Baseline.h"
#include "Bundle.h"
#include "Jobs.h"
#include "Lint.h"
#include "Tune.h"

#include "codegen/Pipeline/Pipeline.h"
#include "dsl/Registry.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <fmt/format.h>
#include <thread>

namespace cl = llvm::cl;
using namespace kgen;

static cl::SubCommand listCmd("list", "List the registered ops");
static cl::SubCommand emitCmd("emit", "Compile one op and print a stage");
static cl::SubCommand
    bundleCmd("bundle",
              "Compile every op x dtype for archs and lengths into a folder");
static cl::SubCommand
    aotCmd("aot", "Compile ops into a C library: NAME.h, NAME.c, NAME.hpp with "
                  "embedded PTX and cubins and typed launch functions");

static cl::SubCommand
    lintCmd("lint", "Check each kernel's ptxas numbers and PTX/SASS against "
                    "the rules of a JSON file");
static cl::SubCommand
    baselineCmd("baseline",
                "baseline save FILE: store each kernel's artifact metrics");
static cl::SubCommand
    diffCmd("diff",
            "diff FILE: measure a baseline's kernels again, show what changed");
static cl::SubCommand
    profileCmd("profile", "profile [NAME|FILE]: the built-in tuning profiles, "
                          "or one profile's pass pipelines");
static cl::SubCommand
    tuneCmd("tune", "tune plan RUN --space FILE: candidate profiles' bundles "
                    "and cases to time; tune pick RUN: the winners");

static cl::OptionCategory cat("kgen options");

static cl::opt<bool> listCMake(
    "cmake",
    cl::desc("Print the names kgen_add_library checks at configure time (the "
             "archs, dtypes and ops) as CMake"),
    cl::init(false), cl::sub(listCmd), cl::cat(cat));

static cl::opt<std::string> opName(cl::Positional, cl::desc("<op>"),
                                   cl::sub(emitCmd));
static cl::opt<std::string> arch("arch",
                                 cl::desc("Target GPU (sm_75, sm_80, sm_86, "
                                          "sm_89, sm_90, sm_90a, sm_100)"),
                                 cl::init("sm_90"), cl::sub(emitCmd),
                                 cl::sub(profileCmd), cl::cat(cat));
static cl::list<std::string>
    tuneArgs(cl::Positional, cl::desc("plan RUN | pick RUN"), cl::sub(tuneCmd));
static cl::opt<std::string>
    tuneSpace("space",
              cl::desc("tune plan: a JSON file of {pass: {option: [values]}} "
                       "to try, one change at a time"),
              cl::value_desc("file"), cl::sub(tuneCmd), cl::cat(cat));
static cl::list<int64_t> tuneRows("rows",
                                  cl::desc("tune plan: the rows of each case"),
                                  cl::CommaSeparated, cl::sub(tuneCmd),
                                  cl::cat(cat));
static cl::opt<double> tuneNoise(
    "noise",
    cl::desc("tune pick: the least relative change that counts (raised to "
             "the base's spread between its two runs)"),
    cl::init(0.02), cl::sub(tuneCmd), cl::cat(cat));
static cl::opt<std::string> profileArg(cl::Positional,
                                       cl::desc("[profile name or file]"),
                                       cl::sub(profileCmd));
static cl::opt<std::string> cacheDir(
    "cache-dir",
    cl::desc("Keep compiled kernels in this folder, by content, and reuse "
             "them (default: $KGEN_CACHE_DIR; none when unset)"),
    cl::value_desc("dir"), cl::sub(emitCmd), cl::sub(bundleCmd),
    cl::sub(aotCmd), cl::sub(lintCmd), cl::sub(baselineCmd), cl::sub(diffCmd),
    cl::sub(tuneCmd), cl::cat(cat));
static cl::opt<std::string> profileOption(
    "profile",
    cl::desc("Tuning profile: a built-in one's name (kgen profile lists "
             "them) or a JSON file; without it each arch takes its own"),
    cl::value_desc("name|file"), cl::sub(emitCmd), cl::sub(bundleCmd),
    cl::sub(aotCmd), cl::sub(lintCmd), cl::sub(baselineCmd), cl::sub(diffCmd),
    cl::sub(tuneCmd), cl::cat(cat));
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
    output("o", cl::desc("Output file (emit) or folder (bundle, aot)"),
           cl::value_desc("path"), cl::init("-"), cl::sub(emitCmd),
           cl::sub(bundleCmd), cl::sub(aotCmd), cl::cat(cat));
static cl::opt<int64_t>
    threadsPerRow("threads-per-row",
                  cl::desc("Override the schedule's threads per row"),
                  cl::init(0), cl::sub(emitCmd), cl::sub(bundleCmd),
                  cl::sub(aotCmd), cl::cat(cat));
static cl::opt<int64_t>
    rowsPerBlock("rows-per-block",
                 cl::desc("Override the schedule's rows per block"),
                 cl::init(0), cl::sub(emitCmd), cl::sub(bundleCmd),
                 cl::sub(aotCmd), cl::cat(cat));
static cl::opt<bool>
    debugIR("debug-ir",
            cl::desc("Print the IR after every pass and pass timings"),
            cl::init(false), cl::sub(emitCmd), cl::cat(cat));
static cl::opt<std::string>
    cudaPath("cuda-path", cl::desc("CUDA toolkit (for libdevice)"),
             cl::init("/usr/local/cuda"), cl::sub(emitCmd), cl::sub(bundleCmd),
             cl::sub(aotCmd), cl::sub(lintCmd), cl::sub(baselineCmd),
             cl::sub(diffCmd), cl::sub(tuneCmd), cl::cat(cat));
static cl::list<std::string>
    bundleArchs("archs", cl::desc("Archs to compile for"), cl::CommaSeparated,
                cl::sub(bundleCmd), cl::sub(aotCmd), cl::sub(lintCmd),
                cl::sub(baselineCmd), cl::sub(tuneCmd), cl::cat(cat));
static cl::list<int64_t>
    bundleLengths("lengths",
                  cl::desc("Row lengths (the op's main dim) to specialize "
                           "on; 0 = the dynamic kernel"),
                  cl::CommaSeparated, cl::sub(bundleCmd), cl::sub(aotCmd),
                  cl::sub(lintCmd), cl::sub(baselineCmd), cl::sub(tuneCmd),
                  cl::cat(cat));

static cl::list<std::string>
    bundleOps("ops", cl::desc("Ops to compile (default: all)"),
              cl::CommaSeparated, cl::sub(bundleCmd), cl::sub(aotCmd),
              cl::sub(lintCmd), cl::sub(baselineCmd), cl::sub(tuneCmd),
              cl::cat(cat));
static cl::list<std::string> bundleMainDims(
    "main-dims",
    cl::desc("Only the ops whose main dim (what --hidden and --lengths "
             "give) is one of these: hidden, d, n, head_dim"),
    cl::CommaSeparated, cl::sub(bundleCmd), cl::sub(aotCmd), cl::sub(lintCmd),
    cl::cat(cat));
static cl::opt<unsigned>
    bundleJobs("jobs", cl::desc("Threads compiling (default: every core)"),
               cl::init(0), cl::sub(bundleCmd), cl::sub(aotCmd),
               cl::sub(lintCmd), cl::sub(baselineCmd), cl::sub(diffCmd),
               cl::sub(tuneCmd), cl::cat(cat));
static cl::list<std::string>
    bundleDtypes("dtypes", cl::desc("Dtypes to compile (default: each op's)"),
                 cl::CommaSeparated, cl::sub(bundleCmd), cl::sub(aotCmd),
                 cl::sub(lintCmd), cl::sub(baselineCmd), cl::sub(tuneCmd),
                 cl::cat(cat));
static cl::opt<std::string>
    libName("name",
            cl::desc("The library's name: file names, C prefix and "
                     "C++ namespace (a C identifier)"),
            cl::sub(aotCmd), cl::cat(cat));
static cl::opt<tools::CubinMode> cubinMode(
    "cubin", cl::desc("Embed a cubin per arch, made by ptxas"),
    cl::init(tools::CubinMode::Auto),
    cl::values(clEnumValN(tools::CubinMode::Auto, "auto",
                          "where ptxas is found (default)"),
               clEnumValN(tools::CubinMode::On, "on", "always; no ptxas fails"),
               clEnumValN(tools::CubinMode::Off, "off", "PTX only")),
    cl::sub(aotCmd), cl::cat(cat));
static cl::opt<std::string> ptxasPath(
    "ptxas", cl::desc("ptxas to run (default: CUDA_PATH/bin/ptxas, then PATH)"),
    cl::sub(aotCmd), cl::sub(lintCmd), cl::sub(baselineCmd), cl::sub(diffCmd),
    cl::cat(cat));
static cl::opt<std::string> cuobjdumpPath(
    "cuobjdump",
    cl::desc("cuobjdump for SASS (default: CUDA_PATH/bin/cuobjdump, then "
             "PATH; without one SASS is not measured)"),
    cl::sub(lintCmd), cl::sub(baselineCmd), cl::sub(diffCmd), cl::cat(cat));
static cl::opt<std::string> lintConfig("config",
                                       cl::desc("The lint rules (a JSON file)"),
                                       cl::value_desc("file"), cl::sub(lintCmd),
                                       cl::sub(diffCmd), cl::sub(tuneCmd),
                                       cl::cat(cat));
static cl::opt<bool> verbose("v",
                             cl::desc("lint: a line per entry; diff: "
                                      "every changed metric"),
                             cl::init(false), cl::sub(lintCmd),
                             cl::sub(diffCmd), cl::cat(cat));
static cl::list<std::string> baselineArgs(cl::Positional, cl::desc("save FILE"),
                                          cl::sub(baselineCmd));
static cl::opt<std::string> diffFile(cl::Positional, cl::desc("<baseline>"),
                                     cl::sub(diffCmd));
static cl::opt<bool> failOnRegression(
    "fail-on-regression",
    cl::desc("Exit 1 when a metric regressed (a kernel or entry gone, spills "
             "or stack grown, registers past --registers-slack, PTX lines or "
             "SASS past --growth-slack; with GPU tables, a failed case, "
             "numerics past --numerics-slack, times past --time-slack and "
             "--time-floor)"),
    cl::init(false), cl::sub(diffCmd), cl::cat(cat));
static cl::opt<int64_t>
    registersSlack("registers-slack",
                   cl::desc("Registers an entry may gain (default 0)"),
                   cl::init(0), cl::sub(diffCmd), cl::cat(cat));
static cl::opt<double> growthSlack(
    "growth-slack",
    cl::desc("Share PTX lines and SASS instructions may grow (default 0.05)"),
    cl::init(0.05), cl::sub(diffCmd), cl::cat(cat));
static cl::opt<std::string> numericsTable(
    "numerics",
    cl::desc("Numerics from a GPU to store or compare: the table of "
             "`kgen-fuzz run --report`"),
    cl::value_desc("file"), cl::sub(baselineCmd), cl::sub(diffCmd),
    cl::cat(cat));
static cl::opt<std::string>
    timesTable("times",
               cl::desc("Times from a GPU to store or compare: the table of "
                        "`kgen-fuzz time`"),
               cl::value_desc("file"), cl::sub(baselineCmd), cl::sub(diffCmd),
               cl::cat(cat));
static cl::opt<double> numericsSlack(
    "numerics-slack",
    cl::desc("How much a kernel's worst |err|/tol may grow (default 0.25)"),
    cl::init(0.25), cl::sub(diffCmd), cl::cat(cat));
static cl::opt<double> timeSlack(
    "time-slack",
    cl::desc("Share a case's cold or warm time may grow (default 0.05)"),
    cl::init(0.05), cl::sub(diffCmd), cl::cat(cat));
static cl::opt<double> timeFloor(
    "time-floor",
    cl::desc("Microseconds any time may grow, whatever its share (default "
             "0.2: a launch of a microsecond moves that much between runs)"),
    cl::init(0.2), cl::sub(diffCmd), cl::cat(cat));
static cl::list<std::string> bundledOps(
    "bundled",
    cl::desc("aot with --user-ops: also these ops that ship with kgen"),
    cl::CommaSeparated, cl::sub(aotCmd), cl::cat(cat));
static cl::opt<bool> userOps(
    "user-ops",
    cl::desc("aot: every op registered outside kgen's bundled ops (your op "
             "files), plus those of --bundled"),
    cl::init(false), cl::sub(aotCmd), cl::cat(cat));

static int fail(const std::string &msg) {
  llvm::errs() << "kgen: error: " << msg << "\n";
  return 1;
}

static std::string archList() {
  std::vector<std::string> names;
  for (const codegen::Arch &a : codegen::supportedArchs())
    names.push_back(a.name());
  return llvm::join(names, ", ");
}

static int runList() {
  if (listCMake) {
    std::vector<std::string> archs, dtypes, ops;
    for (const codegen::Arch &a : codegen::supportedArchs())
      archs.push_back(a.name());
    for (const OpDef &op : registeredOps())
      ops.push_back(op.name);
    // Every dtype name the command line takes (an op declares its own).
    for (int i = 0; i <= int(DType::Bool); ++i)
      if (parseDType(name(DType(i))))
        dtypes.emplace_back(name(DType(i)));
    llvm::outs() << fmt::format(
        "# Written by `kgen list --cmake`: what kgen_add_library checks.\n"
        "set(KGEN_ARCHS \"{}\")\nset(KGEN_DTYPES \"{}\")\n"
        "set(KGEN_BUNDLED_OPS \"{}\")\n",
        llvm::join(archs, ";"), llvm::join(dtypes, ";"), llvm::join(ops, ";"));
    return 0;
  }
  for (const OpDef &op : registeredOps())
    llvm::outs() << fmt::format("{:<20} {}\n", op.name, op.summary);
  return 0;
}

/// The options every compiling command shares, with --profile read and
/// checked against `archs`; false after saying what is wrong.
static bool compileOptions(codegen::CompileOptions &opts,
                           const std::vector<std::string> &archs) {
  opts.threadsPerRow = threadsPerRow;
  opts.rowsPerBlock = rowsPerBlock;
  opts.cudaPath = cudaPath;
  opts.cacheDir = cacheDir;
  if (cacheDir.getNumOccurrences() == 0)
    if (const char *env = std::getenv("KGEN_CACHE_DIR"))
      opts.cacheDir = env;
  if (profileOption.empty())
    return true;
  codegen::TuningProfile profile;
  std::string error;
  if (!codegen::loadProfile(profileOption, profile, error)) {
    fail(error);
    return false;
  }
  codegen::Compiler compiler;
  for (const std::string &a : archs)
    if (codegen::findArch(a) && !compiler.checkProfile(profile, a, error)) {
      fail(error);
      return false;
    }
  opts.profile = std::move(profile);
  return true;
}

static int runProfile() {
  if (profileArg.empty()) {
    for (const std::string &name : codegen::builtinProfiles()) {
      codegen::TuningProfile p;
      std::string error;
      if (!codegen::loadProfile(name, p, error))
        return fail(error);
      llvm::outs() << fmt::format(
          "{:<10} {:<14} {}\n", p.name,
          p.archs.empty() ? "any arch" : llvm::join(p.archs, ","), p.about);
    }
    return 0;
  }
  if (!codegen::findArch(arch))
    return fail(fmt::format("unknown arch '{}'; supported: {}", arch.getValue(),
                            archList()));
  codegen::CompileOptions opts;
  std::string kgenStage, gpuStage, err;
  if (!codegen::loadProfile(profileArg, opts.profile.emplace(), err))
    return fail(err);
  codegen::Compiler compiler;
  if (!compiler.describe(opts, arch, kgenStage, gpuStage, err))
    return fail(err);
  const codegen::TuningProfile &p = *opts.profile;
  llvm::outs() << fmt::format(
      "profile {} ({})\n  for {}\n  {}\nkgen stage on {}:\n  {}\ngpu "
      "stage:\n  {}\n",
      p.name, llvm::join(p.chain, " <- "),
      p.archs.empty() ? "any arch" : llvm::join(p.archs, ", "), p.about,
      arch.getValue(), kgenStage, gpuStage);
  return 0;
}

static int runEmit() {
  if (opName.empty())
    return fail("emit needs an op name; `kgen list` shows them");
  const OpDef *op = findOp(opName);
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
  if (!compileOptions(opts, {arch}))
    return 1;
  opts.arch = arch;
  opts.debugIR = debugIR;
  int64_t length = 0;
  if (hidden.getNumOccurrences()) {
    if (hidden < 1)
      return fail(
          fmt::format("--hidden must be >= 1, got {}", hidden.getValue()));
    if (hidden > tools::kMaxSpecializedLength)
      return fail(tools::tooLong(hidden));
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
      if (name == op->mainDim && length)
        return fail(fmt::format("--dim {}= and --hidden both set {}; give "
                                "one of them",
                                name.str(), op->mainDim));
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
    const std::string &out = *text[(int)emitStage.getValue()];
    if (output == "-")
      llvm::outs() << out;
    else if (!tools::writeFile(output, out))
      return 1;
  } catch (const UserError &e) {
    // "FILE:LINE: error: ...", the op file's line: as it is.
    llvm::errs() << e.what() << "\n";
    return 1;
  } catch (const std::exception &e) {
    return fail(e.what());
  }
  return 0;
}

/// The archs, lengths, ops and dtypes of bundle and aot.
static bool selection(tools::Selection &sel, std::vector<int64_t> defaults) {
  sel.archs.assign(bundleArchs.begin(), bundleArchs.end());
  if (sel.archs.empty())
    sel.archs.push_back("sm_90");
  sel.lengths.assign(bundleLengths.begin(), bundleLengths.end());
  if (sel.lengths.empty())
    sel.lengths = std::move(defaults);
  sel.ops.assign(bundleOps.begin(), bundleOps.end());
  sel.mainDims.assign(bundleMainDims.begin(), bundleMainDims.end());
  for (const std::string &d : bundleDtypes) {
    std::optional<DType> dt = parseDType(d);
    if (!dt) {
      fail(fmt::format("unknown dtype '{}'; use f32, f16 or bf16", d));
      return false;
    }
    sel.dtypes.push_back(*dt);
  }
  return true;
}

static unsigned jobCount() {
  return bundleJobs ? unsigned(bundleJobs)
                    : std::max(1u, std::thread::hardware_concurrency());
}

static int runBundle() {
  if (output == "-")
    return fail("bundle needs an output folder: -o DIR");
  tools::Selection sel;
  if (!selection(sel, {0, 4096}))
    return 1;
  codegen::CompileOptions opts;
  if (!compileOptions(opts, sel.archs))
    return 1;
  return tools::emitBundle(output, sel, opts, jobCount()) ? 1 : 0;
}

static int runAot() {
  if (output == "-")
    return fail("aot needs an output folder: -o DIR");
  if (libName.empty())
    return fail("aot needs a library name: --name NAME");
  tools::Selection sel;
  if (!selection(sel, {0}))
    return 1;
  if (!bundledOps.empty() && !userOps)
    return fail("--bundled adds to --user-ops; without it use --ops");
  if (userOps) {
    if (!sel.ops.empty())
      return fail("--user-ops and --ops exclude each other");
    for (const std::string &name : bundledOps) {
      const OpDef *op = findOp(name);
      if (!op || !op->bundled)
        return fail(fmt::format("--bundled: '{}' is not an op that ships "
                                "with kgen; `kgen list` shows them",
                                name));
      sel.ops.push_back(name);
    }
    for (const OpDef &op : registeredOps())
      if (!op.bundled)
        sel.ops.push_back(op.name);
    if (sel.ops.empty())
      return fail("--user-ops: no op is registered outside kgen's own; "
                  "register yours with KGEN_REGISTER_OP in the files you "
                  "link");
  }
  tools::AotOptions aot;
  aot.name = libName;
  aot.dir = output;
  aot.cubin = cubinMode;
  aot.ptxas = ptxasPath;
  aot.cudaPath = cudaPath;
  codegen::CompileOptions opts;
  if (!compileOptions(opts, sel.archs))
    return 1;
  return tools::emitAot(aot, sel, opts, jobCount());
}

static int runLint() {
  tools::Selection sel;
  if (!selection(sel, {0, 4096}))
    return 1;
  tools::LintOptions o;
  o.config = lintConfig;
  o.ptxas = ptxasPath;
  o.cuobjdump = cuobjdumpPath;
  o.cudaPath = cudaPath;
  o.verbose = verbose;
  codegen::CompileOptions opts;
  if (!compileOptions(opts, sel.archs))
    return 1;
  return tools::runLint(o, sel, opts, jobCount());
}

static tools::BaselineTools baselineTools() {
  return {ptxasPath, cuobjdumpPath, cudaPath};
}

static int runBaseline() {
  if (baselineArgs.size() != 2 || baselineArgs[0] != "save")
    return fail("expected `kgen baseline save FILE`");
  tools::Selection sel;
  if (!selection(sel, {0, 4096}))
    return 1;
  codegen::CompileOptions opts;
  if (!compileOptions(opts, sel.archs))
    return 1;
  return tools::saveBaseline(baselineArgs[1], sel, opts, jobCount(),
                             baselineTools(), {numericsTable, timesTable});
}

static int runDiff() {
  if (diffFile.empty())
    return fail("expected `kgen diff FILE`, FILE from `kgen baseline save`");
  if (registersSlack < 0 || growthSlack < 0 || !(numericsSlack >= 0) ||
      !(timeSlack >= 0) || !(timeFloor >= 0))
    return fail("--registers-slack, --growth-slack, --numerics-slack, "
                "--time-slack and --time-floor must be >= 0");
  tools::DiffOptions o;
  o.registersSlack = registersSlack;
  o.growthSlack = growthSlack;
  o.numericsSlack = numericsSlack;
  o.timeSlack = timeSlack;
  o.timeFloorUs = timeFloor;
  o.verbose = verbose;
  // The baseline's archs are checked as its kernels compile.
  codegen::CompileOptions opts;
  if (!compileOptions(opts, {}))
    return 1;
  return tools::runDiff(diffFile, o, failOnRegression, lintConfig, opts,
                        jobCount(), baselineTools(),
                        {numericsTable, timesTable});
}

/// The rows a case may take: past them one tensor of 65536 f32 elements a
/// row needs more than a GiB.
constexpr int64_t kMaxTuneRows = int64_t(1) << 22;

static int runTune() {
  if (tuneArgs.size() != 2 || (tuneArgs[0] != "plan" && tuneArgs[0] != "pick"))
    return fail("expected `kgen tune plan RUN --space FILE ...` or `kgen tune "
                "pick RUN`");
  if (tuneArgs[0] == "pick") {
    if (!(tuneNoise >= 0 && tuneNoise < 1))
      return fail("--noise must lie in [0, 1)");
    return tools::tunePick(tuneArgs[1], tuneNoise, lintConfig);
  }
  if (!lintConfig.empty())
    return fail("--config is tune pick's: the lint rules whose claims it "
                "checks in the SASS");
  if (tuneSpace.empty())
    return fail("tune plan needs --space FILE: the option values to try");
  tools::TunePlan plan;
  plan.run = tuneArgs[1];
  plan.space = tuneSpace;
  plan.rows.assign(tuneRows.begin(), tuneRows.end());
  if (plan.rows.empty())
    plan.rows = {1, 128, 4096, 16384};
  for (int64_t r : plan.rows)
    if (r < 1 || r > kMaxTuneRows)
      return fail(
          fmt::format("--rows must lie in [1, {}], got {}", kMaxTuneRows, r));
  tools::Selection sel;
  if (!selection(sel, {0, 4096}))
    return 1;
  codegen::CompileOptions opts;
  if (!compileOptions(opts, sel.archs))
    return 1;
  return tools::tunePlan(plan, sel, opts, jobCount());
}

static void printVersion(llvm::raw_ostream &os) {
  os << "kgen " << KGEN_VERSION << " (LLVM " << LLVM_VERSION_STRING << ")\n";
}

int kgen::generatorMain(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(cat);
  cl::SetVersionPrinter(printVersion);
  cl::ParseCommandLineOptions(
      argc, argv,
      "kgen: fused GPU row kernels from a C++ DSL\n\n"
      "  kgen list                          the registered ops\n"
      "  kgen emit rmsnorm --arch sm_90 --dtype bf16 --hidden 4096 --emit=ptx\n"
      "  kgen bundle -o kernels --archs sm_90 --lengths 0,4096\n"
      "  kgen aot -o out --name my_kernels --archs sm_80,sm_90 --lengths "
      "0,4096\n"
      "  kgen lint --config ops/lint.json --archs sm_90\n"
      "  kgen baseline save base.json --archs sm_90 && kgen diff base.json\n"
      "  kgen profile sm_90 --arch sm_90a\n"
      "  kgen tune plan run --space space.json --archs sm_90 --ops rmsnorm\n");
  // A broken registration (a duplicate name, no kernel) is the op author's
  // mistake: report it with its file and line before doing anything.
  std::vector<std::string> errors = checkRegistry();
  for (const std::string &e : errors)
    llvm::errs() << e << "\n";
  if (!errors.empty())
    return 1;
  if (listCmd)
    return runList();
  if (emitCmd)
    return runEmit();
  if (bundleCmd)
    return runBundle();
  if (aotCmd)
    return runAot();
  if (lintCmd)
    return runLint();
  if (baselineCmd)
    return runBaseline();
  if (diffCmd)
    return runDiff();
  if (profileCmd)
    return runProfile();
  if (tuneCmd)
    return runTune();
  return fail("expected a command: list, emit, bundle, aot, lint, baseline, "
              "diff, profile or tune (see kgen --help)");
}
