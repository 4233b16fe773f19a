//===- Tune.cpp - kgen tune: measured choices of the schedule -------------===//
#include "Tune.h"

#include "Bundle.h"
#include "GpuRecords.h"
#include "Lint.h"
#include "SassClaims.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <set>

namespace kgen::tools {
namespace {

namespace json = llvm::json;

constexpr size_t kMaxCandidates = 64;
constexpr size_t kMaxCases = 1024;

int fail(const std::string &msg) {
  llvm::errs() << "kgen: error: " << msg << "\n";
  return 1;
}

/// One change to the base: `option` of `pass` set to `value` (the pass's
/// text of it).
struct Candidate {
  std::string name, pass, option, value;
  bool same = false; ///< its kernels' PTX is the base's: not timed
};

/// The candidates of a space file: {"pass": {"option": [value, ...]}}, each
/// value as a profile takes it. Each is read through parseProfile, so that
/// a space accepts exactly what a profile does.
bool readSpace(const std::string &path, std::vector<Candidate> &out,
               std::string &err) {
  std::string text;
  if (!readSmallFile(path, text, err))
    return false;
  llvm::Expected<json::Value> parsed = json::parse(text);
  if (!parsed) {
    err = path + ": " + llvm::toString(parsed.takeError());
    return false;
  }
  const json::Object *passes = parsed->getAsObject();
  if (!passes) {
    err = path + ": a space maps passes to {option: [values]}";
    return false;
  }
  for (const auto &[pass, options] : *passes) {
    const json::Object *o = options.getAsObject();
    if (!o) {
      err = path + ": '" + pass.str() + "' must map options to [values]";
      return false;
    }
    for (const auto &[option, values] : *o) {
      const json::Array *alts = values.getAsArray();
      if (!alts || alts->empty()) {
        err = path + ": '" + option.str() + "' of '" + pass.str() +
              "' must list its values to try, a non-empty array";
        return false;
      }
      for (const json::Value &alt : *alts) {
        json::Object one{{pass.str(), json::Object{{option.str(), alt}}}};
        std::string probe;
        llvm::raw_string_ostream os(probe);
        os << json::Value(
            json::Object{{"profile", "probe"}, {"options", std::move(one)}});
        codegen::TuningProfile p;
        if (!codegen::parseProfile(probe, path, p, err))
          return false;
        Candidate c{"", pass.str(), option.str(),
                    p.options[pass.str()][option.str()]};
        c.name = c.option + "=" + c.value;
        if (llvm::any_of(out, [&](auto &o) { return o.name == c.name; }))
          continue;
        out.push_back(std::move(c));
      }
    }
  }
  if (out.empty()) {
    err = path + ": the space lists no value to try";
    return false;
  }
  if (out.size() > kMaxCandidates) {
    err = path + ": more than " + std::to_string(kMaxCandidates) +
          " candidates; tune fewer options at once";
    return false;
  }
  return true;
}

/// Whether every .ptx of folder `a` is byte-identical to `b`'s.
bool samePtx(const std::string &a, const std::string &b) {
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(a, ec), end; it != end && !ec;
       it.increment(ec)) {
    if (!llvm::StringRef(it->path()).ends_with(".ptx"))
      continue;
    std::string x, y, err;
    std::string other = b + "/" + llvm::sys::path::filename(it->path()).str();
    if (!readSmallFile(it->path(), x, err) || !readSmallFile(other, y, err) ||
        x != y)
      return false;
  }
  return !ec;
}

} // namespace

