//===- Interpreter.h - The reference semantics of a kgen kernel -*- C++ -*-===//
//
// THE SPEC of what a kernel computes. It runs a Kernel on host memory and
// shares no code with the MLIR lowering.
//
// Per row program r in [0, rows), the nodes are evaluated in order. Row r of
// a tensor is the one its RowMap (Graph.h) picks: row r / group, a sub-row
// (heads) of it, in the tensor of a heads() view that holds it, or the table
// row named by a gather index; an index outside [0, tableRows) reads NaN for
// every element (no memory is read). Every value is a
// double already rounded to its node's dtype (roundTo in Float.h): each
// Unary/Binary/Select/Cast/Reduce result is computed in double from its
// (rounded) operands and rounded once to the node dtype; f16/bf16/fp8 round
// through f32, as PyTorch and the GPU do. Reductions sum in double. All
// stores of a row happen after the whole row is evaluated, so an in-place
// store never changes what the same row reads.
//
// Accuracy contract: elementwise + - * / and casts are correctly rounded on
// both sides, so they agree exactly. The GPU computes exp/log/tanh/erf/
// rsqrt/... with libdevice (<= 2 ulp in f32) and sums in f32 in another
// order; rounded to a narrow output dtype, those differences can flip a
// rounding. So a correct kernel's output agrees with interpret() within
// defaultTolerance(output dtype): |got - ref| <= atol + rtol * |ref|, where
// rtol is 2 ulp of the output dtype relative to the bottom of a binade
// (2^(1-mantissa bits)) and atol covers values near zero (where relative
// error is meaningless). f32 is looser than 2 ulp (1e-5) because of the
// reduction order over long rows and libdevice's error feeding later ops.
// An output computed from values rounded to a narrower float dtype takes
// that dtype's rtol (outputTolerance): the flip happened there. An integer
// output converted from a float that went through transcendental math or a
// sum may be one step off (atol 1): that float agrees only within its
// tolerance, and a rounding or truncation of it can flip.
//
// Integer arithmetic: computed in int64 and wrapped to the node's width (as
// the GPU's add.s32 does); Div truncates toward zero and x / 0 = 0. Casts
// float -> int truncate toward zero, saturate, and map NaN to 0. i64 values
// are held in doubles, so they are exact up to 2^53.
//
// Special values: max/min and amax/amin propagate NaN (torch.maximum);
// max(-0, +0) = +0, min(-0, +0) = -0; comparisons are false on NaN except
// !=; sum/mean propagate NaN and Inf as IEEE does.
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_DSL_INTERPRETER_H
#define KGEN_DSL_INTERPRETER_H

#include "dsl/Graph.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace kgen {

/// A tensor in host memory, in its dtype's encoding (Float.h).
struct HostTensor {
  void *data = nullptr;
  /// Elements between the starts of consecutive rows; <= 0 means the
  /// tensor's row length (contiguous). Layout::Rows tensors and per-head
  /// scalars (Builder::outputPerHead) use it: a Vector is one row shared by
  /// all, another RowScalar holds element r for row r.
  int64_t rowStride = 0;
};

struct Bindings {
  std::vector<int64_t> dims; ///< Value of each dim, by dim index.
  int64_t rows = 0;
  std::vector<HostTensor> tensors; ///< By tensor index (Kernel::tensors).
  std::vector<double> params;      ///< By param index.
};

struct InterpretOptions {
  /// Random rounding (Monte Carlo arithmetic): when set, each float result
  /// of arithmetic (unary, binary, a reduction) is moved by up to half an
  /// ulp of its dtype and not rounded; the move is a hash of this seed and
  /// the exact result, as a rounding is a function of it. A sum adds runs of
  /// 4 to 256 terms, then the runs' sums pairwise, as a GPU's threads and
  /// tree do; by the seed, a run's partial sums are moved too or rounded in
  /// turn. Exact results, loads, casts, max/min and integers stay exact. How
  /// far an output moves then measures how much rounding it amplifies
  /// (roundingSlack below).
  std::optional<uint64_t> perturbSeed;
  /// Computes + - * / sqrt neg abs and casts of float operands in float,
  /// which gives the double result rounded to f32 exactly; false evaluates
  /// every node in double as written above. FloatPathTest (test/ops) checks
  /// that both write the same bytes on every registered op.
  bool floatFastPath = true;
};

/// Runs the kernel on host memory. Throws std::invalid_argument (naming the
/// kernel and the tensor/dim/param) for bad bindings: wrong vector sizes,
/// null data while rows > 0, dims < 1 or past their bound, rowStride < row
/// length, rows < 0; and for a malformed Kernel (a view outside a row, bad
/// indices).
void interpret(const Kernel &k, const Bindings &b,
               const InterpretOptions &options = {});

struct Tolerance {
  double atol;
  double rtol;
};

/// The tolerance of a correct GPU kernel against interpret() for an output
/// of dtype outDtype (see the accuracy contract above):
///   f32     atol 1e-5,  rtol 1e-5
///   f16     atol 1e-3,  rtol 2^-9  (2 ulp: 10 mantissa bits)
///   bf16    atol 1e-2,  rtol 2^-6  (2 ulp: 7 mantissa bits)
///   f8e4m3  atol 2^-6,  rtol 2^-2  (2 ulp: 3 mantissa bits; atol = the
///                                    smallest normal)
///   f8e5m2  atol 2^-14, rtol 2^-1  (2 ulp: 2 mantissa bits; atol = the
///                                    smallest normal)
///   i32, i64, i8, bool: exact (0, 0).
Tolerance defaultTolerance(DType outDtype);

/// The tolerance of tensor `tensor` of `k` as an output: its dtype's, with
/// the rtol of the narrowest float dtype that the values stored into it were
/// rounded to on the way. rmsnorm_quant_dynamic's f32 scale is amax(|y|) /
/// 448 of bf16 values y: a libdevice rsqrt that flips one y's rounding moves
/// the scale by a bf16 ulp, not an f32 one. An integer tensor stored from a
/// float -> int cast of a value computed with transcendental math or a sum
/// gets atol 1 (one step); other integers are exact.
Tolerance outputTolerance(const Kernel &k, int tensor);

/// |got - ref| <= atol + rtol * |ref|; integers and bool within atol. NaN
/// matches NaN (only); an Inf matches only the same Inf.
bool withinTolerance(DType t, double got, double ref, Tolerance tol);

/// A fixed tolerance is wrong for an ill-conditioned output: adaln's
/// `norm * (1 + scale) + shift` may cancel to 0.3 from terms near 8, and a
/// layernorm row of seven elements near 32 may have a spread of 0.1, so the
/// GPU's f32 sum order alone moves the output past 1e-5. A check that finds
/// a float output outside its tolerance runs interpret() again
/// kPerturbedRuns times with perturbSeed set, and accepts the value if it is
/// within the tolerance whose atol has grown by roundingSlack:
/// kSpreadFactor times the largest |perturbed - ref|. A well-conditioned
/// output moves by an ulp or two and gets no real slack; a formula that
/// loses what the reference keeps (a variance as mean(x^2) - mean(x)^2)
/// still fails (InterpreterTest's RandomRounding tests). Narrower outputs
/// take slack only where the perturbed outputs spread past one ulp of their
/// dtype: a flipped rounding is their rtol's, more is f32 work amplified
/// before the cast (gelu's 1 + erf(x) far below 0).
inline constexpr int kPerturbedRuns = 16;
inline constexpr double kSpreadFactor = 4;
double roundingSlack(DType outDtype, double ref,
                     const std::vector<double> &perturbed);

} // namespace kgen

#endif // KGEN_DSL_INTERPRETER_H
