//===- Registry.h - The bundled ops -----------------------------*- C++ -*-===//
#ifndef KGEN_OPS_REGISTRY_H
#define KGEN_OPS_REGISTRY_H

#include "dsl/Builder.h"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kgen::ops {

struct OpDef {
  std::string name;
  std::string summary;
  /// The length `--hidden` gives (the row length users think in). For most
  /// ops it is a dim the kernel is specialized on; ops with `lengths` take
  /// it as a C++ constant instead (rope's head_dim) and have no kernel for a
  /// run-time length.
  std::string mainDim;
  /// Builds the kernel; `length` is 0 for the dynamic kernel and matters
  /// only to ops with `lengths`.
  std::function<Kernel(DType, int64_t length)> build;
  /// Values the tools and tests pass for the op's scalar parameters.
  std::map<std::string, double> scalars;
  std::vector<DType> dtypes = {DType::F32, DType::F16, DType::BF16};
  /// Non-empty: the only lengths the op is built for (no dynamic kernel).
  std::vector<int64_t> lengths = {};

  bool supportsLength(int64_t length) const;
  /// Builds the kernel for `length` (0: dynamic) and sets dims[mainDim]
  /// when the kernel has that dim. The caller checks supportsLength().
  Kernel instantiate(DType dt, int64_t length,
                     std::map<std::string, int64_t> &dims) const;
};

const std::vector<OpDef> &registry();
/// nullptr when there is no op of that name.
const OpDef *findOp(const std::string &name);

// One function per op, each in its own file.
Kernel rmsnorm(DType dt);
Kernel gemmaRMSNorm(DType dt);
Kernel fusedAddRMSNorm(DType dt);
Kernel layerNorm(DType dt, bool withBias);
Kernel softmax(DType dt);
Kernel rmsnormQuant(DType dt, bool dynamicScale);
Kernel siluAndMul(DType dt, bool quantize);
Kernel geluAndMul(DType dt, bool tanhApproximation);
enum class Activation { Silu, Gelu, GeluTanh };
Kernel activation(DType dt, Activation act);
Kernel adaLN(DType dt, bool rms);

enum class RopeStyle { NeoX, GPTJ };
struct RopeOptions {
  std::string name;
  RopeStyle style = RopeStyle::NeoX;
  int64_t headDim = 128;
  int64_t rotaryDim = 128; ///< even, <= headDim
  DType positions = DType::I64;
  std::optional<DType> cache = DType::F32; ///< nullopt: q's dtype
};
Kernel rope(DType dt, const RopeOptions &o);
Kernel ropeHF(DType dt, int64_t headDim);

} // namespace kgen::ops

#endif // KGEN_OPS_REGISTRY_H
