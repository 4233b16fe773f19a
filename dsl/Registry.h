//===- Registry.h - Ops that register themselves ----------------*- C++ -*-===//
//
// An op registers itself from its own source file, as Halide's generators do:
//
//   KGEN_REGISTER_OP(rmsnorm)
//       .summary("y = weight * (x * rsqrt(mean(x^2) + eps)).to(dtype)")
//       .dim("hidden")
//       .scalar("eps", 1e-6)
//       .kernel(rmsnorm); // Kernel rmsnorm(DType)
//
// The generator (kgen list / emit / bundle / aot) builds every registered op.
// Registrations run during static initialization, so an op file must be
// linked as an object, not pulled from an archive by reference: kgen's CMake
// targets link op libraries whole. Mistakes in a registration (a duplicate
// name, no kernel) are reported by checkRegistry() with the file and line.
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_DSL_REGISTRY_H
#define KGEN_DSL_REGISTRY_H

#include "dsl/Builder.h"

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace kgen {

/// An op the tools can build: a kernel per dtype and, for ops built for fixed
/// lengths only, per length.
struct OpDef {
  std::string name;
  std::string summary;
  /// The length `--hidden` gives (the row length users think in). For most
  /// ops it is a dim the kernel is specialized on; ops with `lengths` take
  /// it as a C++ constant instead (rope's head_dim) and have no kernel for a
  /// run-time length.
  std::string mainDim = "hidden";
  /// Builds the kernel; `length` is 0 for the dynamic kernel and matters
  /// only to ops with `lengths`.
  std::function<Kernel(DType, int64_t length)> build;
  /// Values the tools and tests pass for the op's scalar parameters.
  std::map<std::string, double> scalars;
  std::vector<DType> dtypes = {DType::F32, DType::F16, DType::BF16};
  /// Non-empty: the only lengths the op is built for (no dynamic kernel).
  std::vector<int64_t> lengths;
  /// Where it was registered.
  SourceLoc loc;
  /// Ships with kgen (ops/, compiled with KGEN_BUNDLED_OP=1).
  bool bundled = false;

  bool supportsLength(int64_t length) const;
  bool supportsDType(DType dt) const;
  /// Builds the kernel for `length` (0: dynamic) and sets dims[mainDim]
  /// when the kernel has that dim. The caller checks supportsLength().
  /// Throws the op's UserError, if its formula has one.
  Kernel instantiate(DType dt, int64_t length,
                     std::map<std::string, int64_t> &dims) const;
};

/// The fluent handle KGEN_REGISTER_OP returns; each setter fills the op.
class OpRegistration {
public:
  OpRegistration &summary(std::string text);
  /// The dim `--hidden` specializes (default "hidden").
  OpRegistration &dim(std::string name);
  /// A scalar parameter and the value the tools and tests pass for it.
  OpRegistration &scalar(std::string name, double value);
  OpRegistration &dtypes(std::vector<DType> list);
  /// Build the op only for these lengths, passed to its kernel function.
  OpRegistration &lengths(std::vector<int64_t> list);
  OpRegistration &kernel(std::function<Kernel(DType)> build);
  /// For ops with lengths(): the length is a C++ constant of the formula.
  OpRegistration &kernelForLength(std::function<Kernel(DType, int64_t)> build);

  explicit OpRegistration(OpDef def) : def(std::move(def)) {}
  const OpDef &op() const { return def; }

private:
  OpDef def;
};

/// A C identifier (letters, digits, '_', not starting with a digit): what
/// an op's name must be, since files and generated functions are named
/// after it.
bool isIdentifier(std::string_view s);

/// Adds an op named `name`; the registry owns the returned handle.
OpRegistration &registerOp(const char *name, const char *file, unsigned line,
                           bool bundled = false);

/// Every registered op, by name.
std::vector<std::reference_wrapper<const OpDef>> registeredOps();
/// nullptr when there is no op of that name.
const OpDef *findOp(const std::string &name);
/// Mistakes in the registrations, one message each ("FILE:LINE: error: ...");
/// empty when every op is well formed.
std::vector<std::string> checkRegistry();

} // namespace kgen

#ifndef KGEN_BUNDLED_OP
#define KGEN_BUNDLED_OP 0
#endif
#define KGEN_REGISTRY_CONCAT_(a, b) a##b
#define KGEN_REGISTRY_CONCAT(a, b) KGEN_REGISTRY_CONCAT_(a, b)

/// Registers the op NAME (an identifier) from this file; chain its setters.
#define KGEN_REGISTER_OP(NAME)                                                 \
  [[maybe_unused]] static ::kgen::OpRegistration &KGEN_REGISTRY_CONCAT(        \
      kgenRegisteredOp_, NAME) =                                               \
      ::kgen::registerOp(#NAME, __FILE__, __LINE__, KGEN_BUNDLED_OP)

#endif // KGEN_DSL_REGISTRY_H
