//===- FastMath.cpp - Cheaper arithmetic within the tolerance -------------===//
//
// Two rewrites whose error stays far inside the GPU-vs-interpreter tolerance
// (docs/design.md) and that remove most of the instructions of exp-heavy
// rows (softmax, SiLU):
//  - x / s, s a per-row scalar or one value per group of a row, becomes
//    x * (1 / s): one division per row or chunk instead of one per element
//    (at most 1.5 ulp from the rounded quotient). A subnormal s is scaled by
//    2^64 first, so 1 / s stays finite. In a kernel that stores integers an
//    ulp of the quotient moves a value across an integer step, and per-group
//    scales divide exactly, so there two FMAs correct it to the quotient;
//    there an s bounded below by a normal float (from constants and scalars'
//    least values) needs no scaling.
//  - In a kernel whose float outputs are all 16-bit or fp8, exp becomes
//    approximate (`afn`: ex2.approx of x * log2(e), relative error below
//    2^-16 where the result is normal, as Triton's exp) and an element-wise
//    x / y becomes x * rcp.approx(y) (1 ulp, full range, subnormals kept):
//    the rounding to the output's 8 or 11 bits dwarfs both. SwiGLU's SASS
//    went from 344 to 192 instructions (no div.rn slow path). f32 outputs
//    keep libdevice's exp and IEEE division.
//
//===----------------------------------------------------------------------===//
#include "codegen/Transforms/Passes.h"

namespace mlir::kgen {
#define GEN_PASS_DEF_KGENFASTMATH
#include "codegen/Transforms/Passes.h.inc"
} // namespace mlir::kgen

using namespace mlir;
using namespace mlir::kgen;

namespace {

/// Whether every float the kernel stores has at most 16 bits.
bool narrowOutputs(KernelOp k) {
  bool narrow = true;
  k.walk([&](StoreOp s) {
    Type t = getElementTypeOrSelf(s.getValue().getType());
    if (!isa<FloatType>(t) || t.getIntOrFloatBitWidth() > 16)
      narrow = false;
  });
  return narrow;
}

/// Whether the kernel stores an integer tensor.
bool storesIntegers(KernelOp k) {
  bool found = false;
  k.walk([&](StoreOp s) {
    found |= isa<IntegerType>(getElementTypeOrSelf(s.getValue().getType()));
  });
  return found;
}

/// Whether row value `v` holds one value per group of consecutive elements:
/// a group reduction, a row scalar's broadcast, a constant, or element-wise
/// arithmetic of those. The lowering makes such a value a splat per chunk,
/// so arithmetic on it runs once per chunk.
bool groupUniform(Value v) {
  Operation *op = v.getDefiningOp();
  if (!op)
    return false;
  if (isa<GroupReduceOp, BroadcastOp>(op) || matchPattern(v, m_Constant()))
    return true;
  if (!OpTrait::hasElementwiseMappableTraits(op) || op->getNumRegions())
    return false;
  return llvm::all_of(op->getOperands(), groupUniform);
}

/// The value of a float constant or splat.
std::optional<double> constantOf(Value v) {
  if (FloatAttr c; matchPattern(v, m_Constant(&c)))
    return c.getValueAsDouble();
  if (DenseFPElementsAttr c; matchPattern(v, m_Constant(&c)) && c.isSplat())
    return c.getSplatValue<APFloat>().convertToDouble();
  return std::nullopt;
}

/// A lower bound of `v` wherever it is not NaN, or none: from constants and
/// scalar arguments with a least value (kgen.min), through broadcasts, max,
/// min, and products and quotients of non-negative values by constants.
std::optional<double> lowerBound(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto k = dyn_cast<KernelOp>(arg.getOwner()->getParentOp());
    if (auto m = k ? k.getArgAttrOfType<FloatAttr>(arg.getArgNumber(), kMinAttr)
                   : FloatAttr())
      return m.getValueAsDouble();
    return std::nullopt;
  }
  if (std::optional<double> c = constantOf(v))
    return c;
  Operation *op = v.getDefiningOp();
  if (!op)
    return std::nullopt;
  if (auto b = dyn_cast<BroadcastOp>(op))
    return lowerBound(b.getInput());
  if (!isa<arith::MaximumFOp, arith::MaxNumFOp, arith::MinimumFOp,
           arith::MinNumFOp, arith::MulFOp, arith::DivFOp>(op))
    return std::nullopt;
  std::optional<double> a = lowerBound(op->getOperand(0)),
                        b = lowerBound(op->getOperand(1));
  if (isa<arith::MaximumFOp, arith::MaxNumFOp>(op))
    return a && b ? std::max(*a, *b) : a ? a : b;
  if (!a || !b)
    return std::nullopt;
  if (isa<arith::MinimumFOp, arith::MinNumFOp>(op))
    return std::min(*a, *b);
  // A product or quotient by a positive constant: its bound holds, less one
  // rounding.
  std::optional<double> c = constantOf(op->getOperand(1));
  if (*a < 0 || !c || *c <= 0)
    return std::nullopt;
  return (isa<arith::MulFOp>(op) ? *a * *c : *a / *c) * (1 - 0x1p-23);
}

