//===- MakeVariants.cpp - Aligned and fallback clones of each kernel ------===//
#include "codegen/Transforms/Passes.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"

namespace mlir::kgen {
#define GEN_PASS_DEF_KGENMAKEVARIANTS
#include "codegen/Transforms/Passes.h.inc"
} // namespace mlir::kgen

using namespace mlir;
using namespace mlir::kgen;

namespace {

/// Collects the kernel arguments `v` is computed from.
void argumentsOf(Value v, llvm::SmallDenseSet<Value> &out) {
  if (isa<BlockArgument>(v)) {
    out.insert(v);
    return;
  }
  for (Value o : v.getDefiningOp()->getOperands())
    argumentsOf(o, out);
}

/// The dims that place accesses (view starts, sub-row lengths) or size the
/// rows: the ones whose divisibility the alignment analysis can use. Counts
/// such as heads or table rows are left out, so that a variant does not
/// demand their divisibility for nothing.
llvm::SmallDenseSet<Value> addressingDims(KernelOp k) {
  llvm::SmallDenseSet<Value> dims;
  k.walk([&](Operation *op) {
    if (auto l = dyn_cast<LoadOp>(op); l && l.getStart())
      argumentsOf(l.getStart(), dims);
    else if (auto s = dyn_cast<StoreOp>(op); s && s.getStart())
      argumentsOf(s.getStart(), dims);
    else if (auto h = dyn_cast<HeadsOp>(op))
      argumentsOf(h.getLength(), dims);
    else if (auto d = dyn_cast<DomainOp>(op))
      argumentsOf(d.getLength(), dims);
  });
  return dims;
}

/// Annotates `k` with the assumptions of a variant: `align` bytes for every
/// tensor in memory (0 = element alignment only) and `divisor` for each
/// dynamic dim that places accesses.
void assume(KernelOp k, int64_t align, int64_t divisor) {
  Builder b(k.getContext());
  llvm::SmallDenseSet<Value> addressing = addressingDims(k);
  for (auto [i, t] : llvm::enumerate(k.getArgumentTypes())) {
    if (Type e = getTensorElementType(t)) {
      int64_t bytes = (e.getIntOrFloatBitWidth() + 7) / 8;
      k.setArgAttr(i, kAlignAttr, b.getI64IntegerAttr(std::max(align, bytes)));
    } else if (isa<IndexType>(t)) {
      bool places = addressing.contains(k.getBody().getArgument(i));
      k.setArgAttr(i, kDivisibilityAttr,
                   b.getI64IntegerAttr(places ? divisor : 1));
    }
  }
}

// Row lengths for which a dynamic-length kernel gets a variant compiled as if
// specialized on that length (the common hidden sizes): masking chunks for
// lengths in between cost registers and speed (measured), so other lengths
// take the re-reading variant.
constexpr int64_t kExactLengths[] = {2048, 4096, 8192, 16384};

struct MakeVariants : ::mlir::kgen::impl::KgenMakeVariantsBase<MakeVariants> {
  void runOnOperation() override {
    SmallVector<KernelOp> kernels(getOperation().getOps<KernelOp>());
    for (KernelOp k : kernels) {
      if (k->hasAttr(kVariantAttr))
        continue; // already split
      OpBuilder b(k);
      StringRef name = k.getSymName();
      bool dynamic = !getConstantIntValue(k.getDomainOp().getLength());
      if (dynamic) {
        // Before the others: the runtime takes the first variant that fits.
        for (int64_t n : kExactLengths) {
          auto exact = cast<KernelOp>(b.clone(*k));
          exact.setSymName((name + "_vec_n" + Twine(n)).str());
          assume(exact, 16, 16);
          exact->setAttr(kVariantAttr, b.getStringAttr("vec"));
          exact->setAttr(kExactDomainAttr, b.getI64IntegerAttr(n));
        }
      }
      b.setInsertionPointAfter(k);
      auto fallback = cast<KernelOp>(b.clone(*k));
      fallback.setSymName((name + "_any").str());
      k.setSymName((name + "_vec").str());
      assume(k, 16, 16);
      assume(fallback, 0, 1);
      k->setAttr(kVariantAttr, b.getStringAttr("vec"));
      fallback->setAttr(kVariantAttr, b.getStringAttr("any"));
    }
  }
};

} // namespace
