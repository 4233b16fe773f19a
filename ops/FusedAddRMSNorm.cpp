//===- FusedAddRMSNorm.cpp - Residual add fused with RMSNorm --------------===//
#include "dsl/Registry.h"

namespace kgen::ops {

namespace {
struct AddNormOptions {
  const char *name;
  bool inPlace = true;
  bool gemma = false; ///< GemmaRMSNorm's (1 + w), all in f32
};
} // namespace

// r = x + residual (added in the dtype) and the norm of it: Llama's
// weight * (r * rsqrt(mean(r^2) + eps)).to(dtype), or Gemma's
// (r * rsqrt(...) * (1 + weight)).to(dtype) in f32. In place, as vLLM's and
// FlashInfer's fused_add_rmsnorm (residual <- r, x <- the norm), or into new
// tensors for Hugging Face decoder layers, which do not own x. An f32 weight
// makes Llama's product f32, rounded to the dtype once more.
static Kernel addRMSNorm(DType dt, DType wdt, const AddNormOptions &o) {
  Builder b(o.name);
  Len hidden = b.dim("hidden");
  Tensor x = b.input("x", dt, hidden);
  Tensor residual = b.input("residual", dt, hidden);
  Tensor w = b.vector("weight", wdt, hidden);
  Expr eps = b.scalar("eps", DType::F32);
  Expr r = x + residual;
  Expr rf = r.to(DType::F32);
  Expr normed = rf * rsqrt(mean(rf * rf) + eps);
  Expr y =
      o.gemma ? (normed * (1.0 + w.to(DType::F32))).to(dt) : w * normed.to(dt);
  if (wdt != dt && !o.gemma)
    y = y.to(dt);
  if (o.inPlace) {
    b.store(residual, r);
    b.store(x, y);
  } else {
    b.output("y", y);
    b.output("residual_out", r);
  }
  return b.build();
}

/// The op's kernel for activations in dt and weights in wdt (nullopt: dt).
static std::function<Kernel(DType)> addNorm(AddNormOptions o,
                                            std::optional<DType> wdt = {}) {
  return [=](DType dt) { return addRMSNorm(dt, wdt.value_or(dt), o); };
}

KGEN_REGISTER_OP(fused_add_rmsnorm)
    .summary("in place: residual = x + residual; x = rmsnorm(residual) * "
             "weight (vLLM, FlashInfer)")
    .scalar("eps", 1e-6)
    .kernel(addNorm({"fused_add_rmsnorm"}));

KGEN_REGISTER_OP(add_rmsnorm)
    .summary("out of place: residual_out = x + residual; y = "
             "rmsnorm(residual_out) * weight (Hugging Face decoder layers)")
    .scalar("eps", 1e-6)
    .kernel(addNorm({"add_rmsnorm", false}));

KGEN_REGISTER_OP(gemma_fused_add_rmsnorm)
    .summary("in place: residual = x + residual; x = "
             "gemma_rmsnorm(residual) (FlashInfer)")
    .scalar("eps", 1e-6)
    .kernel(addNorm({"gemma_fused_add_rmsnorm", true, true}));

KGEN_REGISTER_OP(fused_add_rmsnorm_f32w)
    .summary("fused_add_rmsnorm with an f32 weight")
    .scalar("eps", 1e-6)
    .dtypes({DType::F16, DType::BF16})
    .kernel(addNorm({"fused_add_rmsnorm_f32w"}, DType::F32));

KGEN_REGISTER_OP(add_rmsnorm_f32w)
    .summary("add_rmsnorm with an f32 weight")
    .scalar("eps", 1e-6)
    .dtypes({DType::F16, DType::BF16})
    .kernel(addNorm({"add_rmsnorm_f32w", false}, DType::F32));

KGEN_REGISTER_OP(gemma_fused_add_rmsnorm_f32w)
    .summary("gemma_fused_add_rmsnorm with an f32 weight")
    .scalar("eps", 1e-6)
    .dtypes({DType::F16, DType::BF16})
    .kernel(addNorm({"gemma_fused_add_rmsnorm_f32w", true, true}, DType::F32));

} // namespace kgen::ops
