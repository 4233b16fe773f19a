//===- FusedAddRMSNorm.cpp - Residual add fused with RMSNorm --------------===//
#include "dsl/Registry.h"

namespace kgen::ops {

namespace {
struct AddNormOptions {
  const char *name;
  bool inPlace = true;
  bool gemma = false; ///< GemmaRMSNorm's (1 + w), all in f32
  /// FlashInfer's rounding: the sum stays f32 for the norm (the residual
  /// gets it rounded), and the weight multiplies in f32 before one rounding.
  bool flashinfer = false;
  bool noWeight = false; ///< vLLM's RMSNorm(has_weight=False)
};
} // namespace

// r = x + residual (added in the dtype) and the norm of it: Llama's
// weight * (r * rsqrt(mean(r^2) + eps)).to(dtype), or Gemma's
// (r * rsqrt(...) * (1 + weight)).to(dtype) in f32, as Hugging Face's decoder
// layers and vLLM round. In place, as vLLM's and FlashInfer's
// fused_add_rmsnorm (residual <- r, x <- the norm), or into new tensors for
// Hugging Face decoder layers, which do not own x. An f32 weight makes
// Llama's product f32, rounded to the dtype once more. FlashInfer's kernels
// normalize the f32 sum and round once (docs/rounding.md).
static Kernel addRMSNorm(DType dt, DType wdt, const AddNormOptions &o) {
  Builder b(o.name);
  Len hidden = b.dim("hidden");
  Tensor x = b.input("x", dt, hidden);
  Tensor residual = b.input("residual", dt, hidden);
  Tensor w = o.noWeight ? Tensor() : b.vector("weight", wdt, hidden);
  Expr eps = b.scalar("eps", DType::F32);
  auto sumF32 = [&] { return x.to(DType::F32) + residual.to(DType::F32); };
  Expr r, rf, again;
  if (o.flashinfer) {
    rf = sumF32();
    r = rf.to(dt);
    // Formed again after the reduction from the held rows: held in f32 it
    // took twice their registers and spilled on sm_90.
    again = sumF32();
  } else {
    r = x + residual;
    rf = again = r.to(DType::F32);
  }
  Expr normed = again * rsqrt(mean(rf * rf) + eps);
  Expr y = o.noWeight     ? normed.to(dt)
           : o.gemma      ? (normed * (1.0 + w.to(DType::F32))).to(dt)
           : o.flashinfer ? (normed * w.to(DType::F32)).to(dt)
                          : w * normed.to(dt);
  if (wdt != dt && !o.gemma && !o.flashinfer)
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
             "weight (vLLM's rounding; FlashInfer's is _flashinfer)")
    .scalar("eps", 1e-6)
    .kernel(addNorm({"fused_add_rmsnorm"}));

KGEN_REGISTER_OP(fused_add_rmsnorm_noweight)
    .summary("fused_add_rmsnorm without a weight: x = (residual * "
             "rsqrt(mean(residual^2) + eps)).to(dtype) (vLLM's weight None)")
    .scalar("eps", 1e-6)
    .kernel(addNorm({"fused_add_rmsnorm_noweight", true, false, false, true}));

KGEN_REGISTER_OP(add_rmsnorm)
    .summary("out of place: residual_out = x + residual; y = "
             "rmsnorm(residual_out) * weight (Hugging Face decoder layers)")
    .scalar("eps", 1e-6)
    .kernel(addNorm({"add_rmsnorm", false}));

KGEN_REGISTER_OP(fused_add_rmsnorm_flashinfer)
    .summary("fused_add_rmsnorm as FlashInfer rounds: the norm of the f32 sum, "
             "times the weight in f32, rounded once")
    .scalar("eps", 1e-6)
    .kernel(addNorm({"fused_add_rmsnorm_flashinfer", true, false, true}));

KGEN_REGISTER_OP(gemma_fused_add_rmsnorm)
    .summary("in place: residual = x + residual; x = "
             "gemma_rmsnorm(residual) (Hugging Face Gemma's rounding)")
    .scalar("eps", 1e-6)
    .kernel(addNorm({"gemma_fused_add_rmsnorm", true, true}));

KGEN_REGISTER_OP(gemma_fused_add_rmsnorm_flashinfer)
    .summary("gemma_fused_add_rmsnorm as FlashInfer rounds: the norm of the "
             "f32 sum")
    .scalar("eps", 1e-6)
    .kernel(addNorm({"gemma_fused_add_rmsnorm_flashinfer", true, true, true}));

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
