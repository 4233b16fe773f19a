//===- Lint.h - Rules each compiled kernel must meet -----------*- C++ -*-===//
//
// `kgen lint --config FILE` checks every kernel of a selection against the
// rules of a JSON file (ops/lint.json for kgen's own ops; users write one for
// theirs). A rule selects entries by op, dtype, arch, length and variant and
// sets limits on ptxas's numbers and patterns the entry's PTX or SASS must
// or must not contain. For each limit the last rule that sets it and selects
// the entry decides, so an exception follows the general rule; patterns of
// every selecting rule apply. docs/tools.md documents the format.
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_TOOLS_KGEN_LINT_H
#define KGEN_TOOLS_KGEN_LINT_H

#include "Measure.h"

#include "llvm/Support/Regex.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kgen::tools {

struct LintPattern {
  std::string text;
  std::shared_ptr<llvm::Regex> re;
};

struct LintRule {
  std::string why;
  std::vector<std::string> ops, dtypes, archs;      ///< empty: any
  std::vector<int64_t> lengths;                     ///< empty: any; 0 = dynamic
  int64_t lengthMultiple = 1; ///< lengths it divides (0, dynamic, included)
  std::optional<LintPattern> variants;              ///< on the variant's name
  std::vector<std::pair<std::string, int64_t>> max; ///< entryFields() keys
  std::vector<LintPattern> requirePtx, forbidPtx, requireSass, forbidSass;
  bool selects(const KernelMetrics &k, const EntryMetrics &e) const;
  bool hasSass() const { return !requireSass.empty() || !forbidSass.empty(); }
};

struct LintConfig {
  std::string path;
  std::vector<LintRule> rules;
  bool hasSass() const;
};

/// Reads and checks a lint file: unknown keys, ops, dtypes, archs, metric
/// names and bad regular expressions are errors ("FILE: rules[2].max: ...").
bool loadLintConfig(const std::string &path, LintConfig &out, std::string &err);

/// The violations of one kernel, one line each ("VARIANT: what (rule N:
/// why)"). `used[i]` is set when rule i selected some entry.
std::vector<std::string> lintKernel(const LintConfig &config,
                                    const KernelMetrics &k,
                                    std::vector<bool> &used);

struct LintOptions {
  std::string config;    ///< "" : no rules, only the report
  std::string ptxas;     ///< "" : found in cudaPath or on PATH
  std::string cuobjdump; ///< "" : found likewise; SASS skipped without it
  std::string cudaPath;
  bool verbose = false; ///< a line per entry
};

/// `kgen lint`: returns the exit code (1 on a violation or an error).
int runLint(const LintOptions &opts, const Selection &sel,
            const codegen::CompileOptions &base, unsigned threads);

} // namespace kgen::tools

#endif // KGEN_TOOLS_KGEN_LINT_H
