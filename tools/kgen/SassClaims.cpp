//===- SassClaims.cpp - Schedule claims checked in SASS -------------------===//
#include "SassClaims.h"

#include "GpuRecords.h"
#include "Lint.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <fmt/format.h>

namespace kgen::tools {
namespace json = llvm::json;

namespace {

/// Whether a rule of `lint` that selects the entry requires `opcode` in its
/// SASS: the lint's rule is the claim, so the two cannot drift apart.
bool lintRequires(const LintConfig *lint, const KernelMetrics &k,
                  const EntryMetrics &e, llvm::StringRef opcode) {
  if (!lint)
    return false;
  return llvm::any_of(lint->rules, [&](const LintRule &r) {
    return r.selects(k, e) &&
           llvm::any_of(r.requireSass, [&](const LintPattern &p) {
             return p.re->match(opcode);
           });
  });
}

} // namespace

bool checkSassClaims(const std::string &kernelsDir, const std::string &sassTsv,
                     const LintConfig *lint, SassCheck &out, std::string &err) {
  std::map<std::pair<std::string, std::string>, SassCounts> sass;
  if (!readSass(sassTsv, sass, err))
    return false;
  out = SassCheck{};
  out.entries = int(sass.size());
  std::string manifest;
  if (!readSmallFile(kernelsDir + "/manifest.tsv", manifest, err))
    return false;
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(manifest).split(lines, '\n', -1, false);
  for (llvm::StringRef line : lines) {
    llvm::SmallVector<llvm::StringRef> f;
    line.split(f, '\t');
    int64_t length;
    if (line.starts_with("#") || f.size() < 5 || f[4].getAsInteger(10, length))
      continue;
    KernelMetrics k;
    k.name = f[0].str();
    k.op = f[1].str();
    k.dtype = f[2].str();
    k.arch = f[3].str();
    k.length = length;
    const std::string &kernel = k.name;
    std::string text;
    if (!readSmallFile(kernelsDir + "/" + kernel + ".json", text, err))
      return false;
    llvm::Expected<json::Value> spec = json::parse(text);
    const json::Array *variants =
        spec && spec->getAsObject() ? spec->getAsObject()->getArray("variants")
                                    : nullptr;
    if (!variants) {
      if (!spec)
        llvm::consumeError(spec.takeError());
      err = kernel + ".json: not a kgen spec";
      return false;
    }
    for (const json::Value &v : *variants) {
      const json::Object *o = v.getAsObject();
      auto entry = o ? o->getString("entry") : std::nullopt;
      if (!entry) {
        err = kernel + ".json: a variant without an entry";
        return false;
      }
      auto it = sass.find({kernel, entry->str()});
      if (it == sass.end()) {
        err = fmt::format("{}: no SASS of {} {} (tune_check.sh's sass.tsv)",
                          sassTsv, kernel, entry->str());
        return false;
      }
      const SassCounts &c = it->second;
      const json::Object *schedule = o->getObject("schedule");
      EntryMetrics e;
      e.variant = entryVariant(kernel, entry->str());
      bool wants128 = lintRequires(lint, k, e, "LDG.E.128");
      bool wantsPrefetch =
          schedule && schedule->getInteger("prefetch_blocks").value_or(0) > 0;
      bool wantsCluster = o->getInteger("cluster").value_or(0) > 0;
      auto claim = [&](bool wants, int64_t found, int &claimed, int &seen,
                       const char *what) {
        if (!wants)
          return;
        ++claimed;
        if (found > 0)
          ++seen;
        else
          out.misses.push_back(
              fmt::format("{} {}: no {}", kernel, entry->str(), what));
      };
      claim(wants128, c.loads128, out.loads128, out.loads128Found,
            "128-bit loads");
      claim(wantsPrefetch, c.prefetch, out.prefetch, out.prefetchFound,
            "L2 prefetches");
      claim(wantsCluster, c.cluster, out.cluster, out.clusterFound,
            "cluster barriers");
    }
  }
  return true;
}

} // namespace kgen::tools
