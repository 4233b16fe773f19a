//===- Lint.cpp - Limits and patterns each compiled kernel must meet ------===//
#include "Lint.h"
#include "Toolkit.h"

#include "codegen/Pipeline/Pipeline.h"
#include "dsl/Registry.h"
#include "runtime/Json.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <fmt/format.h>
#include <set>

namespace kgen::tools {

namespace json = kgen::rt::json;

namespace {

template <typename List, typename T> bool has(const List &l, const T &x) {
  return std::find(l.begin(), l.end(), x) != l.end();
}

/// Reads one rule; errors name the member ("rules[2].max.registers").
class RuleReader {
public:
  RuleReader(std::string where, std::string &err)
      : where(std::move(where)), err(err) {}

  bool read(const json::Value &v, LintRule &r) {
    if (v.kind != json::Value::Kind::Object)
      return fail(where, "must be an object");
    static const std::set<std::string> keys = {
        "why",        "ops",          "dtypes",
        "archs",      "lengths",      "length_multiple",
        "variants",   "max",          "require_ptx",
        "forbid_ptx", "require_sass", "forbid_sass"};
    for (const auto &[key, value] : v.object)
      if (!keys.count(key))
        return fail(where, fmt::format("unknown key '{}'; the keys: {}", key,
                                       llvm::join(keys, ", ")));
    if (const json::Value *w = v.find("why")) {
      if (w->kind != json::Value::Kind::String)
        return fail(where + ".why", "must be a string");
      r.why = w->string;
    }
    if (!strings(v, "ops", r.ops) || !strings(v, "dtypes", r.dtypes) ||
        !strings(v, "archs", r.archs))
      return false;
    for (const std::string &o : r.ops)
      if (!findOp(o))
        return fail(where + ".ops", fmt::format("no op '{}' is registered", o));
    for (const std::string &d : r.dtypes)
      if (!parseDType(d))
        return fail(where + ".dtypes", fmt::format("unknown dtype '{}'", d));
    for (const std::string &a : r.archs)
      if (!codegen::findArch(a))
        return fail(where + ".archs", fmt::format("unknown arch '{}'", a));
    if (const json::Value *l = v.find("lengths")) {
      if (l->kind != json::Value::Kind::Array)
        return fail(where + ".lengths", "must be an array of integers");
      for (const json::Value &n : l->array) {
        if (!n.isInteger || n.integer < 0)
          return fail(where + ".lengths",
                      "must hold integers >= 0 (0: the dynamic kernel)");
        r.lengths.push_back(n.integer);
      }
    }
    if (const json::Value *m = v.find("length_multiple")) {
      if (!m->isInteger || m->integer < 1)
        return fail(where + ".length_multiple", "must be an integer >= 1");
      r.lengthMultiple = m->integer;
    }
    if (const json::Value *p = v.find("variants")) {
      if (p->kind != json::Value::Kind::String)
        return fail(where + ".variants", "must be a regular expression");
      LintPattern pat;
      if (!pattern(where + ".variants", p->string, pat))
        return false;
      r.variants = pat;
    }
    if (const json::Value *m = v.find("max")) {
      if (m->kind != json::Value::Kind::Object)
        return fail(where + ".max", "must be an object of limits");
      for (const auto &[key, value] : m->object) {
        bool known =
            std::any_of(entryFields().begin(), entryFields().end(),
                        [&](const MetricField &f) { return key == f.key; });
        if (!known) {
          std::vector<std::string> names;
          for (const MetricField &f : entryFields())
            names.push_back(f.key);
          return fail(where + ".max",
                      fmt::format("unknown metric '{}'; the metrics: {}", key,
                                  llvm::join(names, ", ")));
        }
        if (!value.isInteger || value.integer < 0)
          return fail(where + ".max." + key, "must be an integer >= 0");
        r.max.emplace_back(key, value.integer);
      }
    }
    return patterns(v, "require_ptx", r.requirePtx) &&
           patterns(v, "forbid_ptx", r.forbidPtx) &&
           patterns(v, "require_sass", r.requireSass) &&
           patterns(v, "forbid_sass", r.forbidSass);
  }

private:
  std::string where;
  std::string &err;

  bool fail(const std::string &at, const std::string &what) {
    err = at + ": " + what;
    return false;
  }

  bool strings(const json::Value &v, const char *key,
               std::vector<std::string> &out) {
    const json::Value *a = v.find(key);
    if (!a)
      return true;
    if (a->kind != json::Value::Kind::Array)
      return fail(where + "." + key, "must be an array of strings");
    for (const json::Value &s : a->array) {
      if (s.kind != json::Value::Kind::String)
        return fail(where + "." + key, "must be an array of strings");
      out.push_back(s.string);
    }
    return true;
  }

