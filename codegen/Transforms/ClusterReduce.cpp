//===- ClusterReduce.cpp - Reductions over the blocks of a cluster --------===//
//
// A row spread over a thread-block cluster (`cluster` schedules, sm_90 and
// newer) combines its reductions through distributed shared memory: each
// warp pushes its partial (a tuple reduction's values, but counts known to
// every warp) into slots of every block of the cluster (`mapa`
// maps a local shared address to a peer's), one cluster barrier publishes
// them, and every warp combines its own block's copies by shuffles. Pushing
// rather than reading the peers' slots needs no barrier before a block
// exits: no peer touches its memory after the last reduction's barrier. A
// block may write a peer's memory only once the peer runs: every block
// arrives on a cluster barrier as it starts and waits on it before its
// first write, by when its row's loads have long returned.
//
//===----------------------------------------------------------------------===//
#include "codegen/Transforms/RowLowering.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::kgen;

SmallVector<SmallVector<Value>>
RowLowering::clusterReduce(ArrayRef<SmallVector<Value>> s,
                           ArrayRef<Partial> parts) {
  int64_t warps = sched.getThreadsPerRow() / 32, tiles = sched.getTiles();
  int64_t n = tiles * warps; // partials: a block's warps, block after block
  Type i32 = b.getI32Type(), f32 = b.getF32Type();
  auto peer = LLVM::LLVMPointerType::get(b.getContext(), 7);
  Value slots = LLVM::AddressOfOp::create(b, loc, clusterSlots);
  auto slotOf = [&](int slot, Value i) {
    return gep(slots, toI64(arith::AddIOp::create(b, loc, cIndex(slot * n), i)),
               f32);
  };
  if (!clusterStarted) { // the barrier emitInRegisters arrived on
    NVVM::ClusterWaitOp::create(b, loc, b.getUnitAttr());
    clusterStarted = true;
  }
  // Lane j < tiles of each warp writes the warp's partials into block j
  // (not the counts every warp shares).
  Value warp = arith::DivUIOp::create(b, loc, lane, cIndex(32));
  Value j = arith::RemUIOp::create(b, loc, lane, cIndex(32));
  Value writes = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, j,
                                       cIndex(tiles));
  {
    OpBuilder::InsertionGuard g(b);
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, writes, false);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    Value mine = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, tileIndex, cIndex(warps)), warp);
    Value rank = arith::IndexCastOp::create(b, loc, i32, j);
    for (auto [p, xs] : llvm::zip_equal(parts, s))
      for (auto [k, x] : llvm::enumerate(xs)) {
        if (matchPattern(x, m_Constant()))
          continue;
        Value at =
            NVVM::MapaOp::create(b, loc, peer, slotOf(p.slot + k, mine), rank);
        LLVM::StoreOp::create(b, loc, x, at, 4);
      }
  }
  // Arrive releases the writes above, wait acquires the peers'. Every slot
  // is written once per kernel: no barrier is needed before the next
  // reduction writes.
  NVVM::ClusterArriveOp::create(b, loc, b.getUnitAttr());
  NVVM::ClusterWaitOp::create(b, loc, b.getUnitAttr());
  // Each group of `width` lanes reads all `n` partials, lane i those at i,
  // i + width, ..., and combines its group by shuffles: every lane ends with
  // the total.
  int64_t width = std::min<int64_t>(32, llvm::PowerOf2Ceil(n));
  Value first = arith::RemUIOp::create(b, loc, lane, cIndex(width));
  SmallVector<SmallVector<Value>> totals;
  for (auto [p, xs] : llvm::zip_equal(parts, s)) {
    SmallVector<Value> none = identities(ReduceOp(p.op).getKind()), x;
    for (int64_t m = 0; m * width < n; ++m) {
      Value k = arith::AddIOp::create(b, loc, first, cIndex(m * width));
      bool partial = (m + 1) * width > n;
      // Past the last partial a lane reads the last one and drops it.
      Value kc = partial ? arith::MinUIOp::create(b, loc, k, cIndex(n - 1)) : k;
      SmallVector<Value> v;
      for (auto [i, xi] : llvm::enumerate(xs))
        v.push_back(
            matchPattern(xi, m_Constant())
                ? xi
                : LLVM::LoadOp::create(b, loc, f32, slotOf(p.slot + i, kc), 4)
                      .getResult());
      if (partial) {
        Value valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            k, cIndex(n));
        for (auto [vi, id] : llvm::zip_equal(v, none))
          vi = arith::SelectOp::create(b, loc, valid, vi, id);
      }
      x = x.empty() ? v : combineParts(p.op, x, v);
    }
    totals.push_back(butterfly(x, p.op, width));
  }
  return totals;
}
