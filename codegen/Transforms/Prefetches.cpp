//===- Prefetches.cpp - The lowering's L2 prefetches -----------------------===//
//
// What kgen-prefetch put in the schedule, emitted: a held row's lines into
// L2 before the grid dependency wait, and a later block's row once this
// block's loads are issued.
//
//===----------------------------------------------------------------------===//
#include "codegen/Transforms/RowLowering.h"

using namespace mlir;
using namespace mlir::kgen;

/// The lines of a row held in `count` chunks a thread, each line by one
/// thread (line `lane`, `lane + threads`, ... of the row's, or its tile's,
/// span): a prefetch per chunk, as for fewer chunks, took registers the
/// held row needs (ptxas spilled).
void RowLowering::prefetchLines(LoadOp l, int64_t count) {
  int64_t bits =
      getTensorElementType(l.getSource().getType()).getIntOrFloatBitWidth();
  int64_t perLine = 128 * 8 / bits; // elements of a 128-byte line
  Value span = arith::MulIOp::create(b, loc, threads, cIndex(count * vec));
  Value first = sched.getTiles() > 1
                    ? arith::MulIOp::create(b, loc, tileIndex, span).getResult()
                    : cIndex(0);
  Value end = arith::MinSIOp::create(
      b, loc, length, arith::AddIOp::create(b, loc, first, span));
  int64_t steps = llvm::divideCeil(count * vec, perLine);
  for (int64_t k = 0; k < steps; ++k) {
    Value line = arith::AddIOp::create(
        b, loc, lane, arith::MulIOp::create(b, loc, threads, cIndex(k)));
    Chunk c;
    c.e0 = arith::AddIOp::create(
        b, loc, first, arith::MulIOp::create(b, loc, line, cIndex(perLine)));
    Value in =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, c.e0, end);
    OpBuilder::InsertionGuard g(b);
    auto ifIn = scf::IfOp::create(b, loc, TypeRange{}, in, false);
    b.setInsertionPoint(ifIn.thenBlock()->getTerminator());
    prefetchChunk(l, c);
  }
}

/// The lines this thread's chunks will load, into L2 before the first memory
/// access: kgen-grid-dependency puts its wait after these, so that a kernel
/// launched behind another fetches them while that one runs. Which grids and
/// blocks prefetch, and whether by lines, is the schedule's (kgen-prefetch).
/// A vector every row reads (a weight) is prefetched by row 0's threads
/// only: a prefetch goes to L2 each time, where the weight's loads hit L1.
/// A gathered row is not prefetched (its address needs the index, a load)
/// (bench/results/lowering-decisions.md).
void RowLowering::emitPrefetches(MutableArrayRef<Chunk> chunks) {
  SmallVector<LoadOp> rowLoads, shared;
  prefetchedLoads(kernel, rowLoads, shared);
  auto count = static_cast<int64_t>(chunks.size());
  bool lines = sched.getPrefetchLines();
  // Which blocks prefetch (kgen-prefetch): the first prefetchBlocks of the
  // grid, or every block of a grid of at most that many.
  bool first = sched.getPrefetchFirst();
  Value which =
      first ? gpu::BlockIdOp::create(b, loc, gpu::Dimension::x).getResult()
            : gpu::GridDimOp::create(b, loc, gpu::Dimension::x).getResult();
  Value most = cIndex(sched.getPrefetchBlocks());
  Value few = arith::CmpIOp::create(
      b, loc, first ? arith::CmpIPredicate::ult : arith::CmpIPredicate::ule,
      which, most);
  OpBuilder::InsertionGuard g(b);
  auto ifFew = scf::IfOp::create(b, loc, TypeRange{}, few, false);
  b.setInsertionPoint(ifFew.thenBlock()->getTerminator());
  auto prefetchRows = [&](ArrayRef<LoadOp> loads) {
    if (lines) {
      for (LoadOp l : loads)
        prefetchLines(l, count);
      return;
    }
    for (Chunk &c : chunks)
      for (LoadOp l : loads)
        prefetchChunk(l, c);
  };
  prefetchRows(rowLoads);
  if (shared.empty())
    return;
  Value row0 = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq, row,
      arith::ConstantIntOp::create(b, loc, b.getI64Type(), 0));
  auto ifFirst = scf::IfOp::create(b, loc, TypeRange{}, row0, false);
  b.setInsertionPoint(ifFirst.thenBlock()->getTerminator());
  // A late group's pointer (emitLateRowMaps) is not there yet: this branch
  // computes its own, for the prefetches alone.
  SmallVector<Value> local;
  for (LoadOp l : shared)
    if (auto g = l.getSource().getDefiningOp<GroupOp>();
        g && !base.contains(g.getResult())) {
      base[g.getResult()] = groupRow(g);
      local.push_back(g.getResult());
    }
  prefetchRows(shared);
  for (Value v : local)
    base.erase(v);
}

/// The lines of the row prefetch-ahead-bytes of row inputs ahead, into L2
/// once this row's loads are issued: by the time its block starts, a later
/// block finds that row in L2, and the memory keeps busy while blocks
/// reduce. Much further ahead the prefetched lines no longer stay in L2.
/// Where the schedule's prefetchAhead says (kgen-prefetch). Not in grids of
/// at most prefetch-ahead-min-rows rows: those rows are mostly resident at
/// once, loading their own (bench/results/lowering-decisions.md).
void RowLowering::emitPrefetchAhead(int64_t count) {
  if (!sched.getPrefetchAhead())
    return;
  SmallVector<LoadOp> loads;
  int64_t bytes = 0; // a row's bytes per element, loaded
  for (LoadOp l : rowLoadsHeld(kernel))
    if (auto a = dyn_cast<BlockArgument>(l.getSource());
        a && isa<RowsType>(a.getType())) {
      loads.push_back(l);
      bytes += llvm::divideCeil(
          getTensorElementType(a.getType()).getIntOrFloatBitWidth(), 8);
    }
  if (loads.empty())
    return;
  auto i64 = [&](int64_t v) {
    return arith::ConstantIntOp::create(b, loc, b.getI64Type(), v);
  };
  Value perRow = toI64(arith::MulIOp::create(b, loc, length, cIndex(bytes)));
  Value distance = arith::MaxSIOp::create(
      b, loc, i64(1),
      arith::DivUIOp::create(b, loc, i64(prefetchAheadBytes),
                             arith::MaxSIOp::create(b, loc, i64(1), perRow)));
  Value ahead = arith::AddIOp::create(b, loc, row, distance);
  Value in = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, rows,
                            i64(prefetchAheadMinRows)),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, ahead, rows));
  OpBuilder::InsertionGuard g(b);
  auto ifIn = scf::IfOp::create(b, loc, TypeRange{}, in, false);
  b.setInsertionPoint(ifIn.thenBlock()->getTerminator());
  for (LoadOp l : loads) {
    Value a = l.getSource();
    Value own = base[a];
    base[a] = gep(own, arith::MulIOp::create(b, loc, distance, pitch[a]),
                  getTensorElementType(a.getType()));
    prefetchLines(l, count);
    base[a] = own;
  }
}
