//===- Main.cpp - kgen-fuzz: random cases per op against the interpreter --===//
//
//   kgen-fuzz run DIR [--ops a,b] [--cases N] [--seconds S] [--seed S]
//                     [--max-bytes B] [--threads T] [--case "op=..."]
//                     [--report FILE]
//   kgen-fuzz minimize DIR OP SEED
//   kgen-fuzz time DIR (--case TEXT)... [--cases FILE]
//
// DIR is a `kgen bundle` folder. Each case of `run` comes from (op, seed)
// alone; a failure prints its seed and the minimize command. `minimize`
// shrinks a failing case (layout and values, then row maps' dims, rows and
// length by bisection) and prints the smallest as a command line and a
// GoogleTest. `run --report` writes each kernel's cases, failures and worst
// |err|/tol: with a fixed --seed and --cases, the numerics `kgen baseline`
// stores. `time` checks each given case as `run` does, then times it
// (Timing.h) and prints a table: the measure `kgen tune` reads.
// KGEN_GPU_TEST_FAKE_CUDA runs on the emulator (test/gpu/EmuCuda.cpp).
//
//===----------------------------------------------------------------------===//
#include "FuzzCase.h"
#include "Runner.h"

#include "runtime/Driver.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

using namespace kgen;
using namespace kgen::fuzz;

namespace {

/// A run's cases are never allowed past this many bytes, whatever
/// --max-bytes asks: the host keeps three copies of each allocation.
constexpr int64_t kMaxCaseBytes = int64_t(1) << 30;
constexpr int64_t kDefaultCaseBytes = int64_t(16) << 20;

int usage(const std::string &why) {
  std::cerr << "kgen-fuzz: error: " << why << "\n"
            << "usage: kgen-fuzz run DIR [--ops a,b] [--cases N] "
               "[--seconds S] [--seed S] [--max-bytes B] [--threads T]\n"
               "                     [--case TEXT] [--report FILE]\n"
               "       kgen-fuzz minimize DIR OP SEED [--max-bytes B]\n"
               "       kgen-fuzz time DIR (--case TEXT)... [--cases FILE]\n";
  return 2;
}

bool parseInt(const std::string &s, int64_t lo, int64_t hi, int64_t &out) {
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 0);
  if (s.empty() || *end || errno == ERANGE || v < lo || v > hi)
    return false;
  out = v;
  return true;
}

uint64_t caseSeed(uint64_t seed, const std::string &op, int64_t i) {
  uint64_t h = seed ^ 0xcbf29ce484222325ull;
  for (char ch : op)
    h = (h ^ uint8_t(ch)) * 0x100000001b3ull;
  h ^= uint64_t(i) * 0x9e3779b97f4a7c15ull;
  h ^= h >> 31;
  return h * 0xbf58476d1ce4e5b9ull ^ (h >> 29);
}

const rt::Driver *openDevice() {
  if (const char *fake = std::getenv("KGEN_GPU_TEST_FAKE_CUDA"))
    rt::setDriverLibraryForTesting(fake);
  std::string why;
  const rt::Driver *d = gpu::openGpu(why);
  if (!d)
    std::cerr << "kgen-fuzz: error: no GPU: " << why << "\n";
  return d;
}

void printFailure(const std::string &dir, const FuzzCase &c, uint64_t seed,
                  int64_t maxBytes, const Outcome &o) {
  std::cout << "FAIL " << c.op << " seed " << seed << ": " << o.what << "\n"
            << "  case: " << format(c) << "\n"
            << "  shrink it: kgen-fuzz minimize " << dir << " " << c.op << " "
            << seed
            << (maxBytes == kDefaultCaseBytes
                    ? ""
                    : " --max-bytes " + std::to_string(maxBytes))
            << "\n";
}

/// A kernel's cases in a run: what `--report` writes, a line a kernel, as
/// kgen baseline and kgen diff read it (tools/kgen/GpuRecords.h).
struct KernelTally {
  int64_t cases = 0, failed = 0;
  double worst = 0;
};

