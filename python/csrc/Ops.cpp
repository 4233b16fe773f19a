//===- Ops.cpp - kgen's bundled ops as torch custom ops -------------------===//
//
// Each wrapper checks what torch can say better than the runtime (dtypes,
// shapes, devices), then names the kernel's arguments in the spec's order.
// Schemas follow vLLM and FlashInfer where users expect them: fused_add_rmsnorm
// and rope_neox/rope_gptj work in place; the rest (add_rmsnorm is the
// out-of-place fused add) return new tensors.
//
//===----------------------------------------------------------------------===//
#include "Call.h"
#include "Kernels.h"
#include "dsl/kgen_reference.h"

#include <ATen/ATen.h>
#include <torch/library.h>

#include <limits>
#include <optional>
#include <tuple>

namespace kgen::torch_ext {
namespace {

using at::Tensor;

void checkFloat(const char *op, const Tensor &t, const char *name) {
  auto s = t.scalar_type();
  TORCH_CHECK(s == at::kFloat || s == at::kHalf || s == at::kBFloat16,
              "kgen::", op, ": '", name,
              "' must be float32, float16 or bfloat16, not ", s);
  TORCH_CHECK(t.dim() >= 1, "kgen::", op, ": '", name,
              "' needs at least one dim");
}

void checkDtype(const char *op, const Tensor &t, const char *name,
                at::ScalarType want) {
  TORCH_CHECK(t.scalar_type() == want, "kgen::", op, ": '", name, "' must be ",
              want, ", not ", t.scalar_type());
}

void checkShape(const char *op, const Tensor &t, const char *name,
                at::IntArrayRef want) {
  TORCH_CHECK(t.sizes() == want, "kgen::", op, ": '", name, "' must be ", want,
              ", not ", t.sizes());
}

/// x: float rows of h; weight: [h] in x's dtype. Returns h.
int64_t checkRowsAndWeight(const char *op, const Tensor &x,
                           const Tensor &weight) {
  checkFloat(op, x, "x");
  const int64_t h = x.size(-1);
  checkDtype(op, weight, "weight", x.scalar_type());
  checkShape(op, weight, "weight", {h});
  return h;
}

/// The kernel of a norm whose weight may be f32 by f16 or bf16 rows: `op`,
/// or `f32wOp`.
/// Checks x and weight as checkRowsAndWeight does, but for that dtype; `h`
/// gets the row length.
const char *opForWeight(const char *op, const char *f32wOp, const Tensor &x,
                        const Tensor &weight, int64_t &h) {
  checkFloat(op, x, "x");
  h = x.size(-1);
  const bool mixed =
      weight.scalar_type() == at::kFloat && x.scalar_type() != at::kFloat;
  if (!f32wOp) // no f32-weight form
    checkDtype(op, weight, "weight", x.scalar_type());
  TORCH_CHECK(mixed || weight.scalar_type() == x.scalar_type(), "kgen::", op,
              ": 'weight' must be ", x.scalar_type(),
              " (x's dtype) or float32, not ", weight.scalar_type());
  checkShape(op, weight, "weight", {h});
  return mixed ? f32wOp : op;
}

/// `t` has x's dtype and shape.
void checkLike(const char *op, const Tensor &t, const char *name,
               const Tensor &x) {
  checkDtype(op, t, name, x.scalar_type());
  checkShape(op, t, name, x.sizes());
}

/// Rows of `t` seen as rows of its last `rowDims` dims.
int64_t leadingRows(const Tensor &t, int64_t rowDims = 1) {
  int64_t rows = 1;
  for (int64_t d = 0; d < t.dim() - rowDims; ++d)
    rows *= t.size(d);
  return rows;
}

/// An in-place tensor is never copied: it must already be rows.
void checkInPlace(const char *op, const Tensor &t, const char *name,
                  int64_t rowDims = 1) {
  TORCH_CHECK(rowStride(t, rowDims) >= 0, "kgen::", op, ": '", name,
              "' is written in place, so it must be rows with a dense last "
              "dim and one stride between rows (shape ",
              t.sizes(), ", strides ", t.strides(), ")");
}

Tensor norm(const char *op, const char *f32wOp, const Tensor &x,
            const Tensor &weight, const std::optional<Tensor> &bias,
            double eps) {
  int64_t h;
  const char *kernel = opForWeight(op, f32wOp, x, weight, h);
  Tensor xr = asRows(x);
  Tensor y = at::empty(x.sizes(), x.options());
  Call c(kernel, x.scalar_type(), h);
  c.rows("x", xr).whole("weight", weight);
  if (bias) {
    checkDtype(op, *bias, "bias", weight.scalar_type());
    checkShape(op, *bias, "bias", {h});
    c.whole("bias", *bias);
  }
  c.rows("y", y).scalar("eps", eps).dim("hidden", h).run(leadingRows(x));
  return y;
}

Tensor rmsnorm(const Tensor &x, const Tensor &weight, double eps) {
  return norm("rmsnorm", "rmsnorm_f32w", x, weight, std::nullopt, eps);
}

Tensor rmsnormFlashinfer(const Tensor &x, const Tensor &weight, double eps) {
  return norm("rmsnorm_flashinfer", nullptr, x, weight, std::nullopt, eps);
}

Tensor gemmaRmsnorm(const Tensor &x, const Tensor &weight, double eps) {
  return norm("gemma_rmsnorm", "gemma_rmsnorm_f32w", x, weight, std::nullopt,
              eps);
}

Tensor layernorm(const Tensor &x, const Tensor &weight,
                 const std::optional<Tensor> &bias, double eps) {
  if (bias)
    return norm("layernorm", "layernorm_f32w", x, weight, bias, eps);
  return norm("layernorm_nobias", "layernorm_nobias_f32w", x, weight, bias,
              eps);
}

/// residual += x; x = the norm of residual (fused_add_rmsnorm's in-place
/// forms, Llama's or Gemma's).
void fusedAddNorm(const char *op, const char *f32wOp, const Tensor &x,
                  const Tensor &residual, const Tensor &weight, double eps) {
  int64_t h;
  const char *kernel = opForWeight(op, f32wOp, x, weight, h);
  checkLike(op, residual, "residual", x);
  checkInPlace(op, x, "x");
  checkInPlace(op, residual, "residual");
  Call(kernel, x.scalar_type(), h)
      .rows("x", x)
      .rows("residual", residual)
      .whole("weight", weight)
      .scalar("eps", eps)
      .dim("hidden", h)
      .run(leadingRows(x));
}

/// Without a weight: fused_add_rmsnorm_noweight (vLLM's weight None).
void fusedAddRmsnorm(const Tensor &x, const Tensor &residual,
                     const std::optional<Tensor> &weight, double eps) {
  if (weight) {
    fusedAddNorm("fused_add_rmsnorm", "fused_add_rmsnorm_f32w", x, residual,
                 *weight, eps);
    return;
  }
  const char *op = "fused_add_rmsnorm_noweight";
  checkFloat(op, x, "x");
  checkLike(op, residual, "residual", x);
  checkInPlace(op, x, "x");
  checkInPlace(op, residual, "residual");
  const int64_t h = x.size(-1);
  Call(op, x.scalar_type(), h)
      .rows("x", x)
      .rows("residual", residual)
      .scalar("eps", eps)
      .dim("hidden", h)
      .run(leadingRows(x));
}

void gemmaFusedAddRmsnorm(const Tensor &x, const Tensor &residual,
                          const Tensor &weight, double eps) {
  fusedAddNorm("gemma_fused_add_rmsnorm", "gemma_fused_add_rmsnorm_f32w", x,
               residual, weight, eps);
}

void fusedAddRmsnormFlashinfer(const Tensor &x, const Tensor &residual,
                               const Tensor &weight, double eps) {
  fusedAddNorm("fused_add_rmsnorm_flashinfer", nullptr, x, residual, weight,
               eps);
}

void gemmaFusedAddRmsnormFlashinfer(const Tensor &x, const Tensor &residual,
                                    const Tensor &weight, double eps) {
  fusedAddNorm("gemma_fused_add_rmsnorm_flashinfer", nullptr, x, residual,
               weight, eps);
}

std::tuple<Tensor, Tensor> addRmsnorm(const Tensor &x, const Tensor &residual,
                                      const Tensor &weight, double eps) {
  const char *op = "add_rmsnorm";
  int64_t h;
  const char *kernel = opForWeight(op, "add_rmsnorm_f32w", x, weight, h);
  checkLike(op, residual, "residual", x);
  Tensor y = at::empty(x.sizes(), x.options());
  Tensor sum = at::empty(x.sizes(), x.options());
  Call(kernel, x.scalar_type(), h)
      .rows("x", asRows(x))
      .rows("residual", asRows(residual))
      .whole("weight", weight)
      .rows("y", y)
      .rows("residual_out", sum)
      .scalar("eps", eps)
      .dim("hidden", h)
      .run(leadingRows(x));
  return {y, sum};
}

/// y (fp8 e4m3 or int8, `out`) of rmsnorm(x) * weight over a static scale.
Tensor rmsnormQuantStaticAs(const char *op, at::ScalarType out, const Tensor &x,
                            const Tensor &weight, double scale, double eps) {
  const int64_t h = checkRowsAndWeight(op, x, weight);
  TORCH_CHECK(scale > 0, "kgen::", op, ": scale must be > 0, not ", scale);
  Tensor y = at::empty(x.sizes(), x.options().dtype(out));
  Call(op, x.scalar_type(), h)
      .rows("x", asRows(x))
      .whole("weight", weight)
      .rows("y", y)
      .scalar("eps", eps)
      .scalar("scale", scale)
      .dim("hidden", h)
      .run(leadingRows(x));
  return y;
}

Tensor rmsnormQuantStatic(const Tensor &x, const Tensor &weight, double scale,
                          double eps) {
  return rmsnormQuantStaticAs("rmsnorm_quant_static", at::kFloat8_e4m3fn, x,
                              weight, scale, eps);
}

Tensor rmsnormQuantInt8Static(const Tensor &x, const Tensor &weight,
                              double scale, double eps) {
  return rmsnormQuantStaticAs("rmsnorm_quant_int8_static", at::kChar, x, weight,
                              scale, eps);
}

/// f32 scales shaped like x but for its last dim: [..., groups].
Tensor scalesLike(const Tensor &x, int64_t groups) {
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
  shape.back() = groups;
  return at::empty(shape, x.options().dtype(at::kFloat));
}

/// scalesLike, or with `transposed` the same shape over a [groups, rows]
/// buffer (vLLM's is_scale_transposed: group g of row r at g * rows + r).
Tensor groupScales(const Tensor &x, int64_t groups, bool transposed) {
  if (!transposed)
    return scalesLike(x, groups);
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
  shape.back() = groups;
  return at::empty({groups, leadingRows(x)}, x.options().dtype(at::kFloat))
      .t()
      .view(shape);
}

/// [..., 1] f32: a per-row scale of rows like x's.
Tensor rowScales(const Tensor &x) { return scalesLike(x, 1); }

/// y (`out`) and the per-row scales of rmsnorm(x) * weight.
std::tuple<Tensor, Tensor>
rmsnormQuantDynamicAs(const char *op, at::ScalarType out, const Tensor &x,
                      const Tensor &weight, double eps) {
  const int64_t h = checkRowsAndWeight(op, x, weight);
  Tensor y = at::empty(x.sizes(), x.options().dtype(out));
  Tensor scale = rowScales(x);
  Call(op, x.scalar_type(), h)
      .rows("x", asRows(x))
      .whole("weight", weight)
      .rows("y", y)
      .whole("scale", scale)
      .scalar("eps", eps)
      .dim("hidden", h)
      .run(leadingRows(x));
  return {y, scale};
}

std::tuple<Tensor, Tensor>
rmsnormQuantDynamic(const Tensor &x, const Tensor &weight, double eps) {
  return rmsnormQuantDynamicAs("rmsnorm_quant_dynamic", at::kFloat8_e4m3fn, x,
                               weight, eps);
}

std::tuple<Tensor, Tensor>
rmsnormQuantInt8Dynamic(const Tensor &x, const Tensor &weight, double eps) {
  return rmsnormQuantDynamicAs("rmsnorm_quant_int8_dynamic", at::kChar, x,
                               weight, eps);
}

/// residual += x in place, then y (`out`: fp8 or int8) of the normalised sum:
/// a static `scale`, or per-row scales (returned [..., 1]), bounded by
/// `scaleUb` where the kernel takes a bound (fp8's).
std::tuple<Tensor, std::optional<Tensor>>
fusedAddRmsnormQuant(const char *op, at::ScalarType out, const Tensor &x,
                     const Tensor &residual, const Tensor &weight,
                     std::optional<double> scale, std::optional<double> scaleUb,
                     double eps) {
  const int64_t h = checkRowsAndWeight(op, x, weight);
  checkLike(op, residual, "residual", x);
  checkInPlace(op, residual, "residual");
  Tensor y = at::empty(x.sizes(), x.options().dtype(out));
  Call c(op, x.scalar_type(), h);
  c.rows("x", asRows(x))
      .rows("residual", residual)
      .whole("weight", weight)
      .rows("y", y)
      .scalar("eps", eps);
  std::optional<Tensor> scales;
  if (scale) {
    TORCH_CHECK(*scale > 0, "kgen::", op, ": scale must be > 0, not ", *scale);
    c.scalar("scale", *scale);
  } else {
    TORCH_CHECK(!scaleUb || *scaleUb > 0, "kgen::", op,
                ": scale_ub must be > 0, not ", *scaleUb);
    scales = rowScales(x);
    c.whole("scale", *scales);
    if (out != at::kChar)
      c.scalar("scale_ub",
               scaleUb.value_or(std::numeric_limits<double>::infinity()));
  }
  c.dim("hidden", h).run(leadingRows(x));
  return {y, scales};
}

Tensor fusedAddRmsnormQuantStatic(const Tensor &x, const Tensor &residual,
                                  const Tensor &weight, double scale,
                                  double eps) {
  return std::get<0>(fusedAddRmsnormQuant("fused_add_rmsnorm_quant_static",
                                          at::kFloat8_e4m3fn, x, residual,
                                          weight, scale, std::nullopt, eps));
}

Tensor fusedAddRmsnormQuantInt8Static(const Tensor &x, const Tensor &residual,
                                      const Tensor &weight, double scale,
                                      double eps) {
  return std::get<0>(fusedAddRmsnormQuant("fused_add_rmsnorm_quant_int8_static",
                                          at::kChar, x, residual, weight, scale,
                                          std::nullopt, eps));
}

std::tuple<Tensor, Tensor>
fusedAddRmsnormQuantDynamic(const Tensor &x, const Tensor &residual,
                            const Tensor &weight, std::optional<double> scaleUb,
                            double eps) {
  auto [y, scales] = fusedAddRmsnormQuant("fused_add_rmsnorm_quant_dynamic",
                                          at::kFloat8_e4m3fn, x, residual,
                                          weight, std::nullopt, scaleUb, eps);
  return {y, *scales};
}

std::tuple<Tensor, Tensor>
fusedAddRmsnormQuantInt8Dynamic(const Tensor &x, const Tensor &residual,
                                const Tensor &weight, double eps) {
  auto [y, scales] =
      fusedAddRmsnormQuant("fused_add_rmsnorm_quant_int8_dynamic", at::kChar, x,
                           residual, weight, std::nullopt, std::nullopt, eps);
  return {y, *scales};
}

/// vLLM's static_scaled_int8_quant: round(x / scale) as int8.
Tensor quantInt8Static(const Tensor &x, double scale) {
  const char *op = "quant_int8_static";
  checkFloat(op, x, "x");
  TORCH_CHECK(scale > 0, "kgen::", op, ": scale must be > 0, not ", scale);
  const int64_t h = x.size(-1);
  Tensor y = at::empty(x.sizes(), x.options().dtype(at::kChar));
  Call(op, x.scalar_type(), h)
      .rows("x", asRows(x))
      .rows("y", y)
      .scalar("scale", scale)
      .dim("hidden", h)
      .run(leadingRows(x));
  return y;
}

/// vLLM's dynamic_scaled_int8_quant (symmetric): y and scales [..., 1].
std::tuple<Tensor, Tensor> quantInt8Dynamic(const Tensor &x) {
  const char *op = "quant_int8_dynamic";
  checkFloat(op, x, "x");
  const int64_t h = x.size(-1);
  Tensor y = at::empty(x.sizes(), x.options().dtype(at::kChar));
  Tensor scale = rowScales(x);
  Call(op, x.scalar_type(), h)
      .rows("x", asRows(x))
      .rows("y", y)
      .whole("scale", scale)
      .dim("hidden", h)
      .run(leadingRows(x));
  return {y, scale};
}

/// The groups of `group` elements in a row of x, which `group` must divide.
int64_t groupCount(const char *op, const Tensor &x, int64_t group) {
  const int64_t h = x.size(-1);
  TORCH_CHECK(group > 0 && h % group == 0, "kgen::", op, ": group_size ", group,
              " must divide the last dim of 'x' (", h, ")");
  return h / group;
}

/// vLLM's per_token_group_quant_fp8 / _int8: x [..., hidden] in groups of
/// `group` elements; y (`out`) like x and scales [..., hidden / group], into
/// `scales` when given (any layout whose tokens have one stride).
std::tuple<Tensor, Tensor> groupQuant(const char *op, at::ScalarType out,
                                      const Tensor &x, int64_t group,
                                      double eps, Tensor scale = {}) {
  checkFloat(op, x, "x"); // eps: the kernel's least value, at launch
  const int64_t groups = groupCount(op, x, group), rows = leadingRows(x);
  Tensor y = at::empty(x.sizes(), x.options().dtype(out));
  if (!scale.defined())
    scale = scalesLike(x, groups);
  if (rows == 0 || groups == 0)
    return {y, scale};
  Call(op, x.scalar_type(), group, /*fixedLength=*/true)
      .rows("x", asRows(x).view({rows, groups, group}), 2)
      .rows("y", y.view({rows, groups, group}), 2)
      .perHead("scale", scale.view({rows, groups}), "scale_group_stride")
      .scalar("eps", eps)
      .dim("groups", groups)
      .run(rows * groups);
  return {y, scale};
}

/// vLLM's column-major scales of x [..., M, hidden] (DeepGEMM's): [..., M,
/// groups], each matrix's column a run of P floats, P = M or, TMA-aligned,
/// M rounded up to 16 bytes (4 floats).
Tensor columnMajorScales(const char *op, const Tensor &x, int64_t groups,
                         bool tmaAligned) {
  TORCH_CHECK(x.dim() >= 2, "kgen::", op,
              ": column-major scales need 'x' of [..., M, hidden], not ",
              x.dim(), "-d");
  const int64_t m = x.size(-2), p = tmaAligned ? (m + 3) / 4 * 4 : m;
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
  shape.back() = groups;
  const int64_t lead = m ? leadingRows(x) / m : 0;
  return at::empty({lead, groups, p}, x.options().dtype(at::kFloat))
      .narrow(2, 0, m)
      .transpose(1, 2)
      .view(shape);
}

/// The kernel writes column-major scales itself where the tokens have one
/// stride in them (one matrix, or rows of one token); scales of a batch of
/// matrices are written row-major and copied.
std::tuple<Tensor, Tensor> perTokenGroupQuantFp8(const Tensor &x, int64_t group,
                                                 double eps, bool ue8m0,
                                                 bool columnMajor,
                                                 bool tmaAligned) {
  const char *op =
      ue8m0 ? "per_token_group_quant_fp8_ue8m0" : "per_token_group_quant_fp8";
  // tma_aligned_scales without column_major_scales: row-major, as vLLM.
  if (!columnMajor)
    return groupQuant(op, at::kFloat8_e4m3fn, x, group, eps);
  Tensor cm = columnMajorScales(op, x, groupCount(op, x, group), tmaAligned);
  if (x.dim() == 2 || x.size(-2) == 1 || leadingRows(x) == x.size(-2))
    return groupQuant(op, at::kFloat8_e4m3fn, x, group, eps, cm);
  auto [y, scale] = groupQuant(op, at::kFloat8_e4m3fn, x, group, eps);
  cm.copy_(scale);
  return {y, cm};
}

std::tuple<Tensor, Tensor> perTokenGroupQuantInt8(const Tensor &x,
                                                  int64_t group, double eps) {
  return groupQuant("per_token_group_quant_int8", at::kChar, x, group, eps);
}

/// vLLM's rms_norm_per_block_quant: y (`out`) of rmsnorm(x [+ residual, in
/// place]) * weight with f32 scales [..., hidden / group], one per group,
/// row-major or, by the op's _transposed form, transposed (groupScales);
/// fp8 scales bounded by `scaleUb`.
std::tuple<Tensor, Tensor>
rmsnormQuantGroup(const char *op, at::ScalarType out, const Tensor &x,
                  const std::optional<Tensor> &residual, const Tensor &weight,
                  int64_t group, std::optional<double> scaleUb, double eps,
                  bool transposed) {
  checkRowsAndWeight(op, x, weight);
  const int64_t groups = groupCount(op, x, group), rows = leadingRows(x);
  TORCH_CHECK(!scaleUb || *scaleUb > 0, "kgen::", op,
              ": scale_ub must be > 0, not ", *scaleUb);
  Tensor y = at::empty(x.sizes(), x.options().dtype(out));
  Tensor scale = groupScales(x, groups, transposed);
  Call c(op, x.scalar_type(), group, /*fixedLength=*/true);
  c.rows("x", asRows(x));
  if (residual) {
    checkLike(op, *residual, "residual", x);
    checkInPlace(op, *residual, "residual");
    c.rows("residual", *residual);
  }
  c.whole("weight", weight).rows("y", y).scalar("eps", eps);
  if (transposed)
    c.perHead("scale", scale.view({rows, groups}), "scale_group_stride");
  else
    c.rows("scale", scale);
  if (out != at::kChar)
    c.scalar("scale_ub",
             scaleUb.value_or(std::numeric_limits<double>::infinity()));
  c.dim("groups", groups).run(rows);
  return {y, scale};
}

std::tuple<Tensor, Tensor> rmsnormQuantGroupFp8(const Tensor &x,
                                                const Tensor &weight,
                                                int64_t group,
                                                std::optional<double> scaleUb,
                                                double eps, bool transposed) {
  return rmsnormQuantGroup(transposed ? "rmsnorm_quant_group_transposed"
                                      : "rmsnorm_quant_group",
                           at::kFloat8_e4m3fn, x, std::nullopt, weight, group,
                           scaleUb, eps, transposed);
}

std::tuple<Tensor, Tensor> rmsnormQuantInt8Group(const Tensor &x,
                                                 const Tensor &weight,
                                                 int64_t group, double eps,
                                                 bool transposed) {
  return rmsnormQuantGroup(transposed ? "rmsnorm_quant_int8_group_transposed"
                                      : "rmsnorm_quant_int8_group",
                           at::kChar, x, std::nullopt, weight, group,
                           std::nullopt, eps, transposed);
}

std::tuple<Tensor, Tensor> fusedAddRmsnormQuantGroup(
    const Tensor &x, const Tensor &residual, const Tensor &weight,
    int64_t group, std::optional<double> scaleUb, double eps, bool transposed) {
  return rmsnormQuantGroup(
      transposed ? "fused_add_rmsnorm_quant_group_transposed"
                 : "fused_add_rmsnorm_quant_group",
      at::kFloat8_e4m3fn, x, residual, weight, group, scaleUb, eps, transposed);
}

std::tuple<Tensor, Tensor>
fusedAddRmsnormQuantInt8Group(const Tensor &x, const Tensor &residual,
                              const Tensor &weight, int64_t group, double eps,
                              bool transposed) {
  return rmsnormQuantGroup(
      transposed ? "fused_add_rmsnorm_quant_int8_group_transposed"
                 : "fused_add_rmsnorm_quant_int8_group",
      at::kChar, x, residual, weight, group, std::nullopt, eps, transposed);
}

/// AdaLN over x [B, T, C] with scale and shift [B, C] per batch.
Tensor adaln(const char *op, const Tensor &x, const Tensor &scale,
             const Tensor &shift, double eps) {
  checkFloat(op, x, "x");
  TORCH_CHECK(x.dim() == 3, "kgen::", op, ": 'x' must be [B, T, C], not ",
              x.sizes());
  const int64_t b = x.size(0), t = x.size(1), c = x.size(2);
  for (const auto &[name, v] :
       {std::pair{"scale", &scale}, {"shift", &shift}}) {
    checkDtype(op, *v, name, x.scalar_type());
    checkShape(op, *v, name, {b, c});
  }
  Tensor y = at::empty(x.sizes(), x.options());
  if (t == 0)
    return y;
  Call(op, x.scalar_type(), c)
      .rows("x", asRows(x))
      .rows("scale", asRows(scale))
      .rows("shift", asRows(shift))
      .rows("y", y)
      .scalar("eps", eps)
      .dim("hidden", c)
      .dim("tokens_per_batch", t)
      .run(b * t);
  return y;
}

Tensor adalnLayernorm(const Tensor &x, const Tensor &scale, const Tensor &shift,
                      double eps) {
  return adaln("adaln", x, scale, shift, eps);
}

Tensor adalnRmsnorm(const Tensor &x, const Tensor &scale, const Tensor &shift,
                    double eps) {
  return adaln("adaln_rmsnorm", x, scale, shift, eps);
}

/// y = f(x) elementwise over rows.
Tensor unary(const char *op, const char *dimName, const Tensor &x) {
  checkFloat(op, x, "x");
  const int64_t n = x.size(-1);
  Tensor y = at::empty(x.sizes(), x.options());
  Call(op, x.scalar_type(), n)
      .rows("x", asRows(x))
      .rows("y", y)
      .dim(dimName, n)
      .run(leadingRows(x));
  return y;
}

Tensor silu(const Tensor &x) { return unary("silu", "d", x); }
Tensor gelu(const Tensor &x) { return unary("gelu", "d", x); }
Tensor geluTanh(const Tensor &x) { return unary("gelu_tanh", "d", x); }
Tensor geluQuick(const Tensor &x) { return unary("gelu_quick", "d", x); }
Tensor geluNew(const Tensor &x) { return unary("gelu_new", "d", x); }
Tensor geluFast(const Tensor &x) { return unary("gelu_fast", "d", x); }
Tensor softmax(const Tensor &x) { return unary("softmax", "n", x); }

Tensor rmsnormNoWeight(const Tensor &x, double eps) {
  checkFloat("rmsnorm_noweight", x, "x");
  const int64_t h = x.size(-1);
  Tensor y = at::empty(x.sizes(), x.options());
  Call("rmsnorm_noweight", x.scalar_type(), h)
      .rows("x", asRows(x))
      .rows("y", y)
      .scalar("eps", eps)
      .dim("hidden", h)
      .run(leadingRows(x));
  return y;
}

/// y [.., d] from x [.., 2d] holding both halves (or, swigluoai, pairs),
/// with the op's scalar parameters; an e4m3 y when `fp8Out`.
Tensor gated(const char *op, const Tensor &x,
             std::initializer_list<std::pair<const char *, double>> scalars,
             bool fp8Out = false) {
  checkFloat(op, x, "x");
  const int64_t twoD = x.size(-1);
  TORCH_CHECK(twoD % 2 == 0, "kgen::", op,
              ": the last dim of 'x' holds both halves, so it must be even, "
              "not ",
              twoD);
  const int64_t d = twoD / 2;
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
  shape.back() = d;
  auto out = fp8Out ? x.options().dtype(at::kFloat8_e4m3fn) : x.options();
  Tensor y = at::empty(shape, out);
  Call c(op, x.scalar_type(), d);
  c.rows("x", asRows(x)).rows("y", y);
  for (auto [name, value] : scalars)
    c.scalar(name, value);
  c.dim("d", d).run(leadingRows(x));
  return y;
}

Tensor siluAndMul(const Tensor &x) { return gated("silu_and_mul", x, {}); }
Tensor mulAndSilu(const Tensor &x) { return gated("mul_and_silu", x, {}); }
Tensor geluAndMul(const Tensor &x) { return gated("gelu_and_mul", x, {}); }
Tensor geluTanhAndMul(const Tensor &x) {
  return gated("gelu_tanh_and_mul", x, {});
}
Tensor fatreluAndMul(const Tensor &x, double threshold) {
  return gated("fatrelu_and_mul", x, {{"threshold", threshold}});
}
Tensor swigluOAIAndMul(const Tensor &x, double alpha, double limit) {
  TORCH_CHECK(limit >= 0, "kgen::swigluoai_and_mul: limit must be >= 0, not ",
              limit);
  return gated("swigluoai_and_mul", x, {{"alpha", alpha}, {"limit", limit}});
}
Tensor siluAndMulQuant(const Tensor &x, double scale) {
  TORCH_CHECK(scale > 0, "kgen::silu_and_mul_quant: scale must be > 0, not ",
              scale);
  return gated("silu_and_mul_quant", x, {{"scale", scale}}, /*fp8Out=*/true);
}

/// vLLM's silu_and_mul_per_block_quant: silu_and_mul of x [.., 2d] in f32,
/// quantized per group of `group` elements of y [.., d], with f32 scales
/// [.., d / group], row-major or transposed (groupScales); fp8 scales are
/// capped by `scaleUb`.
std::tuple<Tensor, Tensor> siluAndMulQuantGroup(const char *op,
                                                at::ScalarType out,
                                                const Tensor &x, int64_t group,
                                                std::optional<double> scaleUb,
                                                bool transposed) {
  checkFloat(op, x, "x");
  const int64_t twoD = x.size(-1), d = twoD / 2;
  TORCH_CHECK(twoD % 2 == 0, "kgen::", op,
              ": the last dim of 'x' holds both halves, so it must be even, "
              "not ",
              twoD);
  TORCH_CHECK(group > 0 && d % group == 0, "kgen::", op, ": group_size ", group,
              " must divide half the last dim of 'x' (", d, ")");
  TORCH_CHECK(!scaleUb || *scaleUb > 0, "kgen::", op,
              ": scale_ub must be > 0, not ", *scaleUb);
  const int64_t groups = d / group, rows = leadingRows(x);
  std::vector<int64_t> shape(x.sizes().begin(), x.sizes().end());
  shape.back() = d;
  Tensor y = at::empty(shape, x.options().dtype(out));
  Tensor scale = groupScales(y, groups, transposed);
  if (rows == 0)
    return {y, scale};
  const Tensor xs = asRows(x).view({rows, twoD});
  Call c(op, x.scalar_type(), group, /*fixedLength=*/true);
  c.rows("gate", xs.narrow(1, 0, d).view({rows, groups, group}), 2)
      .rows("up", xs.narrow(1, d, d).view({rows, groups, group}), 2)
      .rows("y", y.view({rows, groups, group}), 2)
      .perHead("scale", scale.view({rows, groups}), "scale_group_stride");
  if (out != at::kChar)
    c.scalar("scale_ub",
             scaleUb.value_or(std::numeric_limits<double>::infinity()));
  c.dim("groups", groups).run(rows * groups);
  return {y, scale};
}

std::tuple<Tensor, Tensor>
siluAndMulQuantGroupFp8(const Tensor &x, int64_t group,
                        std::optional<double> scaleUb, bool transposed) {
  return siluAndMulQuantGroup("silu_and_mul_quant_group", at::kFloat8_e4m3fn, x,
                              group, scaleUb, transposed);
}

std::tuple<Tensor, Tensor>
siluAndMulQuantInt8Group(const Tensor &x, int64_t group, bool transposed) {
  return siluAndMulQuantGroup("silu_and_mul_quant_int8_group", at::kChar, x,
                              group, std::nullopt, transposed);
}

/// q [..., Hq, D] and k [..., Hk, D] over the same tokens: (tokens, Hq, Hk, D).
std::tuple<int64_t, int64_t, int64_t, int64_t>
ropeHeads(const char *op, const Tensor &q, const Tensor &k) {
  checkFloat(op, q, "q");
  TORCH_CHECK(q.dim() >= 2 && k.dim() >= 2, "kgen::", op,
              ": 'q' and 'k' must be [..., heads, head_dim], not ", q.sizes(),
              " and ", k.sizes());
  checkDtype(op, k, "k", q.scalar_type());
  const int64_t d = q.size(-1);
  TORCH_CHECK(k.size(-1) == d, "kgen::", op, ": 'k' has head_dim ", k.size(-1),
              ", 'q' ", d);
  TORCH_CHECK(q.sizes().slice(0, q.dim() - 2) ==
                  k.sizes().slice(0, k.dim() - 2),
              "kgen::", op, ": 'q' ", q.sizes(), " and 'k' ", k.sizes(),
              " must have the same leading (token) dims");
  return {leadingRows(q, 2), q.size(-2), k.size(-2), d};
}

/// Ops written in place on q and k refuse the two when they may share an
/// element (the rows would race). Views of one fused qkv buffer share a token
/// stride with each token's heads side by side, and are proven apart here.
void checkHeadsApart(const char *op, const Tensor &q, const Tensor &k) {
  int64_t qPitch = 0, kPitch = 0;
  const int64_t qs = headsStride(q, qPitch), ks = headsStride(k, kPitch);
  if (!q.numel() || !k.numel() || qs < 0 || ks < 0 || // Call reports these
      !q.storage().is_alias_of(k.storage()))
    return;
  const int64_t tokens = leadingRows(q, 2), d = q.size(-1);
  const int64_t qRow = (q.size(-2) - 1) * qPitch + d;
  const int64_t kRow = (k.size(-2) - 1) * kPitch + d;
  const int64_t qo = q.storage_offset(), ko = k.storage_offset();
  if (qo + (tokens - 1) * qs + qRow <= ko ||
      ko + (tokens - 1) * ks + kRow <= qo)
    return;
  if (qs == ks && qRow <= qs && kRow <= qs) {
    const int64_t r = ((ko - qo) % qs + qs) % qs;
    if (r >= qRow && r + kRow <= qs)
      return;
  }
  TORCH_CHECK(false, "kgen::", op,
              ": 'q' and 'k' share memory and may overlap (both are written "
              "in place); pass separate tensors or views of one row's "
              "disjoint heads (strides ",
              q.strides(), " and ", k.strides(), ", offsets ", qo, " and ", ko,
              ")");
}

/// Positions as the full and rotary forms read them, i64: i32 ones
/// (FlashInfer's pos_ids) are widened first, one small copy.
Tensor longPositions(const char *op, const Tensor &positions) {
  TORCH_CHECK(positions.scalar_type() == at::kLong ||
                  positions.scalar_type() == at::kInt,
              "kgen::", op, ": 'positions' must be Long or Int, not ",
              positions.scalar_type());
  return positions.to(at::kLong);
}

/// On the host a gather past the cache is checked here; on the GPU it is
/// not (that would read the positions back and synchronize).
void checkPositionRange(const char *op, const Tensor &positions,
                        int64_t cacheRows) {
  if (!positions.is_cpu() || !positions.numel())
    return;
  auto [lo, hi] = at::aminmax(positions);
  TORCH_CHECK(lo.item<int64_t>() >= 0 && hi.item<int64_t>() < cacheRows,
              "kgen::", op, ": positions must lie in [0, ", cacheRows,
              "), the rows of 'cos_sin_cache'; they span [", lo.item<int64_t>(),
              ", ", hi.item<int64_t>(), "]");
}

/// The kernels of a rope op: with k; q alone (vLLM's key None); and both
/// with the cache in q's 16-bit dtype. nullptr: the op has no such form.
struct RopeForms {
  const char *op, *qOnly = nullptr, *cache16 = nullptr, *qOnlyCache16 = nullptr;
  /// rotary_dim < head_dim (a run-time rotary_pairs), f32 cache and q's,
  /// with k and on q alone.
  const char *rotary = nullptr, *rotaryCache16 = nullptr;
  const char *qOnlyRotary = nullptr, *qOnlyRotaryCache16 = nullptr;
};

/// vLLM's rotary_embedding in place: positions [...] (the tokens of q and k),
/// cos_sin_cache [max_pos, rot] with cos then sin halves: f32, or (with
/// cache16 forms) q's dtype, as vLLM's kernel reads it.
void rope(const RopeForms &f, bool partial, const Tensor &pos, const Tensor &q,
          const std::optional<Tensor> &key, const Tensor &cache) {
  const char *op = f.op;
  TORCH_CHECK(key || f.qOnly, "kgen::", op,
              ": 'k' is required (rope_neox and rope_gptj take None)");
  const Tensor &k = key ? *key : q;
  auto [tokens, hq, hk, d] = ropeHeads(op, q, k);
  if (key)
    checkHeadsApart(op, q, k);
  if (partial)
    checkDtype(op, pos, "positions", at::kInt);
  const Tensor positions = partial ? pos : longPositions(op, pos);
  TORCH_CHECK(positions.numel() == tokens, "kgen::", op, ": 'positions' has ",
              positions.numel(), " entries for ", tokens, " tokens");
  const bool cache16 = f.cache16 && q.scalar_type() != at::kFloat &&
                       cache.scalar_type() == q.scalar_type();
  if (partial)
    checkDtype(op, cache, "cos_sin_cache", q.scalar_type());
  else
    TORCH_CHECK(cache16 || cache.scalar_type() == at::kFloat, "kgen::", op,
                ": 'cos_sin_cache' must be Float",
                f.cache16 ? " or q's dtype" : "", ", not ",
                cache.scalar_type());
  // A cache narrower than a head rotates its first rotary_dim elements.
  const int64_t rot = partial ? d / 2 : d;
  TORCH_CHECK(cache.dim() == 2 &&
                  (cache.size(1) == rot ||
                   (f.rotary && cache.size(1) >= 2 && cache.size(1) < d &&
                    cache.size(1) % 2 == 0)),
              "kgen::", op, ": 'cos_sin_cache' must be [max_pos, ", rot, "]",
              f.rotary ? " or [max_pos, rotary_dim] with rotary_dim even and "
                         "below head_dim"
                       : "",
              ", not ", cache.sizes());
  const bool rotary = cache.size(1) != rot;
  checkPositionRange(op, positions, cache.size(0));
  const char *kernel =
      key ? (rotary ? (cache16 ? f.rotaryCache16 : f.rotary)
                    : (cache16 ? f.cache16 : op))
          : (rotary ? (cache16 ? f.qOnlyRotaryCache16 : f.qOnlyRotary)
                    : (cache16 ? f.qOnlyCache16 : f.qOnly));
  Call call(kernel, q.scalar_type(), d, /*fixedLength=*/true);
  call.heads("q", q, "q_head_stride");
  if (key)
    call.heads("k", k, "k_head_stride");
  call.whole("positions", positions.contiguous())
      .rows("cos_sin_cache", asRows(cache))
      .dim("q_heads", hq)
      .dim("max_pos", cache.size(0));
  if (key)
    call.dim("k_heads", hk);
  if (rotary)
    call.dim("rotary_pairs", cache.size(1) / 2);
  call.run(tokens * (hq + (key ? hk : 0)));
}

/// q_weight and k_weight: [D] in q's dtype each.
void checkQKWeights(const char *op, const Tensor &q, int64_t d,
                    const Tensor &qw, const Tensor &kw) {
  for (const auto &[name, w] :
       {std::pair{"q_weight", &qw}, std::pair{"k_weight", &kw}}) {
    checkDtype(op, *w, name, q.scalar_type());
    checkShape(op, *w, name, {d});
  }
}

/// Qwen3's q_norm and k_norm in one launch, in place on q [..., Hq, D] and
/// k [..., Hk, D] (heads may be padded inside a token's row).
void qkRmsnorm(const Tensor &q, const Tensor &k, const Tensor &qw,
               const Tensor &kw, double eps) {
  const char *op = "qk_rmsnorm";
  auto [tokens, hq, hk, d] = ropeHeads(op, q, k);
  checkHeadsApart(op, q, k);
  checkQKWeights(op, q, d, qw, kw);
  Call call(op, q.scalar_type(), d, /*fixedLength=*/true);
  call.heads("q", q, "q_head_stride");
  call.heads("k", k, "k_head_stride");
  call.whole("q_weight", qw)
      .whole("k_weight", kw)
      .dim("q_heads", hq)
      .dim("k_heads", hk)
      .scalar("eps", eps)
      .run(tokens * (hq + hk));
}

/// vLLM's fused_qk_norm_rope on q and k (v is left alone): qk_rmsnorm, then
/// rope by cos_sin_cache [max_pos, rotary_dim] in q's dtype at int64 (or
/// int32) positions; rotary_dim is D, D / 2 or D / 4 (vLLM's partial factors).
void qkNormRope(const Tensor &pos, const Tensor &q, const Tensor &k,
                const Tensor &qw, const Tensor &kw, const Tensor &cache,
                double eps, bool neox) {
  const char *op = neox ? "qk_norm_rope_neox" : "qk_norm_rope_gptj";
  auto [tokens, hq, hk, d] = ropeHeads(op, q, k);
  checkHeadsApart(op, q, k);
  checkQKWeights(op, q, d, qw, kw);
  const Tensor positions = longPositions(op, pos);
  TORCH_CHECK(positions.numel() == tokens, "kgen::", op, ": 'positions' has ",
              positions.numel(), " entries for ", tokens, " tokens");
  checkDtype(op, cache, "cos_sin_cache", q.scalar_type());
  const int64_t rot = cache.dim() == 2 ? cache.size(1) : 0;
  TORCH_CHECK(rot && (rot == d || rot * 2 == d || rot * 4 == d), "kgen::", op,
              ": 'cos_sin_cache' must be [max_pos, rotary_dim] with "
              "rotary_dim ",
              d, ", ", d / 2, " or ", d / 4,
              " (head_dim, or vLLM's partial "
              "factors 0.5 and 0.25), not ",
              cache.sizes());
  checkPositionRange(op, positions, cache.size(0));
  static const char *const kernels[2][3] = {
      {"qk_norm_rope_gptj", "qk_norm_rope_gptj_half",
       "qk_norm_rope_gptj_quarter"},
      {"qk_norm_rope_neox", "qk_norm_rope_neox_half",
       "qk_norm_rope_neox_quarter"}};
  const char *kernel = kernels[neox][rot == d ? 0 : rot * 2 == d ? 1 : 2];
  Call call(kernel, q.scalar_type(), d, /*fixedLength=*/true);
  call.heads("q", q, "q_head_stride");
  call.heads("k", k, "k_head_stride");
  call.whole("q_weight", qw)
      .whole("k_weight", kw)
      .whole("positions", positions.contiguous())
      .rows("cos_sin_cache", asRows(cache))
      .dim("q_heads", hq)
      .dim("k_heads", hk)
      .dim("max_pos", cache.size(0))
      .scalar("eps", eps)
      .run(tokens * (hq + hk));
}

/// Hugging Face's apply_rotary_pos_emb, token-major: q [..., Hq, D],
/// k [..., Hk, D], cos and sin [..., D] over the same tokens.
std::tuple<Tensor, Tensor> ropeHf(const Tensor &q, const Tensor &k,
                                  const Tensor &cos, const Tensor &sin) {
  const char *op = "rope_hf";
  auto [tokens, hq, hk, d] = ropeHeads(op, q, k);
  for (const auto &[name, v] : {std::pair{"cos", &cos}, {"sin", &sin}}) {
    checkDtype(op, *v, name, q.scalar_type());
    TORCH_CHECK(v->dim() >= 1 && v->size(-1) == d && leadingRows(*v) == tokens,
                "kgen::", op, ": '", name, "' must be [tokens, ", d, "] for ",
                tokens, " tokens, not ", v->sizes());
  }
  Tensor qo = at::empty(q.sizes(), q.options());
  Tensor ko = at::empty(k.sizes(), k.options());
  Call(op, q.scalar_type(), d, /*fixedLength=*/true)
      .rows("q", asRows(q, 2), 2)
      .rows("k", asRows(k, 2), 2)
      .rows("cos", asRows(cos))
      .rows("sin", asRows(sin))
      .rows("q_out", qo, 2)
      .rows("k_out", ko, 2)
      .dim("q_heads", hq)
      .dim("k_heads", hk)
      .run(tokens * (hq + hk));
  return {qo, ko};
}

/// [rtol, atol] of kgen's GPU tests for outputs of `dtype` ("bf16").
std::vector<double> tolerance(c10::string_view dtype) {
  double rtol = 0, atol = 0;
  std::string name(dtype);
  TORCH_CHECK(kgen_reference_tolerance(name.c_str(), &rtol, &atol) == 0,
              "kgen::_tolerance: unknown dtype '", name, "'");
  return {rtol, atol};
}

/// "op dtype length" of every embedded kernel (length 0: the dynamic one).
std::vector<std::string> kernels() { return embeddedKernels(); }

void impls(torch::Library &m) {
  m.impl("rmsnorm", &rmsnorm);
  m.impl("gemma_rmsnorm", &gemmaRmsnorm);
  m.impl("layernorm", &layernorm);
  m.impl("fused_add_rmsnorm", &fusedAddRmsnorm);
  m.impl("gemma_fused_add_rmsnorm", &gemmaFusedAddRmsnorm);
  m.impl("add_rmsnorm", &addRmsnorm);
  m.impl("rmsnorm_flashinfer", &rmsnormFlashinfer);
  m.impl("fused_add_rmsnorm_flashinfer", &fusedAddRmsnormFlashinfer);
  m.impl("gemma_fused_add_rmsnorm_flashinfer", &gemmaFusedAddRmsnormFlashinfer);
  m.impl("rmsnorm_quant_static", &rmsnormQuantStatic);
  m.impl("rmsnorm_quant_dynamic", &rmsnormQuantDynamic);
  m.impl("fused_add_rmsnorm_quant_static", &fusedAddRmsnormQuantStatic);
  m.impl("fused_add_rmsnorm_quant_dynamic", &fusedAddRmsnormQuantDynamic);
  m.impl("rmsnorm_quant_int8_static", &rmsnormQuantInt8Static);
  m.impl("rmsnorm_quant_int8_dynamic", &rmsnormQuantInt8Dynamic);
  m.impl("fused_add_rmsnorm_quant_int8_static",
         &fusedAddRmsnormQuantInt8Static);
  m.impl("fused_add_rmsnorm_quant_int8_dynamic",
         &fusedAddRmsnormQuantInt8Dynamic);
  m.impl("quant_int8_static", &quantInt8Static);
  m.impl("quant_int8_dynamic", &quantInt8Dynamic);
  m.impl("per_token_group_quant_fp8", &perTokenGroupQuantFp8);
  m.impl("per_token_group_quant_int8", &perTokenGroupQuantInt8);
  m.impl("rmsnorm_quant_group", &rmsnormQuantGroupFp8);
  m.impl("rmsnorm_quant_int8_group", &rmsnormQuantInt8Group);
  m.impl("fused_add_rmsnorm_quant_group", &fusedAddRmsnormQuantGroup);
  m.impl("fused_add_rmsnorm_quant_int8_group", &fusedAddRmsnormQuantInt8Group);
  m.impl("adaln", &adalnLayernorm);
  m.impl("adaln_rmsnorm", &adalnRmsnorm);
  m.impl("silu", &silu);
  m.impl("gelu", &gelu);
  m.impl("gelu_tanh", &geluTanh);
  m.impl("gelu_quick", &geluQuick);
  m.impl("gelu_new", &geluNew);
  m.impl("gelu_fast", &geluFast);
  m.impl("softmax", &softmax);
  m.impl("rmsnorm_noweight", &rmsnormNoWeight);
  m.impl("silu_and_mul", &siluAndMul);
  m.impl("mul_and_silu", &mulAndSilu);
  m.impl("gelu_and_mul", &geluAndMul);
  m.impl("gelu_tanh_and_mul", &geluTanhAndMul);
  m.impl("fatrelu_and_mul", &fatreluAndMul);
  m.impl("swigluoai_and_mul", &swigluOAIAndMul);
  m.impl("silu_and_mul_quant", &siluAndMulQuant);
  m.impl("silu_and_mul_quant_group", &siluAndMulQuantGroupFp8);
  m.impl("silu_and_mul_quant_int8_group", &siluAndMulQuantInt8Group);
  using RopeFn =
      void (*)(const Tensor &, const Tensor &, const Tensor &, const Tensor &);
  using RopeQFn = void (*)(const Tensor &, const Tensor &,
                           const std::optional<Tensor> &, const Tensor &);
  m.impl("rope_neox",
         RopeQFn([](const Tensor &p, const Tensor &q,
                    const std::optional<Tensor> &k, const Tensor &c) {
           rope({"rope_neox", "rope_neox_q", "rope_neox_cache16",
                 "rope_neox_q_cache16", "rope_neox_rotary",
                 "rope_neox_rotary_cache16", "rope_neox_rotary_q",
                 "rope_neox_rotary_q_cache16"},
                false, p, q, k, c);
         }));
  m.impl("rope_gptj",
         RopeQFn([](const Tensor &p, const Tensor &q,
                    const std::optional<Tensor> &k, const Tensor &c) {
           rope({"rope_gptj", "rope_gptj_q", "rope_gptj_cache16",
                 "rope_gptj_q_cache16", "rope_gptj_rotary",
                 "rope_gptj_rotary_cache16", "rope_gptj_rotary_q",
                 "rope_gptj_rotary_q_cache16"},
                false, p, q, k, c);
         }));
  m.impl("rope_neox_partial", RopeFn([](const Tensor &p, const Tensor &q,
                                        const Tensor &k, const Tensor &c) {
           rope({"rope_neox_partial"}, true, p, q, k, c);
         }));
  m.impl("rope_gptj_partial", RopeFn([](const Tensor &p, const Tensor &q,
                                        const Tensor &k, const Tensor &c) {
           rope({"rope_gptj_partial"}, true, p, q, k, c);
         }));
  m.impl("rope_hf", &ropeHf);
  m.impl("qk_rmsnorm", &qkRmsnorm);
  using QKNormRopeFn =
      void (*)(const Tensor &, const Tensor &, const Tensor &, const Tensor &,
               const Tensor &, const Tensor &, double);
  m.impl("qk_norm_rope_neox",
         QKNormRopeFn(
             [](const Tensor &p, const Tensor &q, const Tensor &k,
                const Tensor &qw, const Tensor &kw, const Tensor &c,
                double eps) { qkNormRope(p, q, k, qw, kw, c, eps, true); }));
  m.impl("qk_norm_rope_gptj",
         QKNormRopeFn(
             [](const Tensor &p, const Tensor &q, const Tensor &k,
                const Tensor &qw, const Tensor &kw, const Tensor &c,
                double eps) { qkNormRope(p, q, k, qw, kw, c, eps, false); }));
}

} // namespace
} // namespace kgen::torch_ext

