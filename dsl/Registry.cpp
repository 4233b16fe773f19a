//===- Registry.cpp - Ops that register themselves ------------------------===//
#include "dsl/Registry.h"

#include <algorithm>
#include <deque>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kgen {

namespace {

/// Registrations run during static initialization, in any order: a local
/// static is built on first use. A deque keeps the handles in place.
std::deque<OpRegistration> &registrations() {
  static std::deque<OpRegistration> regs;
  return regs;
}

} // namespace

bool isIdentifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9'))
    return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_';
  });
}

bool OpDef::supportsLength(int64_t length) const {
  if (lengths.empty())
    return true;
  return std::find(lengths.begin(), lengths.end(), length) != lengths.end();
}

bool OpDef::supportsDType(DType dt) const {
  return std::find(dtypes.begin(), dtypes.end(), dt) != dtypes.end();
}

Kernel OpDef::instantiate(DType dt, int64_t length,
                          std::map<std::string, int64_t> &dims) const {
  Kernel k = build(dt, length);
  bool hasDim =
      std::find(k.dims.begin(), k.dims.end(), mainDim) != k.dims.end();
  // Specializing on a dim the kernel lacks would build the dynamic kernel
  // under a specialized name.
  if (length && lengths.empty() && !hasDim)
    throw UserError(loc, fmt::format("{}: error: op '{}' has no dim '{}' to "
                                     "specialize on; name one of its dims "
                                     "with .dim(...): {}",
                                     loc.str(), name, mainDim,
                                     fmt::join(k.dims, ", ")));
  if (length && hasDim)
    dims[mainDim] = length;
  return k;
}

OpRegistration &OpRegistration::summary(std::string text) {
  def.summary = std::move(text);
  return *this;
}

OpRegistration &OpRegistration::dim(std::string name) {
  def.mainDim = std::move(name);
  return *this;
}

OpRegistration &OpRegistration::scalar(std::string name, double value) {
  def.scalars[std::move(name)] = value;
  return *this;
}

OpRegistration &OpRegistration::dtypes(std::vector<DType> list) {
  def.dtypes = std::move(list);
  return *this;
}

OpRegistration &OpRegistration::lengths(std::vector<int64_t> list) {
  def.lengths = std::move(list);
  return *this;
}

OpRegistration &OpRegistration::kernel(std::function<Kernel(DType)> build) {
  def.build = [build = std::move(build)](DType dt, int64_t) {
    return build(dt);
  };
  return *this;
}

OpRegistration &
OpRegistration::kernelForLength(std::function<Kernel(DType, int64_t)> build) {
  def.build = std::move(build);
  return *this;
}

OpRegistration &registerOp(const char *name, const char *file, unsigned line,
                           bool bundled) {
  OpDef def;
  def.bundled = bundled;
  def.name = name ? name : "";
  def.loc = SourceLoc{file ? file : "?", line};
  return registrations().emplace_back(std::move(def));
}

std::vector<std::reference_wrapper<const OpDef>> registeredOps() {
  std::vector<std::reference_wrapper<const OpDef>> ops;
  for (const OpRegistration &r : registrations())
    ops.push_back(std::cref(r.op()));
  std::stable_sort(ops.begin(), ops.end(), [](const OpDef &a, const OpDef &b) {
    return a.name < b.name;
  });
  return ops;
}

const OpDef *findOp(const std::string &name) {
  for (const OpRegistration &r : registrations())
    if (r.op().name == name)
      return &r.op();
  return nullptr;
}

std::vector<std::string> checkRegistry() {
  std::vector<std::string> errors;
  std::map<std::string, const OpDef *> seen;
  for (const OpDef &op : registeredOps()) {
    auto fail = [&](const std::string &what) {
      errors.push_back(
          fmt::format("{}: error: op '{}': {}", op.loc.str(), op.name, what));
    };
    if (!isIdentifier(op.name)) {
      fail("an op's name must be a C identifier (letters, digits and '_'): "
           "it names files and generated functions");
      continue;
    }
    auto [it, fresh] = seen.emplace(op.name, &op);
    if (!fresh)
      fail(fmt::format("registered twice; the other registration is at {}",
                       it->second->loc.str()));
    if (!op.build)
      fail("no kernel function; add .kernel(f) with f(DType) -> Kernel");
    if (op.dtypes.empty())
      fail("no dtypes; .dtypes({...}) needs at least one");
    for (int64_t l : op.lengths)
      if (l < 1)
        fail(fmt::format("length {} in .lengths(...) must be >= 1", l));
    if (!isIdentifier(op.mainDim))
      fail(fmt::format("dim '{}' is not an identifier", op.mainDim));
  }
  return errors;
}

} // namespace kgen