int tunePlan(const TunePlan &plan, const Selection &sel,
             const codegen::CompileOptions &base, unsigned threads) {
  if (sel.archs.size() != 1)
    return fail("tune plan times one arch's kernels: give --archs ARCH");
  const codegen::Arch *arch = codegen::findArch(sel.archs[0]);
  if (!arch)
    return fail("unknown arch '" + sel.archs[0] + "'");
  std::string err;
  codegen::TuningProfile baseProfile;
  if (base.profile)
    baseProfile = *base.profile;
  else if (!codegen::loadProfile(arch->profile, baseProfile, err))
    return fail(err);
  std::vector<Candidate> candidates;
  if (!readSpace(plan.space, candidates, err))
    return fail(err);
  // The cases: each kernel of the selection whose one dim is its row
  // length, at the selection's lengths, at each of `rows`.
  std::vector<Job> jobs;
  if (!planJobs(sel, jobs, err))
    return fail(err);
  std::vector<int64_t> lengths;
  for (int64_t l : sel.lengths)
    if (l > 0)
      lengths.push_back(l);
  std::vector<std::string> cases;
  std::map<std::string, std::string> skipped;
  for (const Job &j : jobs) {
    std::map<std::string, int64_t> dims;
    Kernel k = j.op->instantiate(j.dtype, j.length, dims); // planJobs's own
    if (llvm::any_of(k.dims, [&](auto &d) { return d != j.op->mainDim; })) {
      skipped[j.op->name] = "dims besides " + j.op->mainDim;
      continue;
    }
    std::vector<int64_t> at =
        j.length ? std::vector<int64_t>{j.length} : lengths;
    for (int64_t length : at)
      for (int64_t rows : plan.rows)
        cases.push_back(fmt::format(
            "op={} dtype={} length={} rows={} kernel={} misalign=0 pad=0 "
            "values=normal vseed=1",
            j.op->name, kgen::name(j.dtype), length, rows,
            j.length ? "specialized" : "dyn"));
  }
  for (const auto &[op, why] : skipped)
    llvm::errs() << "kgen: note: tune leaves " << op << " out (" << why
                 << ")\n";
  if (cases.empty())
    return fail("the selection gives no case to time (a dynamic kernel "
                "needs a length besides 0 in --lengths)");
  if (cases.size() > kMaxCases)
    return fail(fmt::format("{} cases, past the {} a run times: select "
                            "fewer ops, lengths or rows",
                            cases.size(), kMaxCases));

  std::string dir = plan.run + "/candidates";
  if (!makeFolder(plan.run) || !makeFolder(dir))
    return 1;
  codegen::Compiler compiler;
  auto build = [&](const std::string &name, codegen::TuningProfile p) {
    p.name = name;
    p.chain.clear();
    if (!compiler.checkProfile(p, arch->name(), err)) {
      fail(err);
      return false;
    }
    std::string folder = dir + "/" + name;
    if (!makeFolder(folder) ||
        !writeFile(folder + "/profile.json", codegen::writeProfile(p)))
      return false;
    codegen::CompileOptions opts = base;
    opts.profile = std::move(p);
    llvm::outs() << "candidate " << name << ":\n";
    return emitBundle(folder + "/kernels", sel, opts, threads) == 0;
  };
  codegen::TuningProfile resolved = baseProfile;
  resolved.about = "The base of this run: " + baseProfile.name + " (" +
                   llvm::join(baseProfile.chain, " <- ") + ").";
  if (!build("base", resolved))
    return 1;
  json::Array listed;
  std::string timed = "base\n";
  for (Candidate &c : candidates) {
    codegen::TuningProfile p = resolved;
    p.options[c.pass][c.option] = c.value;
    p.about = "The base with " + c.pass + " " + c.name + ".";
    if (!build(c.name, p))
      return 1;
    c.same = samePtx(dir + "/" + c.name + "/kernels", dir + "/base/kernels");
    if (!c.same)
      timed += c.name + "\n";
    listed.push_back(json::Object{{"name", c.name},
                                  {"pass", c.pass},
                                  {"option", c.option},
                                  {"value", c.value},
                                  {"same_as_base", c.same}});
  }
  json::Object state{{"kgen_tune", 1},
                     {"arch", arch->name()},
                     {"base", baseProfile.name},
                     {"cases", int64_t(cases.size())},
                     {"candidates", std::move(listed)}};
  std::string stateText;
  llvm::raw_string_ostream os(stateText);
  os << llvm::formatv("{0:2}", json::Value(std::move(state))) << "\n";
  if (!writeFile(plan.run + "/state.json", stateText) ||
      !writeFile(plan.run + "/cases.txt", llvm::join(cases, "\n") + "\n") ||
      !writeFile(plan.run + "/timed.txt", timed))
    return 1;
  llvm::outs() << fmt::format(
      "tune plan: {} candidates ({} the same kernels as the base), {} cases "
      "-> {}\n  on the GPU: bash bench/tune_check.sh {} KGEN_FUZZ\n  then: "
      "kgen tune pick {}\n",
      candidates.size(),
      llvm::count_if(candidates, [](auto &c) { return c.same; }), cases.size(),
      plan.run, plan.run, plan.run);
  return 0;
}

namespace {

/// A case's times, with how much slower a candidate may be there and count
/// as noise (the base's).
struct Times : CaseTimes {
  double coldSlack = 0, warmSlack = 0;
};

bool readCandidateTimes(const std::string &path,
                        std::map<std::string, Times> &out, std::string &err) {
  std::map<std::string, CaseTimes> read;
  if (!readTimes(path, read, err))
    return false;
  for (auto &[name, t] : read)
    out[name] = Times{t};
  return true;
}

double geomean(const std::vector<double> &v) {
  double s = 0;
  for (double x : v)
    s += std::log(x);
  return v.empty() ? 1 : std::exp(s / double(v.size()));
}

} // namespace