TORCH_LIBRARY(kgen, m) {
  const std::vector<at::Tag> tags = {at::Tag::pt2_compliant_tag};
  for (const char *schema : {
           "rmsnorm(Tensor x, Tensor weight, float eps=1e-6) -> Tensor",
           "gemma_rmsnorm(Tensor x, Tensor weight, float eps=1e-6) -> Tensor",
           "layernorm(Tensor x, Tensor weight, Tensor? bias, float eps=1e-5) "
           "-> Tensor",
           "fused_add_rmsnorm(Tensor(a!) x, Tensor(b!) residual, "
           "Tensor? weight, float eps=1e-6) -> ()",
           "gemma_fused_add_rmsnorm(Tensor(a!) x, Tensor(b!) residual, "
           "Tensor weight, float eps=1e-6) -> ()",
           "rmsnorm_flashinfer(Tensor x, Tensor weight, float eps=1e-6) "
           "-> Tensor",
           "fused_add_rmsnorm_flashinfer(Tensor(a!) x, Tensor(b!) residual, "
           "Tensor weight, float eps=1e-6) -> ()",
           "gemma_fused_add_rmsnorm_flashinfer(Tensor(a!) x, Tensor(b!) "
           "residual, Tensor weight, float eps=1e-6) -> ()",
           "add_rmsnorm(Tensor x, Tensor residual, Tensor weight, "
           "float eps=1e-6) -> (Tensor, Tensor)",
           "rmsnorm_quant_static(Tensor x, Tensor weight, float scale, "
           "float eps=1e-6) -> Tensor",
           "rmsnorm_quant_dynamic(Tensor x, Tensor weight, float eps=1e-6) "
           "-> (Tensor, Tensor)",
           "fused_add_rmsnorm_quant_static(Tensor x, Tensor(a!) residual, "
           "Tensor weight, float scale, float eps=1e-6) -> Tensor",
           "fused_add_rmsnorm_quant_dynamic(Tensor x, Tensor(a!) residual, "
           "Tensor weight, float? scale_ub=None, float eps=1e-6) "
           "-> (Tensor, Tensor)",
           "rmsnorm_quant_int8_static(Tensor x, Tensor weight, float scale, "
           "float eps=1e-6) -> Tensor",
           "rmsnorm_quant_int8_dynamic(Tensor x, Tensor weight, "
           "float eps=1e-6) -> (Tensor, Tensor)",
           "fused_add_rmsnorm_quant_int8_static(Tensor x, Tensor(a!) "
           "residual, Tensor weight, float scale, float eps=1e-6) -> Tensor",
           "fused_add_rmsnorm_quant_int8_dynamic(Tensor x, Tensor(a!) "
           "residual, Tensor weight, float eps=1e-6) -> (Tensor, Tensor)",
           "quant_int8_static(Tensor x, float scale) -> Tensor",
           "quant_int8_dynamic(Tensor x) -> (Tensor, Tensor)",
           "per_token_group_quant_fp8(Tensor x, int group_size, "
           "float eps=1e-10, bool use_ue8m0=False, bool "
           "column_major_scales=False, bool tma_aligned_scales=False) -> "
           "(Tensor, Tensor)",
           "per_token_group_quant_int8(Tensor x, int group_size, "
           "float eps=1e-10) -> (Tensor, Tensor)",
           "rmsnorm_quant_group(Tensor x, Tensor weight, int group_size, "
           "float? scale_ub=None, float eps=1e-6, "
           "bool is_scale_transposed=False) -> (Tensor, Tensor)",
           "rmsnorm_quant_int8_group(Tensor x, Tensor weight, "
           "int group_size, float eps=1e-6, bool is_scale_transposed=False) "
           "-> (Tensor, Tensor)",
           "fused_add_rmsnorm_quant_group(Tensor x, Tensor(a!) residual, "
           "Tensor weight, int group_size, float? scale_ub=None, "
           "float eps=1e-6, bool is_scale_transposed=False) -> "
           "(Tensor, Tensor)",
           "fused_add_rmsnorm_quant_int8_group(Tensor x, Tensor(a!) "
           "residual, Tensor weight, int group_size, float eps=1e-6, "
           "bool is_scale_transposed=False) -> (Tensor, Tensor)",
           "adaln(Tensor x, Tensor scale, Tensor shift, float eps=1e-6) "
           "-> Tensor",
           "adaln_rmsnorm(Tensor x, Tensor scale, Tensor shift, "
           "float eps=1e-6) -> Tensor",
           "silu(Tensor x) -> Tensor",
           "gelu(Tensor x) -> Tensor",
           "gelu_tanh(Tensor x) -> Tensor",
           "gelu_quick(Tensor x) -> Tensor",
           "gelu_new(Tensor x) -> Tensor",
           "gelu_fast(Tensor x) -> Tensor",
           "softmax(Tensor x) -> Tensor",
           "rmsnorm_noweight(Tensor x, float eps=1e-6) -> Tensor",
           "silu_and_mul(Tensor x) -> Tensor",
           "mul_and_silu(Tensor x) -> Tensor",
           "gelu_and_mul(Tensor x) -> Tensor",
           "gelu_tanh_and_mul(Tensor x) -> Tensor",
           "fatrelu_and_mul(Tensor x, float threshold=0.0) -> Tensor",
           "swigluoai_and_mul(Tensor x, float alpha=1.702, float limit=7.0) "
           "-> Tensor",
           "silu_and_mul_quant(Tensor x, float scale) -> Tensor",
           "silu_and_mul_quant_group(Tensor x, int group_size, "
           "float? scale_ub=None, bool is_scale_transposed=False) -> "
           "(Tensor, Tensor)",
           "silu_and_mul_quant_int8_group(Tensor x, int group_size, "
           "bool is_scale_transposed=False) -> (Tensor, Tensor)",
           "rope_neox(Tensor positions, Tensor(a!) q, Tensor(b!)? k, "
           "Tensor cos_sin_cache) -> ()",
           "rope_gptj(Tensor positions, Tensor(a!) q, Tensor(b!)? k, "
           "Tensor cos_sin_cache) -> ()",
           "rope_neox_partial(Tensor positions, Tensor(a!) q, Tensor(b!) k, "
           "Tensor cos_sin_cache) -> ()",
           "rope_gptj_partial(Tensor positions, Tensor(a!) q, Tensor(b!) k, "
           "Tensor cos_sin_cache) -> ()",
           "rope_hf(Tensor q, Tensor k, Tensor cos, Tensor sin) "
           "-> (Tensor, Tensor)",
           "qk_rmsnorm(Tensor(a!) q, Tensor(b!) k, Tensor q_weight, "
           "Tensor k_weight, float eps=1e-6) -> ()",
           "qk_norm_rope_neox(Tensor positions, Tensor(a!) q, Tensor(b!) k, "
           "Tensor q_weight, Tensor k_weight, Tensor cos_sin_cache, "
           "float eps=1e-6) -> ()",
           "qk_norm_rope_gptj(Tensor positions, Tensor(a!) q, Tensor(b!) k, "
           "Tensor q_weight, Tensor k_weight, Tensor cos_sin_cache, "
           "float eps=1e-6) -> ()",
       })
    m.def(schema, tags);
  m.def("_tolerance(str dtype) -> float[]", &kgen::torch_ext::tolerance);
  m.def("_kernels() -> str[]", &kgen::torch_ext::kernels);
}

TORCH_LIBRARY_IMPL(kgen, CPU, m) { kgen::torch_ext::impls(m); }
TORCH_LIBRARY_IMPL(kgen, CUDA, m) { kgen::torch_ext::impls(m); }
