//===- Vectorize.cpp - Alignment/contiguity analysis ----------------------===//
//
// Decides how many elements each row access may move at once. The address of
// chunk c of a view is base + row*pitch + start + c*vector (elements), so an
// access of w elements is aligned when w*bytes divides the alignment of the
// base, of the pitch and of start*bytes; chunks are multiples of the vector.
//
//===----------------------------------------------------------------------===//
#include "codegen/Transforms/Passes.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/Support/MathExtras.h"

#include <numeric>

namespace mlir::kgen {
#define GEN_PASS_DEF_KGENVECTORIZE
#include "codegen/Transforms/Passes.h.inc"
} // namespace mlir::kgen

using namespace mlir;
using namespace mlir::kgen;

namespace {

/// Bytes known to divide the address of every row a row program sees of
/// `tensor` (an argument or a row map over arguments).
int64_t alignOf(KernelOp k, Value tensor, int64_t bytes) {
  if (auto arg = dyn_cast<BlockArgument>(tensor)) {
    // The variant's assumption, for the base and (rows tensors) the pitch.
    if (auto a =
            k.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), kAlignAttr))
      return a.getInt();
    return bytes;
  }
  Operation *op = tensor.getDefiningOp();
  if (auto g = dyn_cast<GroupOp>(op))
    return alignOf(k, g.getSource(), bytes);
  if (auto g = dyn_cast<GatherOp>(op))
    return alignOf(k, g.getTable(), bytes);
  auto h = cast<HeadsOp>(op);
  // A head starts h * pitch (h * length unpadded) elements into its part's row.
  int64_t align =
      std::min(kUnboundedDivisor, knownDivisor(h.getLength(), k) * bytes);
  for (Value p : h.getPitches())
    align = std::gcd(align,
                     std::min(kUnboundedDivisor, knownDivisor(p, k) * bytes));
  for (Value p : h.getParts())
    align = std::gcd(align, alignOf(k, p, bytes));
  return align;
}

struct Vectorize : ::mlir::kgen::impl::KgenVectorizeBase<Vectorize> {
  void runOnOperation() override {
    getOperation().walk([&](KernelOp k) {
      ScheduleAttr s = requireSchedule(k);
      if (!s)
        return signalPassFailure();
      k.walk([&](Operation *op) {
        if (auto l = dyn_cast<LoadOp>(op))
          l.setVectorWidth(width(k, s, l.getSource(), l.getStart(),
                                 l.getStride(), l.getResult().getType()));
        else if (auto st = dyn_cast<StoreOp>(op))
          st.setVectorWidth(width(k, s, st.getDest(), st.getStart(),
                                  st.getStride(), st.getValue().getType()));
      });
      // An even/odd pair of stride-2 views is moved as the contiguous span
      // they cover, from the even view's start: size those accesses.
      StridePairs pairs = findStridePairs(k);
      for (auto [even, odd] : pairs.loads) {
        int64_t w = width(k, s, even.getSource(), even.getStart(), 1,
                          even.getResult().getType());
        even.setVectorWidth(w);
        odd.setVectorWidth(w);
      }
      for (auto [even, odd] : pairs.stores) {
        int64_t w = width(k, s, even.getDest(), even.getStart(), 1,
                          even.getValue().getType());
        even.setVectorWidth(w);
        odd.setVectorWidth(w);
      }
    });
  }

  int64_t width(KernelOp k, ScheduleAttr s, Value tensor, Value start,
                int64_t stride, Type value) {
    auto tt = dyn_cast<RankedTensorType>(value);
    if (!tt || stride != 1)
      return 1;
    int64_t bytes = (tt.getElementType().getIntOrFloatBitWidth() + 7) / 8;
    int64_t align = alignOf(k, tensor, bytes);
    int64_t startAlign =
        std::min(kUnboundedDivisor, knownDivisor(start, k) * bytes);
    int64_t aligned = std::gcd(align, startAlign);
    int64_t w = std::max<int64_t>(1, aligned / bytes);
    w = int64_t(1) << llvm::Log2_64(uint64_t(w)); // power of two
    return std::min(w, s.getVector());
  }
};

} // namespace