int tunePick(const std::string &run, double noise,
             const std::string &lintConfig) {
  std::string text, err;
  LintConfig lint;
  if (!lintConfig.empty() && !loadLintConfig(lintConfig, lint, err))
    return fail(err);
  if (!readSmallFile(run + "/state.json", text, err))
    return fail(err + " (a folder of kgen tune plan?)");
  llvm::Expected<json::Value> parsed = json::parse(text);
  if (!parsed)
    return fail(run + "/state.json: " + llvm::toString(parsed.takeError()));
  const json::Object *state = parsed->getAsObject();
  const json::Array *list = state ? state->getArray("candidates") : nullptr;
  auto arch = state ? state->getString("arch") : std::nullopt;
  auto baseName = state ? state->getString("base") : std::nullopt;
  if (!list || !arch || !baseName)
    return fail(run + "/state.json: not kgen tune plan's state");
  std::vector<Candidate> candidates;
  for (const json::Value &v : *list) {
    const json::Object *o = v.getAsObject();
    if (!o || !o->getString("name") || !o->getString("pass") ||
        !o->getString("option") || !o->getString("value"))
      return fail(run + "/state.json: a candidate lacks name, pass, option "
                        "or value");
    candidates.push_back(
        {o->getString("name")->str(), o->getString("pass")->str(),
         o->getString("option")->str(), o->getString("value")->str(),
         o->getBoolean("same_as_base").value_or(false)});
  }
  std::string dir = run + "/candidates/";
  std::map<std::string, Times> first, again;
  if (!readCandidateTimes(dir + "base/times.tsv", first, err) ||
      !readCandidateTimes(dir + "base/times-again.tsv", again, err))
    return fail(err + " (run bench/tune_check.sh on the GPU first)");
  // The base's case time: the geometric mean of its two runs; the noise:
  // the larger of `noise` and the 90th percentile of their spread.
  std::map<std::string, Times> base;
  std::vector<double> spread;
  for (auto &[name, t] : first) {
    auto it = again.find(name);
    if (!t.pass || it == again.end() || !it->second.pass)
      return fail("the base failed or skipped case '" + name +
                  "': " + t.status);
    Times b = t;
    b.cold = std::sqrt(t.cold * it->second.cold);
    b.warm = std::sqrt(t.warm * it->second.warm);
    double coldSpread = std::abs(std::log(t.cold / it->second.cold));
    double warmSpread = std::abs(std::log(t.warm / it->second.warm));
    spread.push_back(coldSpread);
    spread.push_back(warmSpread);
    // A case whose own two runs differ more (a short launch) gets twice
    // that spread as its slack.
    b.coldSlack = std::exp(2 * coldSpread) - 1;
    b.warmSlack = std::exp(2 * warmSpread) - 1;
    base[name] = b;
  }
  std::sort(spread.begin(), spread.end());
  double measured =
      spread.empty() ? 0 : std::exp(spread[spread.size() * 9 / 10]) - 1;
  noise = std::max(noise, measured);
  for (auto &[name, b] : base) {
    b.coldSlack = std::max(b.coldSlack, noise);
    b.warmSlack = std::max(b.warmSlack, noise);
  }

  // The machine code against the schedules' claims, where tune_check.sh
  // could read it (ptxas and cuobjdump on the GPU machine). A candidate
  // whose SASS lacks a claim cannot win.
  std::string sass;
  std::set<std::string> sassMisses;
  std::vector<std::string> checked = {"base"};
  for (const Candidate &c : candidates)
    if (!c.same)
      checked.push_back(c.name);
  for (const std::string &name : checked) {
    std::string tsv = dir + name + "/sass.tsv";
    if (!llvm::sys::fs::exists(tsv))
      continue;
    SassCheck s;
    if (!checkSassClaims(dir + name + "/kernels", tsv,
                         lintConfig.empty() ? nullptr : &lint, s, err))
      return fail(err);
    if (!s.misses.empty())
      sassMisses.insert(name);
    sass += fmt::format("| {} | {} | {}/{} | {}/{} | {}/{} | {} |\n", name,
                        s.entries, s.loads128Found, s.loads128, s.prefetchFound,
                        s.prefetch, s.clusterFound, s.cluster,
                        s.misses.empty()
                            ? std::string("as claimed")
                            : fmt::format("{} missing, first {}",
                                          s.misses.size(), s.misses.front()));
  }
  sass = sass.empty()
             ? "No sass.tsv (no ptxas or cuobjdump on the GPU machine): the "
               "machine code was not checked.\n"
             : "Entries whose SASS has each feature their schedule claims "
               "(found/claimed): 128-bit loads (where a rule of --config "
               "requires LDG.E.128), L2 prefetches (prefetch_blocks), "
               "cluster barriers.\n\n| kernels of | entries | 128-bit loads "
               "| prefetches | cluster barriers | verdict |\n"
               "|---|---|---|---|---|---|\n" +
                   sass;

  std::string table =
      "| candidate | cold geomean | graph geomean | worst case | verdict |\n"
      "|---|---|---|---|---|\n";
  std::map<std::string, std::pair<double, Candidate>> wins; // by option
  for (const Candidate &c : candidates) {
    if (c.same) {
      table += "| " + c.name + " | | | | the base's kernels |\n";
      continue;
    }
    std::map<std::string, Times> got;
    if (!readCandidateTimes(dir + c.name + "/times.tsv", got, err))
      return fail(err);
    std::vector<double> cold, warm;
    double worst = 0;
    int slower = 0; // cases slower past their slack
    std::string worstCase, failed;
    for (const auto &[name, b] : base) {
      auto it = got.find(name);
      if (it == got.end() || !it->second.pass) {
        failed =
            name + ": " + (it == got.end() ? "missing" : it->second.status);
        break;
      }
      cold.push_back(it->second.cold / b.cold);
      warm.push_back(it->second.warm / b.warm);
      slower += cold.back() > 1 + b.coldSlack || warm.back() > 1 + b.warmSlack;
      for (double r : {cold.back(), warm.back()})
        if (r > worst) {
          worst = r;
          worstCase = name;
        }
    }
    if (!failed.empty()) {
      table += "| " + c.name + " | | | | rejected: " + failed + " |\n";
      continue;
    }
    if (sassMisses.count(c.name)) {
      table += "| " + c.name +
               " | | | | rejected: its SASS lacks what its schedule claims "
               "(below) |\n";
      continue;
    }
    double gc = geomean(cold), gw = geomean(warm);
    double both = std::sqrt(gc * gw);
    bool wins1 = both < 1 - noise && slower == 0;
    std::string verdict = wins1              ? "faster"
                          : both > 1 + noise ? "slower"
                          : slower ? fmt::format("{} case(s) slower", slower)
                                   : "within noise";
    table += fmt::format("| {} | {:.3f} | {:.3f} | {:.3f} ({}) | {} |\n",
                         c.name, gc, gw, worst, worstCase, verdict);
    std::string key = c.pass + " " + c.option;
    if (wins1 && (!wins.count(key) || both < wins[key].first))
      wins[key] = {both, c};
  }

  // The base's own standing: its share of memcpy per case.
  std::string cases =
      "| case | MB | cold us | graph us | memcpy share "
      "cold | memcpy share graph |\n|---|---|---|---|---|---|\n";
  for (const auto &[name, b] : base)
    cases +=
        fmt::format("| {} | {:.1f} | {:.1f} | {:.1f} | {:.0f}% | {:.0f}% "
                    "|\n",
                    name, b.bytes / 1e6, b.cold, b.warm,
                    100 * b.memcpyCold / b.cold, 100 * b.memcpyWarm / b.warm);

  codegen::TuningProfile tuned;
  if (!codegen::loadProfile(dir + "base/profile.json", tuned, err))
    return fail(err);
  std::vector<std::string> changes;
  for (const auto &[key, win] : wins) {
    const Candidate &c = win.second;
    tuned.options[c.pass][c.option] = c.value;
    changes.push_back(c.pass + " " + c.name);
  }
  tuned.name = "tuned";
  tuned.about =
      changes.empty()
          ? "kgen tune " + run + ": no change beat " + baseName->str() +
                " past the noise; this is " + baseName->str() + "."
          : "kgen tune " + run + ": " + baseName->str() + " with " +
                llvm::join(changes, ", ") +
                " (each won alone; together they are untimed: confirm with "
                "a run that takes this as its base).";
  std::string summary = fmt::format(
      "# kgen tune {}\n\narch {}, base {}, {} cases; noise {:.1f}% (the "
      "base's two runs: {:.1f}%).\nRatios are candidate / base (below 1 is "
      "faster); a candidate wins when the geomean of its cold and graph "
      "geomeans is below 1 - noise and no case is slower than 1 + its "
      "slack (the noise, or twice the spread of the base's two runs of "
      "that case where larger).\n\n"
      "{}\n{}\n## The machine code\n\n{}\n## The base\n\n{}",
      run, arch->str(), baseName->str(), base.size(), 100 * noise,
      100 * measured, table,
      changes.empty() ? "No change won.\n"
                      : "Won: " + llvm::join(changes, ", ") + ".\n",
      sass, cases);
  if (!writeFile(run + "/summary.md", summary) ||
      !writeFile(run + "/profile.json", codegen::writeProfile(tuned)))
    return 1;
  llvm::outs() << summary << "\nwrote " << run << "/summary.md and " << run
               << "/profile.json\n";
  return 0;
}

} // namespace kgen::tools
