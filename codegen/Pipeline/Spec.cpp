//===- Spec.cpp - The JSON spec of a compiled kernel ----------------------===//
#include "codegen/Pipeline/Spec.h"

#include "codegen/Pipeline/Pipeline.h"

#include "codegen/Transforms/Passes.h"
#include "runtime/Spec.h"

#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
namespace json = llvm::json;

namespace kgen::codegen {

static const char *accessName(Layout l) {
  switch (l) {
  case Layout::Rows:
    return "rows";
  case Layout::Vector:
    return "vector";
  case Layout::RowScalar:
    return "scalars";
  }
  return "?";
}

/// A kgen.abi entry ("ptr:x", "scalar:eps", "rows") as the spec's typed
/// slot: launchers read each slot's type without looking its param up.
static json::Object abiSlot(const Kernel &k, llvm::StringRef entry) {
  auto [slot, param] = entry.split(':');
  std::string type = slot == "ptr" ? "u64" : "i64";
  if (slot == "scalar")
    for (const ParamDecl &p : k.params)
      if (p.name == param)
        type = std::string(name(p.dtype));
  json::Object out{{"slot", slot.str()}, {"type", type}};
  if (slot != "rows")
    out["param"] = param.str();
  return out;
}

/// The launch rule of a variant, from the fields just written, by the
/// function the runtime applies to the same fields when it reads them.
static const char *launchRuleName(const json::Object &variant) {
  const json::Object *held = variant.getObject("launch_threads");
  int64_t chunks = held ? held->getInteger("chunks").value_or(0) : int64_t(0);
  return ::kgen::rt::launchRuleName(::kgen::rt::launchRuleOf(
      held != nullptr, chunks, variant.get("launch_rows_per_block") != nullptr,
      variant.get("domain_range") != nullptr));
}

std::string writeSpec(const Kernel &k, const KernelInfo &info,
                      const CompileOptions &opts, ModuleOp scheduled,
                      ModuleOp lowered, const std::string &hash) {
  std::vector<std::optional<int64_t>> known;
  json::Object dims;
  for (const std::string &d : k.dims) {
    auto it = opts.dims.find(d);
    known.push_back(it == opts.dims.end() ? std::nullopt
                                          : std::optional(it->second));
    if (it != opts.dims.end())
      dims[d] = it->second;
  }
  auto lenJson = [&](const Len &l) -> json::Value {
    if (auto n = l.tryEval(known))
      return *n;
    return l.str(k.dims);
  };
  json::Array params;
  for (const TensorDecl &t : k.tensors) {
    json::Object p{{"name", t.name},
                   {"kind", "tensor"},
                   {"dtype", std::string(name(t.dtype))},
                   {"access", accessName(t.layout)},
                   {"row_length", lenJson(t.rowLength)},
                   {"writes", t.isWritten}};
    // Which row each row program sees: the kernel computes the addresses;
    // callers need it to size the tensors and `rows`, and the runtime checks
    // padded heads by it (sub_rows.pitch).
    // A part vector (partVectors()) is a plain vector to its caller.
    const RowMap &m = t.map;
    if (!m.isIdentity() && t.layout != Layout::Vector) {
      json::Object map;
      if (m.gather >= 0) {
        map["gather"] = k.tensors[m.gather].name;
        map["table_rows"] = lenJson(m.tableRows);
      } else {
        map["rows_per_tensor_row"] = lenJson(m.group);
      }
      if (m.subLength != Len(0)) {
        json::Object sub{{"first", lenJson(m.subFirst)},
                         {"count", lenJson(m.subCount)},
                         {"length", lenJson(m.subLength)}};
        // Padded heads: the runtime checks the pitch and the row stride.
        if (m.subPitch != Len(0))
          sub["pitch"] = lenJson(m.subPitch);
        map["sub_rows"] = std::move(sub);
      }
      p["row_map"] = std::move(map);
    }
    // A pitched per-group output: the runtime checks its layout by it.
    if (t.pitch != Len(0))
      p["pitch"] = lenJson(t.pitch);
    params.push_back(std::move(p));
  }
  for (const ParamDecl &p : k.params) {
    json::Object scalar{{"name", p.name},
                        {"kind", "scalar"},
                        {"dtype", std::string(name(p.dtype))}};
    if (std::isfinite(p.min))
      scalar["min"] = p.min;
    params.push_back(std::move(scalar));
  }
  for (size_t i = 0; i < k.dims.size(); ++i) {
    if (known[i])
      continue;
    json::Object dim{{"name", k.dims[i]}, {"kind", "dim"}, {"dtype", "i64"}};
    if (i < k.dimMax.size() && k.dimMax[i] != INT64_MAX)
      dim["max"] = k.dimMax[i];
    params.push_back(std::move(dim));
  }

  // The runtime tries the variants in the order listed: by priority.
  std::vector<mlir::kgen::KernelOp> kops(
      scheduled.getOps<mlir::kgen::KernelOp>().begin(),
      scheduled.getOps<mlir::kgen::KernelOp>().end());
  std::stable_sort(kops.begin(), kops.end(), [](auto a, auto b) {
    auto priority = [](mlir::kgen::KernelOp k) {
      mlir::kgen::VariantAttr v = mlir::kgen::getVariant(k);
      return v ? v.getPriority() : int64_t(0);
    };
    return priority(a) < priority(b);
  });
  json::Array variants;
  for (mlir::kgen::KernelOp kop : kops) {
    json::Object align, multiple;
    for (unsigned i = 0; i < kop.getNumArguments(); ++i) {
      if (auto a = kop.getArgAttrOfType<IntegerAttr>(i, mlir::kgen::kAlignAttr))
        align[kop.getArgName(i)] = a.getInt();
      if (auto d = kop.getArgAttrOfType<IntegerAttr>(
              i, mlir::kgen::kDivisibilityAttr))
        if (d.getInt() > 1)
          multiple[kop.getArgName(i)] = d.getInt();
    }
    json::Array abi;
    // After the llvm stage the gpu.func is an llvm.func; both keep kgen.abi.
    lowered.walk([&](Operation *f) {
      auto list = f->getAttrOfType<ArrayAttr>(mlir::kgen::kAbiAttr);
      auto sym = f->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
      if (!list || !sym || sym.getValue() != kop.getSymName())
        return;
      for (Attribute a : list)
        abi.push_back(abiSlot(k, cast<StringAttr>(a).getValue()));
    });
    mlir::kgen::ScheduleAttr s = kop.getScheduleAttr();
    json::Object variant{
        {"entry", kop.getSymName().str()},
        {"block", s.getThreadsPerRow() * s.getRowsPerBlock()},
        {"rows_per_block", s.getRowsPerBlock()},
        {"tiles", s.getTiles()},
        {"shared_bytes", 0}, // reductions use static shared memory
        {"tensor_align", std::move(align)},
        {"dim_multiple", std::move(multiple)},
        {"abi", std::move(abi)},
        {"schedule", json::Object{{"vector", s.getVector()},
                                  {"threads_per_row", s.getThreadsPerRow()},
                                  {"chunks", s.getChunks()},
                                  {"tiles", s.getTiles()},
                                  {"reread", s.getReread()},
                                  {"max_registers", s.getMaxRegisters()}}}};
    if (s.getBusyRow())
      variant.getObject("schedule")->insert({"busy_row", true});
    if (s.getPrefetchBlocks()) // the grids whose blocks prefetch their rows
      variant.getObject("schedule")
          ->insert({"prefetch_blocks", s.getPrefetchBlocks()});
    // When the runtime may launch it: the variant's own fields.
    if (mlir::kgen::VariantAttr v = mlir::kgen::getVariant(kop)) {
      if (v.getLength())
        variant["exact_domain"] = v.getLength();
      if (v.getMaxLength())
        variant["domain_range"] =
            json::Object{{"min", v.getMinLength()},
                         {"max", v.getMaxLength()},
                         {"chunk_elements", s.getVector()}};
      if (v.getMinRows())
        variant["min_rows"] = v.getMinRows();
      if (v.getMaxRows())
        variant["max_rows"] = v.getMaxRows();
    }
    if (s.getCluster()) // the PTX's .reqnctapercluster: the tiles of a row
      variant["cluster"] = s.getTiles();
    if (s.getRowsPerBlock() > 1) // the most: a launch may take fewer
      variant["launch_rows_per_block"] = s.getLaunchRowsPerBlock()
                                             ? s.getLaunchRowsPerBlock()
                                             : s.getRowsPerBlock();
    if (s.getLaunchThreads()) // "block" is then the most threads
      variant["launch_threads"] = json::Object{
          {"chunk_elements", s.getVector()}, {"chunks", s.getChunks()}};
    variant["launch"] = json::Object{{"rule", launchRuleName(variant)}};
    variants.push_back(std::move(variant));
  }
  // Version 3: a part's heads padded inside a row (sub_rows.pitch); version
  // 4: a tensor's elements a pitch apart. Older runtimes would not check
  // them; every other spec stays version 2.
  bool padded = llvm::any_of(
      k.tensors, [](const TensorDecl &t) { return t.map.subPitch != Len(0); });
  bool pitched = llvm::any_of(
      k.tensors, [](const TensorDecl &t) { return t.pitch != Len(0); });
  json::Object spec{{"kgen_spec", pitched  ? 4
                                  : padded ? 3
                                           : 2},
                    {"op", info.op},
                    {"dtype", info.dtype},
                    {"arch", opts.arch},
                    {"hash", hash},
                    {"dims", std::move(dims)},
                    {"domain", lenJson(k.domain)},
                    {"params", std::move(params)},
                    {"variants", std::move(variants)}};
  // The launch policy the variants were made and scheduled by: the runtime
  // shapes the launches it chooses by the same one.
  json::Object policy;
  ::kgen::launch::LaunchPolicy p = mlir::kgen::getLaunchPolicy(scheduled);
  for (const auto &f : ::kgen::launch::kLaunchPolicyFields)
    policy[f.name] = p.*f.field;
  spec["launch_policy"] = std::move(policy);
  // Which tuning profile made it: for the record.
  const Arch *arch = findArch(opts.arch);
  if (opts.profile)
    spec["profile"] = opts.profile->name;
  else if (arch)
    spec["profile"] = arch->profile;
  // Every entry starts with griddepcontrol.wait (kgen-grid-dependency): the
  // runtime may launch it as a programmatic dependent.
  if (arch && arch->caps.gridDependency)
    spec["grid_dependency"] = true;
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::formatv("{0:2}", json::Value(std::move(spec))) << "\n";
  return out;
}

} // namespace kgen::codegen