/// x / d -> (x * (1 / (s * k))) * k, where d is broadcast(s) (a per-row
/// scalar) or group-uniform (s = d, computed once per chunk), with k = 2^64
/// when |s| is subnormal and 1 otherwise. `exact` corrects the product
/// q = x * r (r = 1 / s') by Markstein's step: the residual x - s' q is exact
/// under an FMA, and q + residual * r rounds to x / s' (barring over- or
/// underflow); a NaN there (x or s' infinite) keeps q. A group divisor is
/// always corrected: per-group scales divide (vLLM's per-block quant).
bool rewriteUniformDivision(arith::DivFOp div, bool exact) {
  Value x = div.getLhs(), d = div.getRhs();
  auto bcast = d.getDefiningOp<BroadcastOp>();
  Value s = bcast ? bcast.getInput() : d;
  if (!getElementTypeOrSelf(s.getType()).isF32())
    return false;
  if (!bcast && (!groupUniform(d) || groupUniform(x)))
    return false;
  exact |= !bcast;
  OpBuilder b(div);
  Location loc = div.getLoc();
  Type t = div.getType();
  // `v`, a value of s's shape, as a row value.
  auto row = [&](Value v) -> Value {
    return bcast ? BroadcastOp::create(b, loc, t, v).getResult() : v;
  };
  auto f32 = [&](double v) -> Value {
    Value c = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
    return bcast ? c : BroadcastOp::create(b, loc, t, c).getResult();
  };
  // A divisor bounded below by a normal float needs no k where the quotient
  // is corrected; a per-row fp8 quotient without it spilled a held row
  // (bench/results/2026-11-28/RESULTS.md, "Group scales in 32 bits").
  std::optional<double> least = exact ? lowerBound(s) : std::nullopt;
  Value k, sk = s;
  if (!least || *least < 0x1p-126) {
    Value tiny =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                              math::AbsFOp::create(b, loc, s), f32(0x1p-126));
    k = arith::SelectOp::create(b, loc, tiny, f32(0x1p64), f32(1.0));
    sk = arith::MulFOp::create(b, loc, s, k);
  }
  Value r = arith::DivFOp::create(b, loc, f32(1.0), sk);
  Value rRow = row(r);
  Value scaled = arith::MulFOp::create(b, loc, x, rRow);
  if (exact) {
    Value e = math::FmaOp::create(b, loc, arith::NegFOp::create(b, loc, scaled),
                                  row(sk), x);
    Value q = math::FmaOp::create(b, loc, e, rRow, scaled);
    Value nan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, q, q);
    scaled = arith::SelectOp::create(b, loc, nan, scaled, q);
  }
  Value q = k ? arith::MulFOp::create(b, loc, scaled, row(k)) : scaled;
  div.replaceAllUsesWith(q);
  div.erase();
  if (bcast && bcast->use_empty())
    bcast.erase();
  return true;
}

/// x / y -> x * approx(1 / y): rcp.approx.f32, 1 ulp over the whole range
/// (subnormal reciprocals too), where div.rn.f32 is a dozen instructions and
/// a slow-path call per element. The reciprocal carries `afn`, which also
/// marks it as done.
void rewriteToReciprocal(arith::DivFOp div) {
  OpBuilder b(div);
  Location loc = div.getLoc();
  Type t = div.getType();
  Value one = BroadcastOp::create(
      b, loc, t,
      arith::ConstantOp::create(b, loc,
                                b.getFloatAttr(getElementTypeOrSelf(t), 1.0)));
  Value r = arith::DivFOp::create(b, loc, one, div.getRhs(),
                                  arith::FastMathFlags::afn);
  div.replaceAllUsesWith(
      arith::MulFOp::create(b, loc, div.getLhs(), r).getResult());
  div.erase();
}

struct FastMath : ::mlir::kgen::impl::KgenFastMathBase<FastMath> {
  void runOnOperation() override {
    getOperation().walk([&](KernelOp k) {
      bool narrow = narrowOutputs(k);
      bool exact = storesIntegers(k);
      SmallVector<arith::DivFOp> divs;
      k.walk([&](arith::DivFOp d) {
        if (isa<RankedTensorType>(d.getType()))
          divs.push_back(d);
      });
      // A division of group-uniform values runs once per chunk: left exact.
      for (arith::DivFOp d : divs)
        if (!rewriteUniformDivision(d, exact) && narrow &&
            !groupUniform(d.getResult()) &&
            getElementTypeOrSelf(d.getType()).isF32() &&
            !arith::bitEnumContainsAll(d.getFastmath(),
                                       arith::FastMathFlags::afn))
          rewriteToReciprocal(d);
      if (!narrow)
        return;
      k.walk([&](math::ExpOp e) {
        e.setFastmath(e.getFastmath() | arith::FastMathFlags::afn);
      });
    });
  }
};

} // namespace
