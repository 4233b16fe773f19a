//===- ExpandFP8.cpp - f32 to fp8 conversions, as bytes -------------------===//
#include "codegen/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::kgen {
#define GEN_PASS_DEF_KGENEXPANDFP8
#include "codegen/Transforms/Passes.h.inc"
} // namespace mlir::kgen

using namespace mlir;

namespace {

/// The layout of a small float: mantissa bits, exponent bias, and the code
/// of its largest finite value.
struct SmallFloat {
  int mantissa;
  int bias;
  int maxCode;
};

std::optional<SmallFloat> layoutOf(Type t) {
  if (isa<Float8E4M3FNType>(t))
    return SmallFloat{3, 7, 0x7E}; // 448; 0x7F is NaN
  if (isa<Float8E5M2Type>(t))
    return SmallFloat{2, 15, 0x7B}; // 57344; 0x7C is Inf
  return std::nullopt;
}

struct ExpandTruncF : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rw) const override {
    Type outElem = getElementTypeOrSelf(op.getType());
    std::optional<SmallFloat> f = layoutOf(outElem);
    if (!f || !getElementTypeOrSelf(op.getIn().getType()).isF32())
      return failure();
    Location loc = op.getLoc();
    Type inType = op.getIn().getType();
    auto like = [&](Type elem) -> Type {
      if (auto vt = dyn_cast<VectorType>(inType))
        return vt.clone(elem);
      return elem;
    };
    Type i32 = like(rw.getI32Type()), i8 = like(rw.getI8Type());
    Type f32 = inType;
    auto ci = [&](int64_t v) -> Value {
      return arith::ConstantOp::create(
          rw, loc, i32,
          isa<VectorType>(i32)
              ? (TypedAttr)DenseElementsAttr::get(cast<ShapedType>(i32),
                                                  rw.getI32IntegerAttr(v))
              : (TypedAttr)rw.getI32IntegerAttr(v));
    };
    auto cf = [&](float v) -> Value {
      return arith::ConstantOp::create(
          rw, loc, f32,
          isa<VectorType>(f32)
              ? (TypedAttr)DenseElementsAttr::get(cast<ShapedType>(f32),
                                                  rw.getF32FloatAttr(v))
              : (TypedAttr)rw.getF32FloatAttr(v));
    };
    using P = arith::CmpIPredicate;
    Value bits = arith::BitcastOp::create(rw, loc, i32, op.getIn());
    Value abs = arith::AndIOp::create(rw, loc, bits, ci(0x7FFFFFFF));
    Value sign = arith::AndIOp::create(
        rw, loc, arith::ShRUIOp::create(rw, loc, bits, ci(24)), ci(0x80));
    // Normal results: round the f32 mantissa to `mantissa` bits, to nearest
    // even, then rebias the exponent.
    int shift = 23 - f->mantissa;
    Value lsb = arith::AndIOp::create(
        rw, loc, arith::ShRUIOp::create(rw, loc, abs, ci(shift)), ci(1));
    Value rounded = arith::AddIOp::create(
        rw, loc,
        arith::AddIOp::create(rw, loc, abs, ci((1 << (shift - 1)) - 1)), lsb);
    Value normal = arith::SubIOp::create(
        rw, loc, arith::ShRUIOp::create(rw, loc, rounded, ci(shift)),
        ci((127 - f->bias) << f->mantissa));
    // Subnormal results: the value in units of the smallest subnormal,
    // rounded to nearest even (exact: a power-of-two scale).
    Value absF = arith::BitcastOp::create(rw, loc, f32, abs);
    float unit = std::ldexp(1.0f, f->bias - 1 + f->mantissa);
    Value sub = arith::FPToSIOp::create(
        rw, loc, i32,
        math::RoundEvenOp::create(
            rw, loc, arith::MulFOp::create(rw, loc, absF, cf(unit))));
    int minNormalBits = (127 + 1 - f->bias) << 23;
    Value isSub =
        arith::CmpIOp::create(rw, loc, P::ult, abs, ci(minNormalBits));
    Value code = arith::SelectOp::create(rw, loc, isSub, sub, normal);
    // Saturate (Inf too) to the largest finite value; NaN stays NaN.
    Value tooBig = arith::CmpIOp::create(rw, loc, P::sgt, code, ci(f->maxCode));
    code = arith::SelectOp::create(rw, loc, tooBig, ci(f->maxCode), code);
    Value isNan = arith::CmpIOp::create(rw, loc, P::ugt, abs, ci(0x7F800000));
    code = arith::SelectOp::create(rw, loc, isNan, ci(0x7F), code);
    code = arith::OrIOp::create(rw, loc, code, sign);
    Value byte = arith::TruncIOp::create(rw, loc, i8, code);
    rw.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), byte);
    return success();
  }
};