bool writeReport(const std::string &path,
                 const std::map<std::string, KernelTally> &byKernel) {
  std::ofstream f(path);
  f << "kernel\tcases\tfailed\tworst_err_over_tol\n";
  char worst[32];
  for (const auto &[kernel, t] : byKernel) {
    std::snprintf(worst, sizeof worst, "%.6g", t.worst);
    f << kernel << "\t" << t.cases << "\t" << t.failed << "\t" << worst << "\n";
  }
  f.close();
  if (!f) {
    std::cerr << "kgen-fuzz: error: cannot write the report '" << path << "'\n";
    return false;
  }
  return true;
}

/// Parses --max-bytes' value.
bool parseMaxBytes(const std::string &v, int64_t &out) {
  return parseInt(v, 1 << 16, kMaxCaseBytes, out);
}

int runCommand(const std::vector<std::string> &args) {
  if (args.empty())
    return usage("run needs a kernels folder");
  std::string dir = args[0];
  std::vector<std::string> ops;
  int64_t cases = 1000, seconds = 0, maxBytes = kDefaultCaseBytes, seed = 1;
  int64_t threads = 0;
  std::string caseText, reportPath;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string &a = args[i];
    if (i + 1 >= args.size())
      return usage("'" + a + "' needs a value");
    const std::string &v = args[++i];
    if (a == "--ops") {
      std::stringstream ss(v);
      for (std::string o; std::getline(ss, o, ',');)
        ops.push_back(o);
    } else if (a == "--cases") {
      if (!parseInt(v, 1, int64_t(1) << 40, cases))
        return usage("--cases expects an integer >= 1");
    } else if (a == "--seconds") {
      if (!parseInt(v, 1, 1 << 20, seconds))
        return usage("--seconds expects an integer >= 1");
    } else if (a == "--seed") {
      if (!parseInt(v, 0, INT64_MAX, seed))
        return usage("--seed expects an integer >= 0");
    } else if (a == "--max-bytes") {
      if (!parseMaxBytes(v, maxBytes))
        return usage("--max-bytes expects an integer in [65536, 2^30]");
    } else if (a == "--threads") {
      if (!parseInt(v, 0, 1024, threads))
        return usage("--threads expects an integer in [0, 1024]");
    } else if (a == "--case") {
      caseText = v;
    } else if (a == "--report") {
      reportPath = v;
    } else {
      return usage("unknown option '" + a + "'");
    }
  }
  if (!reportPath.empty() && !std::ofstream(reportPath))
    return usage("--report: cannot write '" + reportPath + "'");
  Bundle bundle;
  std::string err;
  if (!bundle.open(dir, err)) {
    std::cerr << "kgen-fuzz: error: " << err << "\n";
    return 1;
  }
  for (const std::string &o : ops)
    if (!bundle.offers().count(o)) {
      auto it = bundle.skipped().find(o);
      std::cerr << "kgen-fuzz: error: op '" << o << "': "
                << (it != bundle.skipped().end() ? it->second
                                                 : "not in the bundle")
                << "\n";
      return 1;
    }
  const rt::Driver *d = openDevice();
  if (!d)
    return 1;
  Runner runner(d, bundle, unsigned(threads));
  CaseBytes bytes = [&](const FuzzCase &c) { return bundle.caseBytes(c); };
  if (!caseText.empty()) {
    std::optional<FuzzCase> c = parseCase(caseText, err);
    if (!c)
      return usage("--case: " + err);
    Outcome o = runner.run(*c);
    if (o.kind == Outcome::Skip) {
      std::cerr << "kgen-fuzz: error: --case cannot run: " << o.what << "\n";
      return 1;
    }
    std::cout << (o.kind == Outcome::Pass ? "PASS " : "FAIL ") << format(*c)
              << (o.what.empty() ? "" : ": " + o.what) << "\n";
    return o.kind == Outcome::Fail ? 1 : 0;
  }
  if (ops.empty()) {
    for (const auto &[name, offer] : bundle.offers())
      ops.push_back(name);
    for (const auto &[name, why] : bundle.skipped())
      std::cout << "[kgen-fuzz] " << name << ": not fuzzed (" << why << ")\n";
  }
  int64_t failures = 0, total = 0;
  std::map<std::string, KernelTally> byKernel;
  for (const std::string &name : ops) {
    const OpOffer &offer = bundle.offers().at(name);
    int64_t ran = 0, skipped = 0, failed = 0;
    double worst = 0, refSeconds = 0;
    std::string lastSkip;
    std::map<std::string, int64_t> failedBy; // "f32/constant"
    auto t0 = std::chrono::steady_clock::now();
    auto elapsed = [&] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                           t0)
          .count();
    };
    for (int64_t i = 0; seconds ? elapsed() < seconds : i < cases; ++i) {
      uint64_t s = caseSeed(uint64_t(seed), name, i);
      FuzzCase c = makeCase(offer, s, maxBytes, bytes);
      Outcome o = runner.run(c);
      refSeconds += o.refSeconds;
      if (o.kind == Outcome::Skip) {
        ++skipped;
        lastSkip = o.what;
        continue;
      }
      ++ran;
      worst = std::max(worst, o.worst);
      KernelTally &kt = byKernel[o.kernel];
      ++kt.cases;
      kt.failed += o.kind == Outcome::Fail;
      kt.worst = std::max(kt.worst, o.worst);
      if (o.kind == Outcome::Fail) {
        ++failed;
        ++failedBy[std::string(kgen::name(c.dtype)) + "/" +
                   valuesName(c.values)];
        if (failed <= 3)
          printFailure(dir, c, s, maxBytes, o);
        if (o.fatal) {
          std::cout << "[kgen-fuzz] the CUDA context is unusable: stopping\n";
          return 1;
        }
      }
    }
    double secs = elapsed();
    char line[512];
    std::snprintf(line, sizeof line,
                  "[kgen-fuzz] %-22s %8lld cases, %lld failed, %lld skipped, "
                  "worst |err|/tol %.3f, %.0f cases/s (interpreter %.0f%%)",
                  name.c_str(), (long long)ran, (long long)failed,
                  (long long)skipped, worst, secs > 0 ? ran / secs : 0.0,
                  secs > 0 ? 100 * refSeconds / secs : 0.0);
    std::cout << line << (skipped ? " (last skip: " + lastSkip + ")" : "");
    for (const auto &[cls, n] : failedBy)
      std::cout << (cls == failedBy.begin()->first ? "; failed as " : ", ")
                << cls << " x" << n;
    std::cout << "\n";
    failures += failed;
    total += ran;
  }
  std::cout << "[kgen-fuzz] " << total << " cases, " << failures
            << " failed (seed " << seed << ")\n";
  if (!reportPath.empty() && !writeReport(reportPath, byKernel))
    return 1;
  return failures ? 1 : 0;
}

