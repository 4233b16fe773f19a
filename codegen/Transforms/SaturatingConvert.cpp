//===- SaturatingConvert.cpp - Float to small int in one cvt -------------===//
//
// The DSL converts a float to an integer by clamping it to the type's range,
// truncating, and mapping NaN to 0 (ImportDSL). PTX's cvt.rzi/rni.s32.f32
// saturates and maps NaN to 0 itself, so for 8- and 16-bit integers that
// chain (and a round to nearest even before it) becomes one cvt per element
// and an integer clamp, where LLVM would keep the float compares.
//
//===----------------------------------------------------------------------===//
#include "codegen/Transforms/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

#define DEBUG_TYPE "kgen-saturating-convert"

namespace mlir::kgen {
#define GEN_PASS_DEF_KGENSATURATINGCONVERT
#include "codegen/Transforms/Passes.h.inc"
} // namespace mlir::kgen

using namespace mlir;

namespace {

/// The scalar a vector.broadcast `v` splats, else `v`.
Value splatSource(Value v) {
  auto b = v.getDefiningOp<vector::BroadcastOp>();
  return b ? b.getSource() : v;
}

/// Whether `v` is the float constant (or splat) `want`.
bool isFloat(Value v, double want) {
  APFloat f(0.0);
  return matchPattern(splatSource(v), m_ConstantFloat(&f)) &&
         f.convertToDouble() == want;
}

/// Whether `v` is the integer constant (or splat) 0.
bool isZero(Value v) { return matchPattern(splatSource(v), m_Zero()); }

/// select(f is NaN, 0, fptosi(min(max(f, lo), hi))), lo and hi the range of
/// an iN with N < 32 (exact in f32, so the float clamp equals an integer
/// one), with f in f32, becomes clamp(cvt.r?i.s32.f32(x), lo, hi) as iN,
/// where x = f rounded toward zero, or f's input when f is roundeven(x).
struct SaturatingFPToSI : OpRewritePattern<arith::SelectOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::SelectOp sel,
                                PatternRewriter &rw) const override {
    auto isNan = sel.getCondition().getDefiningOp<arith::CmpFOp>();
    auto cvt = sel.getFalseValue().getDefiningOp<arith::FPToSIOp>();
    if (!isNan || !cvt || isNan.getPredicate() != arith::CmpFPredicate::UNO ||
        isNan.getLhs() != isNan.getRhs() || !isZero(sel.getTrueValue()))
      return failure();
    Value f = isNan.getLhs();
    auto hi = cvt.getIn().getDefiningOp<arith::MinimumFOp>();
    auto lo = hi ? hi.getLhs().getDefiningOp<arith::MaximumFOp>() : nullptr;
    unsigned w = getElementTypeOrSelf(cvt.getType()).getIntOrFloatBitWidth();
    if (!lo || lo.getLhs() != f || !getElementTypeOrSelf(f.getType()).isF32() ||
        w >= 32 || !isFloat(lo.getRhs(), -std::ldexp(1.0, w - 1)) ||
        !isFloat(hi.getRhs(), std::ldexp(1.0, w - 1) - 1))
      return failure();
    if (auto vt = dyn_cast<VectorType>(f.getType()); vt && vt.getRank() != 1)
      return failure(); // the lowering's vectors are 1-D
    Value x = f;
    const char *intrinsic = "llvm.nvvm.f2i.rz";
    if (auto r = f.getDefiningOp<math::RoundEvenOp>()) {
      x = r.getOperand();
      intrinsic = "llvm.nvvm.f2i.rn";
    }
    LLVM_DEBUG(llvm::dbgs() << "saturating " << intrinsic << " to i" << w
                            << ": " << sel << "\n");
    Location loc = sel.getLoc();
    Type i32 = rw.getI32Type();
    auto one = [&](Value e) -> Value {
      return LLVM::CallIntrinsicOp::create(rw, loc, i32,
                                           rw.getStringAttr(intrinsic), e)
          .getResult(0);
    };
    Value wide;
    Type wideType = i32;
    if (auto vt = dyn_cast<VectorType>(x.getType())) {
      SmallVector<Value> elems;
      for (int64_t i = 0; i < vt.getNumElements(); ++i)
        elems.push_back(one(vector::ExtractOp::create(rw, loc, x, i)));
      wideType = vt.clone(i32);
      wide = vector::FromElementsOp::create(rw, loc, wideType, elems);
    } else {
      wide = one(x);
    }
    auto splat = [&](int64_t v) -> Value {
      Value c = arith::ConstantIntOp::create(rw, loc, i32, v);
      if (auto vt = dyn_cast<VectorType>(wideType))
        return vector::BroadcastOp::create(rw, loc, vt, c);
      return c;
    };
    int64_t bound = int64_t(1) << (w - 1);
    Value clamped = arith::MinSIOp::create(
        rw, loc, arith::MaxSIOp::create(rw, loc, wide, splat(-bound)),
        splat(bound - 1));
    rw.replaceOpWithNewOp<arith::TruncIOp>(sel, sel.getType(), clamped);
    return success();
  }
};

struct SaturatingConvert
    : ::mlir::kgen::impl::KgenSaturatingConvertBase<SaturatingConvert> {
  LogicalResult initialize(MLIRContext *ctx) override {
    RewritePatternSet set(ctx);
    set.add<SaturatingFPToSI>(ctx);
    patterns = std::move(set);
    return success();
  }

  void runOnOperation() override {
    walkAndApplyPatterns(getOperation(), patterns);
  }

  FrozenRewritePatternSet patterns;
};

} // namespace
