//===- Baseline.cpp - Stored artifact metrics and their diff --------------===//
#include "Baseline.h"
#include "Toolkit.h"

#include "runtime/Json.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>
#include <tuple>

namespace kgen::tools {

namespace json = kgen::rt::json;

namespace {

constexpr int kFormat = 1;

std::string quoted(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

template <typename T, typename F>
std::string list(const std::vector<T> &v, F f) {
  std::vector<std::string> parts;
  for (const T &x : v)
    parts.push_back(f(x));
  std::string out = "[";
  out += llvm::join(parts, ", ");
  out += ']';
  return out;
}

} // namespace

std::string writeBaseline(const Baseline &b) {
  const Selection &s = b.selection;
  std::vector<std::string> fields;
  for (const MetricField &f : entryFields())
    fields.push_back(quoted(f.key));
  std::string out = fmt::format(
      "{{\n\"kgen_baseline\": {},\n\"ptxas\": {},\n\"selection\": {{\"archs\": "
      "{}, \"lengths\": {}, \"ops\": {}, \"dtypes\": {}}},\n\"fields\": [{}],\n"
      "\"kernels\": {{",
      kFormat, quoted(b.ptxas), list(s.archs, quoted),
      list(s.lengths, [](int64_t l) { return std::to_string(l); }),
      list(s.ops, quoted),
      list(s.dtypes,
           [](DType d) { return quoted(std::string(kgen::name(d))); }),
      llvm::join(fields, ", "));
  // One kernel a line: a diff of the file reads as a diff of the kernels.
  for (size_t i = 0; i < b.kernels.size(); ++i) {
    const KernelMetrics &k = b.kernels[i];
    std::vector<std::string> entries;
    for (const EntryMetrics &e : k.entries) {
      std::vector<std::string> values;
      for (const MetricField &f : entryFields())
        values.push_back(std::to_string(e.*f.field));
      entries.push_back(
          fmt::format("{}: [{}]", quoted(e.variant), llvm::join(values, ",")));
    }
    out += fmt::format("{}\n{}: {{\"ptx_lines\": {}, \"ptx_hash\": "
                       "\"{:016x}\", \"entries\": {{{}}}}}",
                       i ? "," : "", quoted(k.name), k.ptxLines, k.ptxHash,
                       llvm::join(entries, ", "));
  }
  out += "\n}";
  // GPU tables, where given: a kernel's or a case's numbers on one line.
  if (!b.numerics.empty()) {
    out += ",\n\"numerics\": {";
    const char *sep = "";
    for (const auto &[name, n] : b.numerics) {
      out += fmt::format("{}\n{}: [{}, {}, {}]", sep, quoted(name), n.cases,
                         n.failed, n.worst);
      sep = ",";
    }
    out += "\n}";
  }
  if (!b.times.empty()) {
    out += ",\n\"times\": {";
    const char *sep = "";
    for (const auto &[name, t] : b.times) {
      out += fmt::format("{}\n{}: [{}, {}, {}, {}, {}]", sep, quoted(name),
                         t.bytes, t.cold, t.warm, t.memcpyCold, t.memcpyWarm);
      sep = ",";
    }
    out += "\n}";
  }
  return out + "\n}\n";
}

bool readBaseline(const std::string &path, Baseline &out, std::string &err) {
  json::Value doc;
  if (!readJsonFile(path, doc, err))
    return false;
  auto fail = [&](const std::string &at, const std::string &what) {
    err = fmt::format("{}: {}{}{}", path, at, at.empty() ? "" : ": ", what);
    return false;
  };
  using K = json::Value::Kind;
  const json::Value *format = doc.find("kgen_baseline");
  if (doc.kind != K::Object || !format || !format->isInteger)
    return fail("", "not a kgen baseline (no \"kgen_baseline\")");
  if (format->integer != kFormat)
    return fail("kgen_baseline",
                fmt::format("format {} is not {}, the one this kgen reads; "
                            "save the baseline again",
                            format->integer, kFormat));
  const json::Value *ptxas = doc.find("ptxas");
  const json::Value *sel = doc.find("selection");
  const json::Value *fields = doc.find("fields");
  const json::Value *kernels = doc.find("kernels");
  if (!ptxas || ptxas->kind != K::String)
    return fail("ptxas", "must be a string");
  if (!sel || sel->kind != K::Object)
    return fail("selection", "must be an object");
  if (!fields || fields->kind != K::Array)
    return fail("fields", "must be an array of metric names");
  if (!kernels || kernels->kind != K::Object)
    return fail("kernels", "must be an object");
  out = Baseline();
  out.ptxas = ptxas->string;

  auto strings = [&](const char *key, std::vector<std::string> &v) {
    const json::Value *a = sel->find(key);
    if (!a || a->kind != K::Array)
      return fail(std::string("selection.") + key, "must be an array");
    for (const json::Value &s : a->array) {
      if (s.kind != K::String)
        return fail(std::string("selection.") + key, "must hold strings");
      v.push_back(s.string);
    }
    return true;
  };
  std::vector<std::string> dtypes;
  if (!strings("archs", out.selection.archs) ||
      !strings("ops", out.selection.ops) || !strings("dtypes", dtypes))
    return false;
  for (const std::string &d : dtypes) {
    std::optional<DType> dt = parseDType(d);
    if (!dt)
      return fail("selection.dtypes", fmt::format("unknown dtype '{}'", d));
    out.selection.dtypes.push_back(*dt);
  }
  const json::Value *lengths = sel->find("lengths");
  if (!lengths || lengths->kind != K::Array)
    return fail("selection.lengths", "must be an array");
  for (const json::Value &l : lengths->array) {
    if (!l.isInteger)
      return fail("selection.lengths", "must hold integers");
    out.selection.lengths.push_back(l.integer);
  }

  // Metric names as the file lists them; names this kgen lacks are skipped.
  std::vector<int64_t EntryMetrics::*> slots;
  for (const json::Value &f : fields->array) {
    if (f.kind != K::String)
      return fail("fields", "must hold strings");
    int64_t EntryMetrics::*slot = nullptr;
    for (const MetricField &m : entryFields())
      if (f.string == m.key)
        slot = m.field;
    slots.push_back(slot);
  }
  for (const auto &[name, v] : kernels->object) {
    std::string at = "kernels." + name;
    const json::Value *lines = v.find("ptx_lines");
    const json::Value *hash = v.find("ptx_hash");
    const json::Value *entries = v.find("entries");
    if (v.kind != K::Object || !lines || !lines->isInteger || !hash ||
        hash->kind != K::String || !entries || entries->kind != K::Object)
      return fail(at, "must be {\"ptx_lines\": N, \"ptx_hash\": \"HEX\", "
                      "\"entries\": {...}}");
    KernelMetrics k;
    k.name = name;
    k.ptxLines = lines->integer;
    if (!llvm::to_integer(hash->string, k.ptxHash, 16))
      return fail(at + ".ptx_hash", "must be hexadecimal");
    for (const auto &[variant, values] : entries->object) {
      if (values.kind != K::Array || values.array.size() != slots.size())
        return fail(at + ".entries." + variant,
                    fmt::format("must be an array of {} integers (fields)",
                                slots.size()));
      EntryMetrics e;
      e.variant = variant;
      for (size_t i = 0; i < slots.size(); ++i) {
        if (!values.array[i].isInteger)
          return fail(at + ".entries." + variant, "must hold integers");
        if (slots[i])
          e.*slots[i] = values.array[i].integer;
      }
      k.entries.push_back(e);
    }
    out.kernels.push_back(std::move(k));
  }
  // [numbers...] of each member of an optional object.
  auto rows = [&](const char *key, size_t count, auto set) {
    const json::Value *o = doc.find(key);
    if (!o)
      return true;
    if (o->kind != K::Object)
      return fail(key, "must be an object");
    for (const auto &[name, v] : o->object) {
      bool ok = v.kind == K::Array && v.array.size() == count;
      for (size_t i = 0; ok && i < count; ++i)
        ok = v.array[i].kind == K::Number && v.array[i].number >= 0;
      if (!ok || !set(name, v.array))
        return fail(std::string(key) + "." + name,
                    fmt::format("must be an array of {} numbers >= 0", count));
    }
    return true;
  };
  return rows("numerics", 3,
              [&](const std::string &name, const auto &a) {
                KernelNumerics n{a[0].integer, a[1].integer, a[2].number};
                out.numerics[name] = n;
                return a[0].isInteger && a[1].isInteger && n.failed <= n.cases;
              }) &&
         rows("times", 5, [&](const std::string &name, const auto &a) {
           CaseTimes t;
           t.pass = true;
           t.status = "pass";
           t.bytes = a[0].number, t.cold = a[1].number, t.warm = a[2].number;
           t.memcpyCold = a[3].number, t.memcpyWarm = a[4].number;
           out.times[name] = t;
           return t.cold > 0 && t.warm > 0;
         });
}

DiffResult diffBaselines(const Baseline &before, const Baseline &after,
                         const DiffOptions &opts) {
  DiffResult r;
  std::vector<std::string> rows;
  auto row = [&](const std::string &kernel, const std::string &variant,
                 const std::string &what, const std::string &was,
                 const std::string &now, const char *verdict) {
    rows.push_back(fmt::format("{:<48} {:<16} {:<18} {:>8} {:>8}  {}", kernel,
                               variant, what, was, now, verdict));
  };
  std::map<std::string, const KernelMetrics *> now;
  for (const KernelMetrics &k : after.kernels)
    now[k.name] = &k;
  std::map<std::string, const KernelMetrics *> was;
  for (const KernelMetrics &k : before.kernels)
    was[k.name] = &k;
  // Grown past a share of the old value: a regression.
  auto grew = [&](int64_t a, int64_t b) {
    return double(b) > double(a) * (1 + opts.growthSlack);
  };
  for (const KernelMetrics &old : before.kernels) {
    auto it = now.find(old.name);
    if (it == now.end()) {
      row(old.name, "", "kernel", "yes", "gone", "REGRESSION");
      ++r.regressions;
      continue;
    }
    const KernelMetrics &k = *it->second;
    r.changedPtx += k.ptxHash != old.ptxHash;
    if (k.ptxLines != old.ptxLines) {
      bool worse = grew(old.ptxLines, k.ptxLines);
      row(k.name, "", "ptx_lines", std::to_string(old.ptxLines),
          std::to_string(k.ptxLines), worse ? "REGRESSION" : "");
      r.regressions += worse;
    }
    std::map<std::string, const EntryMetrics *> entries;
    for (const EntryMetrics &e : k.entries)
      entries[e.variant] = &e;
    for (const EntryMetrics &oe : old.entries) {
      auto et = entries.find(oe.variant);
      if (et == entries.end()) {
        row(k.name, oe.variant, "entry", "yes", "gone", "REGRESSION");
        ++r.regressions;
        continue;
      }
      const EntryMetrics &e = *et->second;
      entries.erase(et);
      for (const MetricField &f : entryFields()) {
        int64_t a = oe.*f.field, b = e.*f.field;
        if (a == b || a < 0 || b < 0) // -1: not measured on one side
          continue;
        std::string key = f.key;
        bool worse;
        if (key == "registers")
          worse = b > a + opts.registersSlack;
        else if (key == "sass_instructions")
          worse = grew(a, b);
        else if (key == "barriers" || key == "shared_bytes")
          worse = false; // a different plan, not by itself worse
        else
          worse = b > a; // spills and stack
        r.regressions += worse;
        r.improvements += b < a;
        row(k.name, e.variant, key, std::to_string(a), std::to_string(b),
            worse   ? "REGRESSION"
            : b < a ? "better"
                    : "");
      }
    }
    for (const auto &[variant, e] : entries)
      row(k.name, variant, "entry", "-", "new", "");
  }
  for (const KernelMetrics &k : after.kernels)
    if (!was.count(k.name))
      row(k.name, "", "kernel", "-", "new", "");

  // GPU tables: compared where both sides measured the kernel or case.
  for (const auto &[name, old] : before.numerics) {
    auto it = after.numerics.find(name);
    if (it == after.numerics.end())
      continue;
    const KernelNumerics &n = it->second;
    ++r.comparedNumerics;
    bool worse = n.failed > 0 || n.worst > old.worst + opts.numericsSlack;
    if (n.failed)
      row(name, "", "failed cases", std::to_string(old.failed),
          std::to_string(n.failed), "REGRESSION");
    else if (n.worst != old.worst)
      row(name, "", "worst err/tol", fmt::format("{:.3f}", old.worst),
          fmt::format("{:.3f}", n.worst),
          worse                 ? "REGRESSION"
          : n.worst < old.worst ? "better"
                                : "");
    r.regressions += worse;
    r.improvements += !worse && n.worst < old.worst;
  }
  double logCold = 0;
  for (const auto &[name, old] : before.times) {
    auto it = after.times.find(name);
    if (it == after.times.end())
      continue;
    const CaseTimes &t = it->second;
    if (!t.pass) {
      row(name, "", "time", "pass", t.status, "REGRESSION");
      ++r.regressions;
      continue;
    }
    ++r.comparedTimes;
    logCold += std::log(t.cold / old.cold);
    for (auto [what, a, b] : {std::tuple{"cold_us", old.cold, t.cold},
                              std::tuple{"warm_us", old.warm, t.warm}}) {
      double slack = std::max(a * opts.timeSlack, opts.timeFloorUs);
      bool worse = b > a + slack;
      bool better = b < a - slack;
      if (worse || better)
        row(name, "", what, fmt::format("{:.2f}", a), fmt::format("{:.2f}", b),
            worse ? "REGRESSION" : "better");
      r.regressions += worse;
      r.improvements += better;
    }
  }
  if (r.comparedTimes)
    r.coldGeomean = std::exp(logCold / double(r.comparedTimes));
  size_t shown = opts.verbose ? rows.size() : std::min<size_t>(rows.size(), 40);
  if (!rows.empty())
    r.table = fmt::format("{:<48} {:<16} {:<18} {:>8} {:>8}\n", "kernel",
                          "variant", "metric", "before", "after");
  for (size_t i = 0; i < shown; ++i)
    r.table += rows[i] + "\n";
  if (shown < rows.size())
    r.table += fmt::format("... and {} more rows (-v shows all)\n",
                           rows.size() - shown);
  return r;
}

namespace {

/// Measures `sel` as `kgen baseline`/`diff` do; prints build failures.
/// Kernels of `reuse` (saved with the same ptxas) whose PTX is unchanged
/// keep its numbers rather than being assembled again.
bool measure(const Selection &sel, const codegen::CompileOptions &base,
             unsigned threads, const BaselineTools &t, bool keepText,
             Baseline &out, std::vector<Job> &jobs,
             const Baseline *reuse = nullptr) {
  std::string err;
  if (!planJobs(sel, jobs, err)) {
    llvm::errs() << "kgen: error: " << err << "\n";
    return false;
  }
  MeasureOptions m;
  m.keepText = keepText;
  m.ptxas = findTool("ptxas", t.ptxas, t.cudaPath, err);
  if (m.ptxas.empty()) {
    llvm::errs() << "kgen: error: baselines need ptxas: " << err << "\n";
    return false;
  }
  std::string noSass;
  m.cuobjdump = findTool("cuobjdump", t.cuobjdump, t.cudaPath, noSass);
  out.ptxas = toolVersion(m.ptxas);
  out.selection = sel;
  std::map<std::string, const KernelMetrics *> known;
  if (reuse && reuse->ptxas == out.ptxas) {
    for (const KernelMetrics &k : reuse->kernels)
      known[k.name] = &k;
    m.known = &known;
  }
  size_t reused = measureJobs(jobs, base, threads, m, out.kernels);
  if (reused)
    llvm::errs() << fmt::format("kgen: {} of {} kernels have the baseline's "
                                "PTX: their ptxas numbers are the "
                                "baseline's\n",
                                reused, jobs.size());
  bool ok = true;
  for (const Job &j : jobs)
    if (!j.ok) {
      llvm::errs() << "kgen: error: " << j.name << ": " << j.error << "\n";
      ok = false;
    }
  return ok;
}

} // namespace

/// Reads the GPU tables given into `b`; prints what is wrong.
static bool readGpuTables(const GpuTables &gpu, Baseline &b) {
  std::string err;
  bool ok =
      (gpu.numerics.empty() || readNumerics(gpu.numerics, b.numerics, err)) &&
      (gpu.times.empty() || readTimes(gpu.times, b.times, err));
  if (!ok)
    llvm::errs() << "kgen: error: " << err << "\n";
  return ok;
}

int saveBaseline(const std::string &path, const Selection &sel,
                 const codegen::CompileOptions &base, unsigned threads,
                 const BaselineTools &t, const GpuTables &gpu) {
  Baseline b;
  if (!readGpuTables(gpu, b))
    return 1;
  for (const auto &[name, n] : b.numerics)
    if (n.failed) {
      llvm::errs() << fmt::format("kgen: error: {} failed {} of its {} cases "
                                  "in {}: not a baseline to keep\n",
                                  name, n.failed, n.cases, gpu.numerics);
      return 1;
    }
  for (const auto &[name, c] : b.times)
    if (!c.pass) {
      llvm::errs() << fmt::format("kgen: error: case '{}' in {} did not pass "
                                  "({}): not a baseline to keep\n",
                                  name, gpu.times, c.status);
      return 1;
    }
  std::vector<Job> jobs;
  if (!measure(sel, base, threads, t, /*keepText=*/false, b, jobs))
    return 1;
  // Numerics of kernels outside the selection are not this baseline's.
  std::set<std::string> held;
  for (const KernelMetrics &k : b.kernels)
    held.insert(k.name);
  std::erase_if(b.numerics, [&](auto &n) { return !held.count(n.first); });
  if (!writeFile(path, writeBaseline(b)))
    return 1;
  size_t entries = 0;
  for (const KernelMetrics &k : b.kernels)
    entries += k.entries.size();
  llvm::outs() << fmt::format("kgen baseline: {} kernels, {} entries{} -> {}\n",
                              b.kernels.size(), entries,
                              b.numerics.empty() && b.times.empty()
                                  ? ""
                                  : fmt::format(", numerics of {} kernels, "
                                                "times of {} cases",
                                                b.numerics.size(),
                                                b.times.size()),
                              path);
  return 0;
}

int runDiff(const std::string &path, const DiffOptions &opts,
            bool failOnRegression, const std::string &lintConfig,
            const codegen::CompileOptions &base, unsigned threads,
            const BaselineTools &t, const GpuTables &gpu) {
  Baseline before, after;
  if (!readGpuTables(gpu, after))
    return 1;
  std::string err;
  if (!readBaseline(path, before, err)) {
    llvm::errs() << "kgen: error: " << err << "\n";
    return 1;
  }
  LintConfig config;
  if (!lintConfig.empty() && !loadLintConfig(lintConfig, config, err)) {
    llvm::errs() << "kgen: error: " << err << "\n";
    return 1;
  }
  std::vector<Job> jobs;
  bool built = measure(before.selection, base, threads, t, !lintConfig.empty(),
                       after, jobs, &before);
  int violations = 0;
  if (!lintConfig.empty())
    for (const KernelMetrics &k : after.kernels) {
      std::vector<bool> used;
      for (const std::string &v : lintKernel(config, k, used)) {
        llvm::errs() << "kgen: lint: " << k.name << " " << v << "\n";
        ++violations;
      }
    }
  if (after.ptxas != before.ptxas)
    llvm::errs() << fmt::format("kgen: note: the baseline was saved with "
                                "ptxas '{}', this is '{}': registers may "
                                "differ for that alone\n",
                                before.ptxas, after.ptxas);
  DiffResult d = diffBaselines(before, after, opts);
  llvm::outs() << d.table;
  llvm::outs() << fmt::format(
      "kgen diff: {} kernels against {} in {}: {} with changed PTX, {} "
      "regressions, {} improvements{}\n",
      after.kernels.size(), before.kernels.size(), path, d.changedPtx,
      d.regressions, d.improvements,
      lintConfig.empty() ? ""
                         : fmt::format(", {} lint violations", violations));
  if (!gpu.numerics.empty())
    llvm::outs() << fmt::format("kgen diff: numerics of {} kernels compared "
                                "({} in the baseline)\n",
                                d.comparedNumerics, before.numerics.size());
  if (!gpu.times.empty())
    llvm::outs() << fmt::format("kgen diff: times of {} cases compared ({} in "
                                "the baseline), cold geomean {:.3f}\n",
                                d.comparedTimes, before.times.size(),
                                d.coldGeomean);
  if (!built || violations)
    return 1;
  return failOnRegression && d.regressions ? 1 : 0;
}

} // namespace kgen::tools