/// Whether `c` still fails, counting the tries.
struct Shrinker {
  Runner &runner;
  int tries = 0;
  std::string lastWhat;
  bool fails(const FuzzCase &c) {
    ++tries;
    Outcome o = runner.run(c);
    if (o.kind == Outcome::Fail)
      lastWhat = o.what;
    return o.kind == Outcome::Fail;
  }
  /// The smallest v in [lo, hi] for which set(v) still fails, by bisection
  /// (hi fails). Failure need not be monotone: this finds a failing v whose
  /// v - 1 passed, not always the global least.
  template <typename Set>
  int64_t least(FuzzCase &c, int64_t lo, int64_t hi, Set set) {
    FuzzCase t = c;
    set(t, lo);
    if (fails(t))
      return lo;
    while (hi - lo > 1) {
      int64_t mid = lo + (hi - lo) / 2;
      t = c;
      set(t, mid);
      if (fails(t))
        hi = mid;
      else
        lo = mid;
    }
    return hi;
  }
};

int minimizeCommand(std::vector<std::string> args) {
  int64_t maxBytes = kDefaultCaseBytes;
  if (args.size() == 5 && args[3] == "--max-bytes") {
    if (!parseMaxBytes(args[4], maxBytes))
      return usage("--max-bytes expects an integer in [65536, 2^30]");
    args.resize(3);
  }
  if (args.size() != 3)
    return usage("minimize needs DIR OP SEED [--max-bytes B]");
  const std::string &dir = args[0], &opName = args[1];
  // A case seed is any 64-bit value.
  char *end = nullptr;
  errno = 0;
  uint64_t seed = std::strtoull(args[2].c_str(), &end, 10);
  if (args[2].empty() || *end || errno == ERANGE || args[2][0] == '-')
    return usage("SEED must be an unsigned 64-bit integer");
  Bundle bundle;
  std::string err;
  if (!bundle.open(dir, err)) {
    std::cerr << "kgen-fuzz: error: " << err << "\n";
    return 1;
  }
  if (!bundle.offers().count(opName)) {
    std::cerr << "kgen-fuzz: error: op '" << opName
              << "' is not one kgen-fuzz drives in " << dir << "\n";
    return 1;
  }
  const rt::Driver *d = openDevice();
  if (!d)
    return 1;
  Runner runner(d, bundle);
  FuzzCase c = makeCase(bundle.offers().at(opName), seed, maxBytes,
                        [&](const FuzzCase &t) { return bundle.caseBytes(t); });
  Shrinker sh{runner};
  if (!sh.fails(c)) {
    std::cout << "kgen-fuzz: " << format(c) << " passes: nothing to shrink\n";
    return 0;
  }
  std::cout << "from: " << format(c) << "\n  " << sh.lastWhat << "\n";
  // The simplest kernel, layout and values that still fail, then the
  // smallest rows and length.
  auto tryField = [&](auto set) {
    FuzzCase t = c;
    set(t);
    if (sh.fails(t))
      c = t;
  };
  if (c.specialized)
    tryField([](FuzzCase &t) { t.specialized = false; });
  tryField([](FuzzCase &t) { t.misalign = 0; });
  tryField([](FuzzCase &t) { t.pad = 0; });
  tryField([](FuzzCase &t) { t.values = Values::Normal, t.exponent = 0; });
  if (c.fused)
    tryField([](FuzzCase &t) { t.fused = false; });
  if (c.positions != Positions::Random && c.positions != Positions::Zero)
    tryField([](FuzzCase &t) { t.positions = Positions::Zero; });
  if (c.values == Values::Scaled) // the magnitude, toward 2^0
    c.exponent =
        int((c.exponent < 0 ? -1 : 1) *
            sh.least(c, 0, std::abs(c.exponent),
                     [sign = c.exponent < 0 ? -1 : 1](FuzzCase &t, int64_t v) {
                       t.exponent = int(sign * v);
                     }));
  for (auto &[name, v] : c.dims) // heads, group sizes, table rows
    if (v > 1)
      v = sh.least(c, 1, v,
                   [&name](FuzzCase &t, int64_t n) { t.dims[name] = n; });
  if (c.rows > 1)
    c.rows = sh.least(c, 1, c.rows, [](FuzzCase &t, int64_t v) { t.rows = v; });
  if (!c.specialized && c.length > 1) {
    auto setLength = [](FuzzCase &t, int64_t v) { t.length = v; };
    c.length = sh.least(c, 1, c.length, setLength);
    // Failure need not be monotone in the length (a tail bug skips whole
    // vectors): the short lengths below the bisection's are tried in turn.
    for (int64_t v = 1; v < std::min<int64_t>(c.length, 65); ++v) {
      FuzzCase t = c;
      setLength(t, v);
      if (sh.fails(t)) {
        c = t;
        break;
      }
    }
  }
  sh.fails(c); // its message
  std::string text = format(c);
  std::cout << "smallest after " << sh.tries << " runs: " << text << "\n  "
            << sh.lastWhat << "\n"
            << "reproduce: kgen-fuzz run " << dir << " --case \"" << text
            << "\"\n"
            << "as a test (link kgen_fuzz, KGEN_KERNEL_DIR = the bundle):\n"
            << "TEST(FuzzRepro, " << c.op << "_" << seed << ") {\n"
            << "  EXPECT_EQ(kgen::fuzz::runCaseText(std::getenv(\"KGEN_KERNEL_"
               "DIR\"),\n"
            << "                                    \"" << text << "\"),\n"
            << "            \"\");\n}\n";
  return 0;
}

