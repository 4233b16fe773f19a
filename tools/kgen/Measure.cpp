//===- Measure.cpp - What ptxas and cuobjdump say about each kernel -------===//
#include "Measure.h"
#include "Toolkit.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <fmt/format.h>

#include <atomic>
#include <regex>

namespace kgen::tools {

const std::vector<MetricField> &entryFields() {
  static const std::vector<MetricField> fields = {
      {"registers", &EntryMetrics::registers},
      {"barriers", &EntryMetrics::barriers},
      {"stack_bytes", &EntryMetrics::stackBytes},
      {"spill_stores", &EntryMetrics::spillStores},
      {"spill_loads", &EntryMetrics::spillLoads},
      {"shared_bytes", &EntryMetrics::sharedBytes},
      {"sass_instructions", &EntryMetrics::sassInstructions},
  };
  return fields;
}

std::string entryVariant(const std::string &kernel, const std::string &entry) {
  std::string prefix = kernel + "_";
  return llvm::StringRef(entry).starts_with(prefix)
             ? entry.substr(prefix.size())
             : entry;
}

bool parsePtxasReport(const std::string &report, const std::string &base,
                      std::vector<EntryMetrics> &out, std::string &err) {
  static const std::regex entry(R"(Compiling entry function '([^']+)')");
  static const std::regex frame(R"((\d+) bytes stack frame, (\d+) bytes spill )"
                                R"(stores, (\d+) bytes spill loads)");
  static const std::regex regs(R"(Used (\d+) registers)");
  static const std::regex bars(R"(used (\d+) barriers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  out.clear();
  std::vector<bool> seenFrame, seenRegs;
  llvm::SmallVector<llvm::StringRef> lines;
  llvm::StringRef(report).split(lines, '\n');
  for (llvm::StringRef line : lines) {
    std::string l = line.str();
    std::smatch m;
    if (std::regex_search(l, m, entry)) {
      EntryMetrics e;
      e.variant = entryVariant(base, m[1]);
      out.push_back(e);
      seenFrame.push_back(false);
      seenRegs.push_back(false);
      continue;
    }
    if (out.empty())
      continue;
    EntryMetrics &e = out.back();
    if (std::regex_search(l, m, frame)) {
      e.stackBytes = std::stoll(m[1]);
      e.spillStores = std::stoll(m[2]);
      e.spillLoads = std::stoll(m[3]);
      seenFrame.back() = true;
    } else if (std::regex_search(l, m, regs)) {
      e.registers = std::stoll(m[1]);
      if (std::regex_search(l, m, bars))
        e.barriers = std::stoll(m[1]);
      if (std::regex_search(l, m, smem))
        e.sharedBytes = std::stoll(m[1]);
      seenRegs.back() = true;
    }
  }
  for (size_t i = 0; i < out.size(); ++i)
    if (!seenFrame[i] || !seenRegs[i]) {
      err = fmt::format("ptxas -v gave no {} line for entry {}",
                        seenFrame[i] ? "registers" : "stack frame",
                        out[i].variant);
      return false;
    }
  if (out.empty()) {
    err = "ptxas -v reported no entry function";
    return false;
  }
  return true;
}

/// Splits `text` at each match of `head`, whose group 1 names the part.
static std::map<std::string, std::string> splitAt(const std::string &text,
                                                  const std::regex &head) {
  std::map<std::string, std::string> parts;
  std::string name;
  size_t from = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), head);
       it != std::sregex_iterator(); ++it) {
    if (!name.empty())
      parts[name] = text.substr(from, it->position() - from);
    name = (*it)[1];
    from = it->position();
  }
  if (!name.empty())
    parts[name] = text.substr(from);
  return parts;
}

std::map<std::string, std::string> ptxEntries(const std::string &ptx) {
  static const std::regex head(R"(\.entry\s+([A-Za-z_$][\w$]*)\s*\()");
  return splitAt(ptx, head);
}

std::map<std::string, std::string> sassFunctions(const std::string &sass) {
  static const std::regex head(R"(Function\s*:\s*(\S+))");
  return splitAt(sass, head);
}

int64_t countSassInstructions(const std::string &function) {
  static const std::regex inst(R"(/\*[0-9a-f]{4,}\*/\s+\S)");
  return std::distance(
      std::sregex_iterator(function.begin(), function.end(), inst),
      std::sregex_iterator());
}

static uint64_t fnv1a(const std::string &s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s)
    h = (h ^ c) * 0x100000001b3ull;
  return h;
}

size_t measureJobs(std::vector<Job> &jobs, const codegen::CompileOptions &base,
                   unsigned threads, const MeasureOptions &opts,
                   std::vector<KernelMetrics> &out) {
  std::vector<KernelMetrics> all(jobs.size());
  std::atomic<size_t> reused = 0;
  compileJobs(jobs, base, codegen::Stage::Ptx, threads, [&](Job &j) {
    KernelMetrics &k = all[&j - jobs.data()];
    k.name = j.name;
    k.op = j.op->name;
    k.dtype = kgen::name(j.dtype);
    k.arch = j.arch;
    k.length = j.length;
    k.ptxLines = std::count(j.art.ptx.begin(), j.art.ptx.end(), '\n');
    k.ptxHash = fnv1a(j.art.ptx);
    if (opts.known && opts.cuobjdump.empty()) {
      auto it = opts.known->find(j.name);
      if (it != opts.known->end() && it->second->ptxHash == k.ptxHash) {
        k.entries = it->second->entries;
        for (EntryMetrics &e : k.entries)
          e.sassInstructions = -1; // as measured without cuobjdump
        if (opts.keepText) {
          std::map<std::string, std::string> ptx = ptxEntries(j.art.ptx);
          for (EntryMetrics &e : k.entries)
            e.ptx = ptx[j.name + "_" + e.variant];
        }
        ++reused;
        j.art = codegen::Artifact();
        return;
      }
    }
    std::string cubin, report;
    if (!runPtxas(opts.ptxas, j.arch, j.art.ptx, /*verbose=*/true, cubin,
                  report, j.error) ||
        !parsePtxasReport(report, j.name, k.entries, j.error)) {
      j.ok = false;
      return;
    }
    std::map<std::string, std::string> sass;
    if (!opts.cuobjdump.empty()) {
      std::string text;
      if (!runCuobjdump(opts.cuobjdump, cubin, text, j.error)) {
        j.ok = false;
        return;
      }
      sass = sassFunctions(text);
    }
    std::map<std::string, std::string> ptx;
    if (opts.keepText)
      ptx = ptxEntries(j.art.ptx);
    for (EntryMetrics &e : k.entries) {
      std::string full = j.name + "_" + e.variant;
      if (auto it = sass.find(full); it != sass.end()) {
        e.sassInstructions = countSassInstructions(it->second);
        if (opts.keepText)
          e.sass = it->second;
      }
      if (opts.keepText)
        e.ptx = ptx[full];
    }
    // The PTX is kept above where asked; the rest of the artifact is not.
    j.art = codegen::Artifact();
  });
  out.clear();
  for (size_t i = 0; i < jobs.size(); ++i)
    if (jobs[i].ok)
      out.push_back(std::move(all[i]));
  return reused;
}

} // namespace kgen::tools