  bool pattern(const std::string &at, const std::string &text,
               LintPattern &out) {
    auto re = std::make_shared<llvm::Regex>(text, llvm::Regex::Newline);
    std::string why;
    if (!re->isValid(why))
      return fail(at,
                  fmt::format("bad regular expression '{}': {}", text, why));
    out = {text, re};
    return true;
  }

  bool patterns(const json::Value &v, const char *key,
                std::vector<LintPattern> &out) {
    std::vector<std::string> texts;
    if (!strings(v, key, texts))
      return false;
    for (size_t i = 0; i < texts.size(); ++i) {
      LintPattern p;
      if (!pattern(fmt::format("{}.{}[{}]", where, key, i), texts[i], p))
        return false;
      out.push_back(p);
    }
    return true;
  }
};

/// The line of `text` holding the first match of `re`, trimmed.
std::string matchedLine(const std::string &text, llvm::Regex &re) {
  llvm::SmallVector<llvm::StringRef> m;
  if (!re.match(text, &m))
    return "";
  size_t at = m[0].data() - text.data();
  size_t from = text.rfind('\n', at);
  from = from == std::string::npos ? 0 : from + 1;
  size_t to = text.find('\n', at);
  return llvm::StringRef(text).slice(from, to).trim().str();
}

} // namespace

bool LintRule::selects(const KernelMetrics &k, const EntryMetrics &e) const {
  return (ops.empty() || has(ops, k.op)) &&
         (dtypes.empty() || has(dtypes, k.dtype)) &&
         (archs.empty() || has(archs, k.arch)) &&
         (lengths.empty() || has(lengths, k.length)) &&
         k.length % lengthMultiple == 0 &&
         (!variants || variants->re->match(e.variant));
}

bool LintConfig::hasSass() const {
  return std::any_of(rules.begin(), rules.end(),
                     [](const LintRule &r) { return r.hasSass(); });
}

bool loadLintConfig(const std::string &path, LintConfig &out,
                    std::string &err) {
  json::Value doc;
  if (!readJsonFile(path, doc, err))
    return false;
  std::string why;
  auto fail = [&](const std::string &what) {
    err = fmt::format("{}: {}", path, what);
    return false;
  };
  if (doc.kind != json::Value::Kind::Object)
    return fail("must be an object with \"rules\"");
  for (const auto &[key, value] : doc.object)
    if (key != "rules" && key != "about")
      return fail(fmt::format("unknown key '{}'; the keys: about, rules", key));
  const json::Value *rules = doc.find("rules");
  if (!rules || rules->kind != json::Value::Kind::Array)
    return fail("\"rules\" must be an array of rules");
  out.path = path;
  out.rules.clear();
  for (size_t i = 0; i < rules->array.size(); ++i) {
    LintRule r;
    RuleReader reader(fmt::format("rules[{}]", i), why);
    if (!reader.read(rules->array[i], r))
      return fail(why);
    out.rules.push_back(std::move(r));
  }
  return true;
}

std::vector<std::string> lintKernel(const LintConfig &config,
                                    const KernelMetrics &k,
                                    std::vector<bool> &used) {
  std::vector<std::string> out;
  used.resize(config.rules.size());
  auto ruleName = [&](size_t i) {
    const LintRule &r = config.rules[i];
    return r.why.empty() ? fmt::format("rule {}", i)
                         : fmt::format("rule {}: {}", i, r.why);
  };
  for (const EntryMetrics &e : k.entries) {
    // The last selecting rule that sets a limit decides it.
    std::map<std::string, std::pair<int64_t, size_t>> limits;
    for (size_t i = 0; i < config.rules.size(); ++i) {
      const LintRule &r = config.rules[i];
      if (!r.selects(k, e))
        continue;
      used[i] = true;
      for (const auto &[key, value] : r.max)
        limits[key] = {value, i};
      // Patterns one text must (or must not) hold.
      auto check = [&](const std::vector<LintPattern> &required,
                       const std::vector<LintPattern> &forbidden,
                       const char *kind, const std::string &text) {
        for (const LintPattern &p : required)
          if (!p.re->match(text))
            out.push_back(fmt::format("{}: {} lacks /{}/ ({})", e.variant, kind,
                                      p.text, ruleName(i)));
        for (const LintPattern &p : forbidden)
          if (p.re->match(text))
            out.push_back(fmt::format("{}: {} has /{}/: `{}` ({})", e.variant,
                                      kind, p.text, matchedLine(text, *p.re),
                                      ruleName(i)));
      };
      check(r.requirePtx, r.forbidPtx, "PTX", e.ptx);
      if (e.sassInstructions >= 0) // no cuobjdump: runLint says so once
        check(r.requireSass, r.forbidSass, "SASS", e.sass);
    }
    for (const MetricField &f : entryFields()) {
      auto it = limits.find(f.key);
      int64_t value = e.*f.field;
      if (it == limits.end() || value < 0 || value <= it->second.first)
        continue;
      out.push_back(fmt::format("{}: {} {} > {} ({})", e.variant, f.key, value,
                                it->second.first, ruleName(it->second.second)));
    }
  }
  return out;
}

int runLint(const LintOptions &o, const Selection &sel,
            const codegen::CompileOptions &base, unsigned threads) {
  auto fail = [](const std::string &msg) {
    llvm::errs() << "kgen: error: " << msg << "\n";
    return 1;
  };
  LintConfig config;
  std::string err;
  if (!o.config.empty() && !loadLintConfig(o.config, config, err))
    return fail(err);
  std::vector<Job> jobs;
  if (!planJobs(sel, jobs, err))
    return fail(err);
  MeasureOptions m;
  m.keepText = true;
  m.ptxas = findTool("ptxas", o.ptxas, o.cudaPath, err);
  if (m.ptxas.empty())
    return fail("lint needs ptxas: " + err);
  std::string noSass;
  m.cuobjdump = findTool("cuobjdump", o.cuobjdump, o.cudaPath, noSass);
  if (m.cuobjdump.empty() && !o.cuobjdump.empty())
    return fail(noSass);
  std::vector<KernelMetrics> kernels;
  measureJobs(jobs, base, threads, m, kernels);

  int failures = 0, violations = 0;
  for (const Job &j : jobs)
    if (!j.ok) {
      llvm::errs() << "kgen: error: " << j.name << ": " << j.error << "\n";
      ++failures;
    }
  std::vector<bool> used(config.rules.size());
  size_t entries = 0;
  const KernelMetrics *most = nullptr;
  const EntryMetrics *mostEntry = nullptr;
  if (o.verbose)
    llvm::outs() << fmt::format("{:<48} {:<16} {:>4} {:>5} {:>6} {:>6} {:>6} "
                                "{:>6}\n",
                                "kernel", "variant", "regs", "stack", "spillS",
                                "spillL", "smem", "sass");
  for (const KernelMetrics &k : kernels) {
    std::vector<bool> u;
    for (const std::string &v : lintKernel(config, k, u)) {
      llvm::errs() << "kgen: lint: " << k.name << " " << v << "\n";
      ++violations;
    }
    for (size_t i = 0; i < u.size(); ++i)
      used[i] = used[i] || u[i];
    for (const EntryMetrics &e : k.entries) {
      ++entries;
      if (!mostEntry || e.registers > mostEntry->registers)
        most = &k, mostEntry = &e;
      if (o.verbose)
        llvm::outs() << fmt::format(
            "{:<48} {:<16} {:>4} {:>5} {:>6} {:>6} {:>6} {:>6}\n", k.name,
            e.variant, e.registers, e.stackBytes, e.spillStores, e.spillLoads,
            e.sharedBytes, e.sassInstructions);
    }
  }
  // A rule that selected nothing is likely a typo, or out of this selection.
  for (size_t i = 0; i < used.size(); ++i)
    if (!used[i] && !kernels.empty())
      llvm::errs() << fmt::format(
          "kgen: note: {} rules[{}]{} selected no "
          "entry of this selection\n",
          config.path, i,
          config.rules[i].why.empty() ? "" : " (" + config.rules[i].why + ")");
  if (config.hasSass() && m.cuobjdump.empty())
    llvm::errs() << "kgen: note: SASS rules not checked: " << noSass << "\n";
  llvm::outs() << fmt::format(
      "kgen lint: {} kernels, {} entries, {} rules{}: {} violations, {} "
      "failed to build{}\n",
      kernels.size(), entries, config.rules.size(),
      m.cuobjdump.empty() ? "" : " (with SASS)", violations, failures,
      mostEntry
          ? fmt::format("; most registers {} ({} {})", mostEntry->registers,
                        most->name, mostEntry->variant)
          : "");
  return violations || failures ? 1 : 0;
}

} // namespace kgen::tools
