//===- SassClaims.cpp - Schedule claims checked in SASS -------------------===//
#include "SassClaims.h"

#include "GpuRecords.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"

#include <fmt/format.h>

namespace kgen::tools {
namespace json = llvm::json;

bool checkSassClaims(const std::string &kernelsDir, const std::string &sassTsv,
                     SassCheck &out, std::string &err) {
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
    std::string kernel = f[0].str(), text;
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
      const json::Object *align = o->getObject("tensor_align");
      // As ops/lint.json's rule: `_vec` variants of 16-byte-aligned rows a
      // whole number of 8-element chunks long (or of any length: dynamic).
      bool aligned =
          align && !align->empty() && llvm::all_of(*align, [](const auto &kv) {
            return kv.second.getAsInteger().value_or(0) >= 16;
          });
      bool wants128 = llvm::StringRef(*entry).contains("_vec") && aligned &&
                      length % 8 == 0;
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