/// sm_90 and newer: `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32` converts two
/// values at once with the rounding, saturation and NaN of the expansion
/// above. Its i16 holds the first operand in the high byte, so each pair is
/// passed swapped: in memory order (little-endian) the bytes then come out
/// as x[2i], x[2i + 1].
struct NativeTruncF : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rw) const override {
    Type outElem = getElementTypeOrSelf(op.getType());
    if (!layoutOf(outElem) ||
        !getElementTypeOrSelf(op.getIn().getType()).isF32())
      return failure();
    Location loc = op.getLoc();
    Type i16 = rw.getI16Type(), i8 = rw.getI8Type();
    auto pair = [&](Value lo, Value hi) -> Value {
      return NVVM::ConvertF32x2ToF8x2Op::create(
          rw, loc, i16, hi, lo, NVVM::FPRoundingMode::RN,
          NVVM::SaturationMode::SATFINITE, /*relu=*/false, outElem);
    };
    auto vt = dyn_cast<VectorType>(op.getIn().getType());
    if (vt && (vt.getRank() != 1 || vt.getNumElements() % 2))
      return failure(); // never built by the lowering (powers of two)
    if (!vt) {
      Value zero = arith::ConstantOp::create(rw, loc, rw.getF32FloatAttr(0));
      Value byte = arith::TruncIOp::create(rw, loc, i8, pair(op.getIn(), zero));
      rw.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), byte);
      return success();
    }
    int64_t n = vt.getNumElements();
    SmallVector<Value> halves;
    for (int64_t i = 0; i < n; i += 2) {
      Value even = vector::ExtractOp::create(rw, loc, op.getIn(), i);
      Value odd = vector::ExtractOp::create(rw, loc, op.getIn(), i + 1);
      halves.push_back(pair(even, odd));
    }
    Value packed = vector::FromElementsOp::create(
        rw, loc, VectorType::get({n / 2}, i16), halves);
    Value bytes =
        vector::BitCastOp::create(rw, loc, VectorType::get({n}, i8), packed);
    rw.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), bytes);
    return success();
  }
};

struct ExpandFP8 : ::mlir::kgen::impl::KgenExpandFP8Base<ExpandFP8> {
  using KgenExpandFP8Base::KgenExpandFP8Base;

  // Built once per pass instance: the Compiler keeps its pass managers.
  LogicalResult initialize(MLIRContext *ctx) override {
    RewritePatternSet set(ctx);
    if (native)
      set.add<NativeTruncF>(ctx);
    else
      set.add<ExpandTruncF>(ctx);
    patterns = std::move(set);
    return success();
  }

  // One walk: a rewrite makes no fp8 conversion for another to match, and
  // most kernels have none (the greedy driver's iterations cost 1% of the
  // instructions of a compile, sm_90 bf16 bundle).
  void runOnOperation() override {
    walkAndApplyPatterns(getOperation(), patterns);
  }

  FrozenRewritePatternSet patterns;
};

} // namespace
