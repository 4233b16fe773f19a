//===- Registry.h - The bundled ops -----------------------------*- C++ -*-===//
#ifndef KGEN_OPS_REGISTRY_H
#define KGEN_OPS_REGISTRY_H

#include "dsl/Builder.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace kgen::ops {

struct OpDef {
  std::string name;
  std::string summary;
  /// The dim `--hidden` specializes (the row length users think in).
  std::string mainDim;
  std::function<Kernel(DType)> build;
  /// Values the tools and tests pass for the op's scalar parameters.
  std::map<std::string, double> scalars;
  std::vector<DType> dtypes = {DType::F32, DType::F16, DType::BF16};
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
Kernel siluAndMul(DType dt);
Kernel geluAndMul(DType dt, bool tanhApproximation);

} // namespace kgen::ops

#endif // KGEN_OPS_REGISTRY_H