/// The most cases one `time` run takes: each costs about a second.
constexpr size_t kMaxTimedCases = 4096;

int timeCommand(const std::vector<std::string> &args) {
  if (args.empty())
    return usage("time needs a kernels folder");
  std::string dir = args[0];
  std::vector<std::string> texts;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string &a = args[i];
    if (i + 1 >= args.size())
      return usage("'" + a + "' needs a value");
    const std::string &v = args[++i];
    if (a == "--case") {
      texts.push_back(v);
    } else if (a == "--cases") {
      std::string text;
      if (!gpu::readTextFile(v, text))
        return usage("cannot read --cases file '" + v + "'");
      std::istringstream in(text);
      for (std::string line; std::getline(in, line);)
        if (line.find_first_not_of(" \t") != std::string::npos &&
            line[line.find_first_not_of(" \t")] != '#')
          texts.push_back(line);
    } else {
      return usage("unknown option '" + a + "'");
    }
  }
  if (texts.empty())
    return usage("time needs --case TEXT or --cases FILE");
  if (texts.size() > kMaxTimedCases)
    return usage("time takes at most " + std::to_string(kMaxTimedCases) +
                 " cases");
  std::vector<FuzzCase> cases;
  for (const std::string &t : texts) {
    std::string err;
    std::optional<FuzzCase> c = parseCase(t, err);
    if (!c)
      return usage("bad case '" + t + "': " + err);
    cases.push_back(*c);
  }
  Bundle bundle;
  std::string err;
  if (!bundle.open(dir, err)) {
    std::cerr << "kgen-fuzz: error: " << err << "\n";
    return 1;
  }
  const rt::Driver *d = openDevice();
  if (!d)
    return 1;
  Runner runner(d, bundle);
  std::cout << "case\tstatus\tbytes\tcold_us\twarm_us\tmemcpy_cold_us\t"
               "memcpy_warm_us\twarm_in\n";
  int failed = 0;
  for (const FuzzCase &c : cases) {
    Outcome o = runner.run(c);
    Timing t;
    if (o.kind == Outcome::Pass && !runner.timeLast(t, err)) {
      o.kind = Outcome::Fail;
      o.what = err;
      o.fatal = true;
    }
    if (o.kind != Outcome::Pass) {
      failed += o.kind == Outcome::Fail;
      std::cout << format(c) << "\t"
                << (o.kind == Outcome::Fail ? "FAIL: " : "SKIP: ") << o.what
                << "\t\t\t\t\t\t\n";
      if (o.fatal)
        return 1;
      continue;
    }
    char line[256];
    std::snprintf(line, sizeof line, "\tpass\t%lld\t%.2f\t%.2f\t%.2f\t%.2f\t%s",
                  (long long)t.bytes, t.coldUs, t.warmUs, t.memcpyColdUs,
                  t.memcpyWarmUs, t.graph ? "graph" : "stream");
    std::cout << format(c) << line << std::endl;
  }
  return failed ? 1 : 0;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty())
    return usage("expected a command: run, minimize or time");
  std::string cmd = args[0];
  args.erase(args.begin());
  if (cmd == "run")
    return runCommand(args);
  if (cmd == "minimize")
    return minimizeCommand(args);
  if (cmd == "time")
    return timeCommand(args);
  return usage("unknown command '" + cmd + "'");
}
