//===- LowerToGPU.cpp - Scheduled row programs to gpu.func ----------------===//
#include "codegen/Transforms/RowLowering.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::kgen {
#define GEN_PASS_DEF_KGENLOWERTOGPU
#include "codegen/Transforms/Passes.h.inc"
} // namespace mlir::kgen

using namespace mlir;
using namespace mlir::kgen;

static bool isRowValue(Value v) { return isa<RankedTensorType>(v.getType()); }

RowLowering::RowLowering(OpBuilder &b, KernelOp kernel, gpu::GPUFuncOp func)
    : b(b), loc(kernel.getLoc()), kernel(kernel), func(func),
      sched(kernel.getScheduleAttr()), vec(sched.getVector()) {}

Value RowLowering::cIndex(int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value RowLowering::toI64(Value index) {
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
}

Value RowLowering::gep(Value ptr, Value offset, Type t) {
  if (isa<Float8E4M3FNType, Float8E5M2Type>(t))
    t = b.getI8Type(); // LLVM has no fp8: step over bytes
  return LLVM::GEPOp::create(b, loc, ptr.getType(), t, ptr,
                             ArrayRef<LLVM::GEPArg>{offset});
}

/// Maps the kernel's arguments onto the gpu.func's and computes where this
/// thread's row starts.
void RowLowering::emitPrologue() {
  Block &entry = kernel.getBody().front();
  unsigned nextParam = 0;
  SmallVector<Value> ptrs, strides;
  for (BlockArgument a : entry.getArguments())
    if (getTensorElementType(a.getType()))
      ptrs.push_back(func.getArgument(nextParam++));
  for (BlockArgument a : entry.getArguments())
    if (hasRowStride(a))
      strides.push_back(func.getArgument(nextParam++));
  rows = func.getArgument(func.getFunctionType().getNumInputs() - 1);

  int64_t tpr = sched.getThreadsPerRow(), rpb = sched.getRowsPerBlock();
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value bid = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  if (int64_t tiles = sched.getTiles(); tiles > 1) {
    // Consecutive blocks walk along a group of rows, tile by tile, so that
    // they read neighbouring memory.
    tileIndex = arith::RemUIOp::create(b, loc, bid, cIndex(tiles));
    bid = arith::DivUIOp::create(b, loc, bid, cIndex(tiles));
  }
  if (launchedRows()) { // a block of x threads a row by y rows, as launched
    threads = gpu::BlockDimOp::create(b, loc, gpu::Dimension::x);
    lane = tid;
    rowInBlock = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::y);
  } else if (sched.getLaunchThreads()) { // one row a block, as wide as launched
    threads = gpu::BlockDimOp::create(b, loc, gpu::Dimension::x);
    lane = tid;
    rowInBlock = cIndex(0);
  } else {
    threads = cIndex(tpr);
    lane = arith::RemUIOp::create(b, loc, tid, threads);
    rowInBlock = arith::DivUIOp::create(b, loc, tid, threads);
  }
  // A block holds at most `rpb` rows; the launch may give it fewer (few
  // rows spread over more blocks), so the rows a block holds are read from
  // its size.
  Value perBlock =
      launchedRows() ? gpu::BlockDimOp::create(b, loc, gpu::Dimension::y)
      : rpb > 1
          ? (Value)arith::DivUIOp::create(
                b, loc, gpu::BlockDimOp::create(b, loc, gpu::Dimension::x),
                threads)
          : cIndex(1);
  Value rawRow = toI64(arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, bid, perBlock), rowInBlock));
  rowValid =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, rawRow, rows);
  // Rows past the end read the last row (never out of bounds: rows >= 1 at
  // launch) and write nothing, so every thread reaches every barrier.
  Value last = arith::SubIOp::create(
      b, loc, rows, arith::ConstantIntOp::create(b, loc, b.getI64Type(), 1));
  row = arith::MinSIOp::create(b, loc, rawRow, last);

  unsigned ptrIdx = 0, strideIdx = 0;
  for (BlockArgument a : entry.getArguments()) {
    Type t = a.getType();
    if (isa<RowsType>(t)) {
      rawPtr[a] = ptrs[ptrIdx++];
      pitch[a] = strides[strideIdx++];
      Value off = arith::MulIOp::create(b, loc, row, pitch[a]);
      base[a] = gep(rawPtr[a], off, getTensorElementType(t));
    } else if (isa<ScalarsType>(t)) {
      rawPtr[a] = ptrs[ptrIdx++];
      if (hasRowStride(a))
        pitch[a] = strides[strideIdx++];
      base[a] = gep(rawPtr[a], row, getTensorElementType(t));
    } else if (getTensorElementType(t)) {
      base[a] = ptrs[ptrIdx++];
    } else if (isa<IndexType>(t)) {
      map.map(a, arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                            func.getArgument(nextParam++)));
    } else {
      map.map(a, func.getArgument(nextParam++));
    }
  }
  kernel.walk([&](StoreOp s) {
    for (Value r : tensorRoots(s.getDest()))
      written.insert(r);
  });
}

bool RowLowering::isWritten(Value tensor) {
  return llvm::any_of(tensorRoots(tensor),
                      [&](Value r) { return written.contains(r); });
}

/// Where this thread's row of a kgen.group starts: row `row / group`.
Value RowLowering::groupRow(GroupOp g) {
  Value src = g.getSource();
  Value q =
      arith::DivUIOp::create(b, loc, row, toI64(map.lookup(g.getGroup())));
  Value off = isa<RowsType>(src.getType())
                  ? (Value)arith::MulIOp::create(b, loc, q, pitch[src])
                  : q;
  return gep(rawPtr[src], off, getTensorElementType(src.getType()));
}

/// Whether a kgen.group's pointer can wait until the held row's loads are
/// issued (emitLateRowMaps): only row loads the held row does not hold read
/// it. Its division (a 64-bit one: a branch and a call in SASS) came before
/// those loads, and ptxas does not move a load above a branch
/// (bench/results/lowering-decisions.md).
bool RowLowering::isLateRowMap(GroupOp g, const llvm::SetVector<LoadOp> &held) {
  return llvm::all_of(g.getResult().getUsers(), [&](Operation *user) {
    auto l = dyn_cast<LoadOp>(user);
    return l && isRowValue(l.getResult()) && !held.contains(l);
  });
}

void RowLowering::emitLateRowMaps() {
  for (GroupOp g : kernel.getBody().getOps<GroupOp>())
    if (!base.contains(g.getResult()))
      base[g.getResult()] = groupRow(g);
}

/// Whether two lengths are one value: the same SSA value, or ops that
/// compute it alike from such values (the importer builds each count anew).
static bool sameLength(Value a, Value b) {
  if (a == b)
    return true;
  Operation *x = a.getDefiningOp(), *y = b.getDefiningOp();
  return x && y &&
         OperationEquivalence::isEquivalentTo(
             x, y, [](Value l, Value r) { return success(sameLength(l, r)); },
             /*markEquivalent=*/nullptr, OperationEquivalence::IgnoreLocations);
}

/// Row pointers of kgen.group and kgen.heads, once per thread (but late
/// groups, isLateRowMap). Their index operands are already lowered.
void RowLowering::emitRowMaps() {
  auto i64 = [&](Value index) { return toI64(map.lookup(index)); };
  llvm::SetVector<LoadOp> held = rowLoadsHeld(kernel);
  SmallVector<Value> narrowCounts; // heads counts of per-head scalars
  for (HeadsOp h : kernel.getBody().getOps<HeadsOp>())
    if (isa<ScalarsType>(h.getResult().getType()) && h.getCounts().size() == 1)
      narrowCounts.push_back(h.getCounts().front());
  for (Operation &op : kernel.getBody().front()) {
    if (auto g = dyn_cast<GroupOp>(op)) {
      if (!isLateRowMap(g, held))
        base[g.getResult()] = groupRow(g);
    } else if (auto h = dyn_cast<HeadsOp>(op)) {
      Type elem = getTensorElementType(h.getResult().getType());
      SmallVector<Value> firsts; // first sub-row of each part
      Value group = arith::ConstantIntOp::create(b, loc, b.getI64Type(), 0);
      for (Value c : h.getCounts()) {
        firsts.push_back(group);
        group = arith::AddIOp::create(b, loc, group, i64(c));
      }
      // The launch keeps per-head scalars below 2^32 elements, and with them
      // the rows, their count and each (t, h) offset (Args.cpp): 32-bit
      // division and products, which LLVM cannot widen back through the udiv.
      bool narrow =
          h.getCounts().size() == 1 && llvm::any_of(narrowCounts, [&](Value c) {
            return sameLength(c, h.getCounts().front());
          });
      auto i32 = b.getI32Type();
      auto trunc = [&](Value v) -> Value {
        return arith::TruncIOp::create(b, loc, i32, v);
      };
      auto widen = [&](Value v) -> Value {
        return arith::ExtUIOp::create(b, loc, b.getI64Type(), v);
      };
      Value token, head, token32, head32;
      if (narrow) {
        Value row32 = trunc(row), group32 = trunc(group);
        token32 = arith::DivUIOp::create(b, loc, row32, group32);
        head32 = arith::RemUIOp::create(b, loc, row32, group32);
        token = widen(token32);
        head = widen(head32);
      } else {
        token = arith::DivUIOp::create(b, loc, row, group);
        head = arith::RemUIOp::create(b, loc, row, group);
      }
      Value length = i64(h.getLength());
      Value ptr;
      for (int i = (int)firsts.size() - 1; i >= 0; --i) {
        Value part = h.getParts()[i];
        Value p = base[part]; // a part vector: the same row for all
        if (!isa<ColumnVectorType>(part.getType())) {
          Value step = h.getPitches().empty() ? length : i64(h.getPitches()[i]);
          // Head offset, then token offset; in i32 for per-head scalars.
          bool in32 = narrow && isa<ScalarsType>(part.getType());
          Value t = in32 ? token32 : token, tPitch = pitch[part];
          Value hIndex = in32 ? head32 : head, first = firsts[i];
          if (in32) {
            tPitch = trunc(tPitch);
            first = trunc(first);
            step = trunc(step);
          }
          Value hOff = arith::MulIOp::create(
              b, loc, arith::SubIOp::create(b, loc, hIndex, first), step);
          Value tOff = arith::MulIOp::create(b, loc, t, tPitch);
          Value off = arith::AddIOp::create(b, loc, tOff, hOff);
          if (in32)
            off = widen(off);
          p = gep(rawPtr[part], off, elem);
        }
        ptr = !ptr
                  ? p
                  : (Value)arith::SelectOp::create(
                        b, loc,
                        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                              head, firsts[i + 1]),
                        p, ptr);
      }
      base[h.getResult()] = ptr;
    }
  }
}

/// Row pointers of kgen.gather, once per thread: each loads its index, so
/// they come after the prefetches (kgen-grid-dependency waits before the
/// first load).
void RowLowering::emitGathers() {
  auto i64 = [&](Value index) { return toI64(map.lookup(index)); };
  for (Operation &op : kernel.getBody().front()) {
    if (auto g = dyn_cast<GatherOp>(op)) {
      Value table = g.getTable();
      Type idxType = g.getIndex().getType().getElementType();
      Value idx =
          LLVM::LoadOp::create(b, loc, idxType, base.lookup(g.getIndex()),
                               idxType.getIntOrFloatBitWidth() / 8, false,
                               false, !isWritten(g.getIndex()));
      if (!idxType.isInteger(64))
        idx = arith::ExtSIOp::create(b, loc, b.getI64Type(), idx);
      Value zero = arith::ConstantIntOp::create(b, loc, b.getI64Type(), 0);
      // One unsigned compare checks both ends: negative indices wrap high.
      Value valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          idx, i64(g.getRows()));
      idx = arith::SelectOp::create(b, loc, valid, idx, zero);
      base[g.getResult()] =
          gep(rawPtr[table], arith::MulIOp::create(b, loc, idx, pitch[table]),
              getTensorElementType(table.getType()));
      gatherValid[g.getResult()] = valid;
    }
  }
}

int RowLowering::reduceLevel(Value v) {
  auto it = levels.find(v);
  if (it != levels.end())
    return it->second;
  int level = 0;
  if (Operation *op = v.getDefiningOp()) {
    for (Value o : op->getOperands())
      level = std::max(level, reduceLevel(o));
    if (isa<ReduceOp>(op))
      ++level;
  }
  return levels[v] = level;
}

/// Clones, in body order, every per-row scalar op whose operands are ready
/// (reductions it needs are done). Scalars stay outside loops so that every
/// later use is dominated.
void RowLowering::emitReadyScalars() {
  for (Operation &op : kernel.getBody().front()) {
    if (isa<ReduceOp, StoreOp, ReturnOp, DomainOp, GroupOp, HeadsOp, GatherOp>(
            op) ||
        llvm::any_of(op.getResults(), isRowValue) ||
        llvm::all_of(op.getResults(),
                     [&](Value r) { return map.contains(r); }) ||
        op.getNumResults() == 0)
      continue;
    if (!llvm::all_of(op.getOperands(), [&](Value o) {
          return map.contains(o) || base.count(o);
        }))
      continue;
    if (auto l = dyn_cast<LoadOp>(op)) {
      map.map(l.getResult(), loadScalar(l));
      continue;
    }
    b.clone(op, map);
  }
}

Value RowLowering::chunkValue(Value v, Chunk &c) {
  if (Value known = c.memo.lookup(v))
    return known;
  Operation *op = v.getDefiningOp();
  Type elem = cast<RankedTensorType>(v.getType()).getElementType();
  auto vt = mlir::VectorType::get({vec}, elem);
  Value result;
  if (auto it = loadPairOf.find(op); it != loadPairOf.end()) {
    auto [even, odd] = it->second;
    auto [e, o] = loadPair(even, odd, c);
    c.memo[even.getResult()] = e;
    c.memo[odd.getResult()] = o;
    result = op == even ? e : o;
  } else if (auto l = dyn_cast<LoadOp>(op)) {
    result = loadChunk(l, c);
  } else if (auto bc = dyn_cast<BroadcastOp>(op)) {
    result = vector::BroadcastOp::create(b, loc, vt, map.lookup(bc.getInput()));
  } else if (auto g = dyn_cast<GroupReduceOp>(op)) {
    result = groupReduce(g, c);
  } else {
    // Elementwise arith/math on rows: the same op on this chunk's vectors.
    SmallVector<Value> operands;
    for (Value o : op->getOperands())
      operands.push_back(isRowValue(o) ? chunkValue(o, c) : map.lookup(o));
    OperationState state(op->getLoc(), op->getName());
    state.addOperands(operands);
    state.addTypes(vt);
    state.addAttributes(op->getAttrs());
    result = b.create(state)->getResult(0);
  }
  return c.memo[v] = result;
}

Chunk RowLowering::makeChunk(Value j, std::optional<int64_t> staticJ,
                             bool inside) {
  int64_t tpr = sched.getThreadsPerRow(), tiles = sched.getTiles();
  Chunk c;
  if (tiles > 1) // chunk j of this block's tile
    j = arith::AddIOp::create(
        b, loc,
        arith::MulIOp::create(b, loc, tileIndex, cIndex(sched.getChunks())), j);
  c.e0 = arith::MulIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, j, threads),
                            lane),
      cIndex(vec));
  // The row is a whole number of chunks (always so for launched threads,
  // the variant's assumption): a chunk is in or out as a whole. Out, it reads
  // chunk 0 instead, so that every load is issued unconditionally (all in
  // flight together), and its value is masked out of reductions and stores.
  // No per-element path: it was half the code of a dynamic `_vec` entry.
  auto wholeOrNone = [&] {
    c.fullCond =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, c.e0, length);
    c.e0 = arith::SelectOp::create(b, loc, c.fullCond, c.e0, cIndex(0));
    c.mask = vector::BroadcastOp::create(
        b, loc, mlir::VectorType::get({vec}, b.getI1Type()), c.fullCond);
    c.wholeOrNone = true;
    return c;
  };
  if (sched.getLaunchThreads()) {
    // Held: the runtime launches at most nvec / (chunks - 1) threads, so
    // every thread's chunks but the last lie in the row. Re-read: the
    // caller knows (`inside`) or the chunk is whole or none.
    if (inside || (staticJ && *staticJ + 1 < sched.getChunks()))
      return c;
    return wholeOrNone();
  }
  // Every thread's chunk j lies inside the row, in every tile.
  int64_t lastTile = (tiles - 1) * sched.getChunks();
  if (staticJ && (lastTile + *staticJ + 1) * tpr * vec <= shortestRow)
    return c;
  if (inside) // the caller knows every thread's chunk j is in the row
    return c;
  if (wholeChunks)
    return wholeOrNone();
  Value end = arith::AddIOp::create(b, loc, c.e0, cIndex(vec));
  c.fullCond =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, end, length);
  auto vi = mlir::VectorType::get({vec}, b.getIndexType());
  SmallVector<int64_t> iota = llvm::to_vector(llvm::seq<int64_t>(0, vec));
  Value lanes = arith::AddIOp::create(
      b, loc, vector::BroadcastOp::create(b, loc, vi, c.e0),
      arith::ConstantOp::create(b, loc, vi, b.getIndexVectorAttr(iota)));
  c.mask =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, lanes,
                            vector::BroadcastOp::create(b, loc, vi, length));
  return c;
}

bool RowLowering::loadsUnread(Value v, Chunk &c,
                              const DenseSet<Value> &written) {
  SmallVector<Value> work{v};
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (!seen.insert(x).second || !isRowValue(x) || c.memo.count(x))
      continue;
    Operation *op = x.getDefiningOp();
    if (!op)
      continue;
    if (auto l = dyn_cast<LoadOp>(op)) {
      if (llvm::any_of(tensorRoots(l.getSource()),
                       [&](Value r) { return written.contains(r); }))
        return true;
      continue;
    }
    llvm::append_range(work, op->getOperands());
  }
  return false;
}

void RowLowering::emitStores(Chunk &c, std::optional<int> level) {
  SmallVector<StoreOp> stores;
  for (StoreOp s : kernel.getBody().getOps<StoreOp>())
    if (isRowValue(s.getValue()) &&
        (!level || reduceLevel(s.getValue()) == *level))
      stores.push_back(s);
  // A row program reads its rows before it writes them, as the interpreter
  // runs it: a later store's value that loads a row an earlier store writes
  // is computed before that store (two loads of a row, one after the store).
  auto readFirst = [&](size_t i, StoreOp s) {
    DenseSet<Value> written;
    for (Value r : tensorRoots(s.getDest()))
      written.insert(r);
    for (StoreOp later : ArrayRef(stores).drop_front(i + 1))
      if (loadsUnread(later.getValue(), c, written))
        chunkValue(later.getValue(), c);
  };
  for (size_t i = 0; i < stores.size(); ++i) {
    StoreOp s = stores[i];
    auto it = storePairOf.find(s);
    if (it == storePairOf.end()) {
      Value v = chunkValue(s.getValue(), c);
      readFirst(i, s);
      storeChunk(s, v, c);
      continue;
    }
    auto [even, odd] = it->second;
    if (s != even) // the odd one is written with the even one
      continue;
    // The odd value first: the order the measured kernels were built in.
    Value o = chunkValue(odd.getValue(), c);
    Value e = chunkValue(even.getValue(), c);
    readFirst(i, even);
    readFirst(i, odd);
    storePair(even, odd, e, o, c);
  }
}

void RowLowering::emitScalarStores() {
  for (StoreOp s : kernel.getBody().getOps<StoreOp>())
    if (!isRowValue(s.getValue()))
      storeScalar(s, map.lookup(s.getValue()));
}

/// Forgets the chunk's values computed after its loads, so that a later
/// phase computes them again from the held values rather than keeping them
/// across a barrier; f32 widenings of bf16 values come back as a shift of
/// their bits, which CSE does not fold into the first widening (under the
/// cap, rmsnorm_quant_static bf16 16384 spilled 8 bytes without it).
void RowLowering::rewiden(Chunk &c) {
  DenseMap<Value, Value> before = std::move(c.memo);
  c.memo.clear();
  for (auto [v, x] : before)
    if (isa_and_nonnull<LoadOp>(v.getDefiningOp()))
      c.memo[v] = x;
  for (auto [v, x] : before) {
    auto ext = v.getDefiningOp<arith::ExtFOp>();
    Value narrow = ext ? before.lookup(ext.getIn()) : Value();
    auto nt = narrow ? cast<mlir::VectorType>(narrow.getType()) : nullptr;
    if (!nt || !nt.getElementType().isBF16() ||
        !cast<mlir::VectorType>(x.getType()).getElementType().isF32())
      continue;
    c.memo[ext.getIn()] = narrow;
    auto i16 = mlir::VectorType::get(nt.getShape(), b.getI16Type());
    auto i32 = mlir::VectorType::get(nt.getShape(), b.getI32Type());
    Value bits = arith::ExtUIOp::create(
        b, loc, i32, arith::BitcastOp::create(b, loc, i16, narrow));
    Value sixteen = arith::ConstantOp::create(
        b, loc, i32, DenseElementsAttr::get(i32, b.getI32IntegerAttr(16)));
    c.memo[v] = arith::BitcastOp::create(
        b, loc, x.getType(), arith::ShLIOp::create(b, loc, bits, sixteen));
  }
}

// cluster-preload-chunks (Passes.td): more would cost registers the held
// rows need.

/// The row stays in registers: `count` chunks are unrolled and their values
/// (the loads above all) are reused by every phase.
void RowLowering::emitInRegisters(int64_t count) {
  SmallVector<Chunk> chunks;
  for (int64_t j = 0; j < count; ++j)
    chunks.push_back(makeChunk(cIndex(j), j));
  if (sched.getPrefetchBlocks())
    emitPrefetches(chunks);
  emitGathers();
  // Peers write this block's memory once it runs (see ClusterReduce.cpp).
  if (sched.getCluster())
    NVVM::ClusterArriveRelaxedOp::create(b, loc, b.getUnitAttr());
  // Issue the loads the reductions read up front, so that they are all in
  // flight together; the others (weights) are loaded after the reductions,
  // not held across them (the schedule sized the row share for that).
  llvm::SetVector<LoadOp> held = rowLoadsHeld(kernel);
  for (Chunk &c : chunks)
    for (LoadOp l : held)
      chunkValue(l.getResult(), c);
  emitLateRowMaps();
  emitPrefetchAhead(count);
  // A cluster's few rows wait on latency, not bandwidth: its blocks hold
  // little, so the weights are loaded with the row, not after the barriers.
  if (sched.getCluster() && count <= clusterPreloadChunks)
    for (Chunk &c : chunks)
      for (LoadOp l : kernel.getBody().getOps<LoadOp>())
        if (isRowValue(l.getResult()))
          chunkValue(l.getResult(), c);
  // Each row value is stored as soon as the reductions it needs are done
  // (fused_add_rmsnorm's sum before its norm): what it was computed from need
  // not stay live across the barriers (bf16 16384: 145 -> 124 registers).
  // Not when a tensor it writes is loaded after the start: that load must
  // see the input.
  DenseSet<Value> loadedLate;
  for (LoadOp l : kernel.getBody().getOps<LoadOp>())
    if (isRowValue(l.getResult()) && !held.contains(l))
      for (Value r : tensorRoots(l.getSource()))
        loadedLate.insert(r);
  bool early =
      llvm::none_of(kernel.getBody().getOps<StoreOp>(), [&](StoreOp s) {
        return llvm::any_of(tensorRoots(s.getDest()),
                            [&](Value r) { return loadedLate.contains(r); });
      });
  for (int level = 0; level <= maxLevel; ++level) {
    if (busyRow && level > 1)
      for (Chunk &c : chunks)
        rewiden(c);
    SmallVector<ReduceOp> phase;
    SmallVector<SmallVector<Value>> partials;
    for (ReduceOp r : reduces) {
      if (reduceLevel(r.getResult()) != level || twinOf(r).first)
        continue;
      phase.push_back(r);
      partials.push_back(threadPartial(r, chunks));
    }
    if (!phase.empty())
      finish(phase, partials);
    if (level > 0)
      emitReadyScalars();
    if (busyRow && level == maxLevel)
      for (Chunk &c : chunks)
        rewiden(c);
    if (early || level == maxLevel) {
      std::optional<int> only =
          early ? std::optional<int>(level) : std::nullopt;
      // A masked chunk's late load (the weight) goes before the first
      // store. Left where its value is used, instcombine sinks it into the
      // chunk's store branch, and it is issued only once the other chunks'
      // weights have come and their stores gone. Two late loads (layernorm's
      // weight and bias, adaln's scale and shift) raised the registers past
      // a block an SM: those stay (bench/results/lowering-decisions.md).
      llvm::SetVector<LoadOp> late = lateLoads(only);
      if (late.size() == 1)
        for (Chunk &c : chunks)
          if (c.wholeOrNone)
            chunkValue(LoadOp(late.front()).getResult(), c);
      for (Chunk &c : chunks)
        emitStores(c, only);
    }
  }
  emitScalarStores();
}

/// The row loads that the row stores of `level` (every level: none) read
/// and the held row does not hold.
llvm::SetVector<LoadOp> RowLowering::lateLoads(std::optional<int> level) {
  llvm::SetVector<LoadOp> late;
  llvm::SetVector<LoadOp> held = rowLoadsHeld(kernel);
  SmallVector<Value> work;
  for (StoreOp s : kernel.getBody().getOps<StoreOp>())
    if (isRowValue(s.getValue()) &&
        (!level || reduceLevel(s.getValue()) == *level))
      work.push_back(s.getValue());
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    Operation *op = v.getDefiningOp();
    if (!op || !isRowValue(v) || !seen.insert(v).second)
      continue;
    if (auto l = dyn_cast<LoadOp>(op); l && !held.contains(l))
      late.insert(l);
    llvm::append_range(work, op->getOperands());
  }
  return late;
}

/// Chunks a trip of a loop of `trips` whole chunks takes. ptxas unrolls a
/// loop of known trips whole and issues all its loads first: past half the
/// registers (fused_add_rmsnorm, f32 65536 on 1024 threads: 16 trips of two
/// loads, 128 words) it spilled up to 140 bytes. Such a loop takes the most
/// chunks a trip (a power of two dividing `trips`) whose `preload` words
/// fit, and stays rolled; 0 leaves the loop to ptxas.
int64_t RowLowering::chunksPerTrip(int64_t trips, ArrayRef<LoadOp> preload) {
  int64_t words = 0;
  for (LoadOp l : preload)
    words += loadedWords(l, vec);
  int64_t budget = maxRegisters / 2;
  if (words == 0 || trips * words <= budget)
    return 0;
  int64_t n = 1;
  while (trips % (2 * n) == 0 && 2 * n * words <= budget)
    n *= 2;
  return n;
}

/// This thread's chunks [lb, ub), one per loop trip, threading the values
/// `body` returns. `inside`: every such chunk lies in the row (no masks);
/// then the loads in `preload` are issued before `body` runs (ahead of the
/// stores of an in-place row). `trips`: ub - lb, when known (then lb is 0).
SmallVector<Value> RowLowering::chunkLoop(
    Value lb, Value ub, bool inside, ValueRange inits, ArrayRef<LoadOp> preload,
    function_ref<SmallVector<Value>(Chunk &, ValueRange)> body,
    std::optional<int64_t> trips) {
  int64_t perTrip = inside && trips ? chunksPerTrip(*trips, preload) : 0;
  auto loop = scf::ForOp::create(b, loc, lb, ub,
                                 cIndex(std::max<int64_t>(perTrip, 1)), inits);
  OpBuilder::InsertionGuard g(b);
  if (inits.empty()) // the builder added an empty yield
    loop.getBody()->getTerminator()->erase();
  b.setInsertionPointToStart(loop.getBody());
  if (perTrip == 0) {
    Chunk c = makeChunk(loop.getInductionVar(), std::nullopt, inside);
    if (inside)
      for (LoadOp l : preload)
        chunkValue(l.getResult(), c);
    scf::YieldOp::create(b, loc, body(c, loop.getRegionIterArgs()));
    return SmallVector<Value>(loop.getResults());
  }
  // Every chunk's loads, then the bodies in order.
  SmallVector<Chunk> chunks;
  for (int64_t i = 0; i < perTrip; ++i) {
    Value j = arith::AddIOp::create(b, loc, loop.getInductionVar(), cIndex(i));
    chunks.push_back(makeChunk(j, std::nullopt, inside));
    for (LoadOp l : preload)
      chunkValue(l.getResult(), chunks.back());
  }
  SmallVector<Value> values(loop.getRegionIterArgs());
  for (Chunk &c : chunks)
    values = body(c, values);
  scf::YieldOp::create(b, loc, values);
  auto keepRolled = LLVM::LoopAnnotationAttr::get(
      b.getContext(), {}, {}, {},
      LLVM::LoopUnrollAttr::get(b.getContext(), /*disable=*/b.getBoolAttr(true),
                                {}, {}, {}, {}, {}, {}),
      {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {});
  // scf-to-cf copies the loop's attributes onto its back edge, where
  // llvm.br takes `loop_annotation` as its own (LLVM's !llvm.loop).
  loop->setAttr("loop_annotation", keepRolled);
  return SmallVector<Value>(loop.getResults());
}

/// Every chunk of this thread's row, in order. `split`: the whole steps
/// (every thread's chunk in the row) without masks, then the step that
/// crosses the end of the row, masked (none when the length is a known
/// multiple of the step); else one loop, masked unless the length is a known
/// multiple of the step. Masking every trip was slower; unrolling the whole
/// steps did no better overall (their registers cost short rows occupancy)
/// (bench/results/lowering-decisions.md).
SmallVector<Value> RowLowering::rowLoop(
    bool split, ValueRange inits, ArrayRef<LoadOp> preload,
    function_ref<SmallVector<Value>(Chunk &, ValueRange)> body) {
  int64_t tpr = sched.getThreadsPerRow();
  bool launched = launchedRows();
  bool exact = !launched && staticLength && *staticLength % (tpr * vec) == 0;
  // Threads chosen at launch step by what was launched, a power of two:
  // shifts, not divisions (bench/results/lowering-decisions.md).
  Value shift, perStep = cIndex(tpr * vec);
  if (launched) {
    Value t32 = arith::IndexCastUIOp::create(b, loc, b.getI32Type(), threads);
    shift = arith::AddIOp::create(
        b, loc,
        arith::IndexCastUIOp::create(
            b, loc, b.getIndexType(),
            LLVM::CountTrailingZerosOp::create(b, loc, b.getI32Type(), t32,
                                               /*is_zero_poison=*/true)),
        cIndex(llvm::Log2_64(vec)));
    perStep = arith::ShLIOp::create(b, loc, cIndex(1), shift);
  }
  auto over = [&](Value n) -> Value {
    return launched ? (Value)arith::ShRUIOp::create(b, loc, n, shift)
                    : arith::DivUIOp::create(b, loc, n, perStep);
  };
  auto steps = [&] { // every step that holds part of the row
    Value below = launched
                      ? (Value)arith::SubIOp::create(b, loc, perStep, cIndex(1))
                      : cIndex(tpr * vec - 1);
    return over(arith::AddIOp::create(b, loc, length, below));
  };
  if (!split)
    return chunkLoop(cIndex(0), steps(), exact, inits, preload, body);
  Value whole = over(length);
  std::optional<int64_t> trips;
  if (!launched && staticLength)
    trips = *staticLength / (tpr * vec);
  SmallVector<Value> values =
      chunkLoop(cIndex(0), whole, true, inits, preload, body, trips);
  if (exact)
    return values;
  return chunkLoop(whole, steps(), false, values, preload, body);
}

/// One pass over the row per level of reductions, then one for the stores;
/// each pass reads its inputs again (from L2 after the first).
void RowLowering::emitRereading() {
  emitGathers();
  emitLateRowMaps();
  auto accType = mlir::VectorType::get({vec}, b.getF32Type());
  SmallVector<LoadOp> held = rowLoadsHeld(kernel).takeVector();
  // The element-wise accesses of the `_any` fallback keep one masked loop:
  // a second copy of them would cost compile time for a fallback.
  bool split = allVectorized(held);
  for (int level = 1; level <= maxLevel; ++level) {
    // The loop carries a vector accumulator per reduction, a tuple
    // reduction's partial (sqdev, expsum) as scalars.
    SmallVector<ReduceOp> phase;
    SmallVector<Value> inits;
    for (ReduceOp r : reduces)
      if (reduceLevel(r.getResult()) == level && !twinOf(r).first) {
        phase.push_back(r);
        if (slotsOf(r.getKind()) > 1)
          llvm::append_range(inits, identities(r.getKind()));
        else
          inits.push_back(identity(r.getKind(), accType));
      }
    SmallVector<Value> accs =
        rowLoop(split, inits, held, [&](Chunk &c, ValueRange in) {
          SmallVector<Value> next;
          for (ReduceOp r : phase) {
            if (int n = slotsOf(r.getKind()); n > 1) {
              llvm::append_range(
                  next, combineParts(r, in.take_front(n),
                                     threadPartial(r, MutableArrayRef(c))));
              in = in.drop_front(n);
              continue;
            }
            next.push_back(accumulate(r, c, in.front()));
            in = in.drop_front();
          }
          return next;
        });
    SmallVector<SmallVector<Value>> partials;
    ArrayRef<Value> rest = accs;
    for (ReduceOp r : phase) {
      if (int n = slotsOf(r.getKind()); n > 1) {
        partials.push_back(SmallVector<Value>(rest.take_front(n)));
        rest = rest.drop_front(n);
        continue;
      }
      partials.push_back({reduceVector(r, rest.front())});
      rest = rest.drop_front();
    }
    finish(phase, partials);
    emitReadyScalars();
  }
  SmallVector<LoadOp> rowLoads;
  for (LoadOp l : kernel.getBody().getOps<LoadOp>())
    if (isRowValue(l.getResult()))
      rowLoads.push_back(l);
  rowLoop(split, {}, rowLoads, [&](Chunk &c, ValueRange) {
    emitStores(c);
    return SmallVector<Value>();
  });
  emitScalarStores();
}

LogicalResult RowLowering::run() {
  emitPrologue();
  Value domain = kernel.getDomainOp().getLength();
  emitReadyScalars();
  emitRowMaps();
  emitReadyScalars();
  length = map.lookup(domain);
  staticLength = getConstantIntValue(domain);
  // The runtime launches an exact variant only on rows of that length: it
  // is the specialized kernel.
  VariantAttr variant = getVariant(kernel);
  if (variant && variant.getLength()) {
    staticLength = variant.getLength();
    length = cIndex(variant.getLength());
  }
  if (staticLength)
    shortestRow = *staticLength;
  else if (variant && variant.getMinLength())
    shortestRow = variant.getMinLength();
  // Rows of at least one element (the runtime refuses dims of 0), so a
  // whole number of chunks means chunk 0 lies in the row.
  wholeChunks = staticLength ? *staticLength > 0 && *staticLength % vec == 0
                             : knownDivisor(domain, kernel) % vec == 0;
  if (sched.getLaunchThreads() && !wholeChunks)
    return kernel.emitOpError("holds rows over threads chosen at launch but "
                              "its row length is not "
                              "known to be a whole number of ")
           << vec << "-element chunks (a kgen.divisibility of the dims)";
  if (failed(checkGroupLanes()))
    return failure();
  StridePairs pairs = findStridePairs(kernel);
  for (auto [even, odd] : pairs.loads)
    if (even.getVectorWidth().value_or(1) > 1)
      loadPairOf[even] = loadPairOf[odd] = {even, odd};
  for (auto [even, odd] : pairs.stores)
    if (even.getVectorWidth().value_or(1) > 1)
      storePairOf[even] = storePairOf[odd] = {even, odd};
  int slots = 0;
  for (ReduceOp r : kernel.getBody().getOps<ReduceOp>()) {
    reduces.push_back(r);
    slotOf[r] = slots;
    slots += slotsOf(r.getKind());
    maxLevel = std::max(maxLevel, reduceLevel(r.getResult()));
  }

  if (!sched.getReread())
    emitInRegisters(sched.getChunks());
  else
    emitRereading();
  gpu::ReturnOp::create(b, loc);
  return success();
}

/// A group is G / vec chunks of consecutive lanes at one step, which holds
/// when that is a power of two of at most a warp that divides the row's
/// threads (a launch picks a power of two, at least the row's chunks, or
/// whole warps), and the row is whole chunks.
LogicalResult RowLowering::checkGroupLanes() {
  SmallVector<int64_t> groups;
  kernel.walk([&](Operation *op) {
    if (auto g = dyn_cast<GroupReduceOp>(op))
      groups.push_back(g.getGroup());
    else if (auto st = dyn_cast<StoreOp>(op); st && st.getGroup())
      groups.push_back(*st.getGroup());
  });
  for (int64_t g : groups) {
    int64_t lanes = g / vec;
    bool fits =
        g % vec == 0 && llvm::isPowerOf2_64(lanes) && lanes <= 32 &&
        wholeChunks &&
        (sched.getLaunchThreads() || sched.getThreadsPerRow() % lanes == 0);
    if (!fits)
      return kernel.emitOpError("groups of ")
             << g << " elements need whole chunks of " << vec
             << " elements over a power of two of lanes, at most 32, that "
             << "divides the row's " << sched.getThreadsPerRow() << " threads";
  }
  return success();
}

namespace {

struct LowerToGPU : ::mlir::kgen::impl::KgenLowerToGPUBase<LowerToGPU> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *ctx) override {
    auto ok = [&](const auto &option, int64_t least,
                  int64_t most = kMaxTuningValue) {
      return succeeded(checkOption(ctx, *this, option, least, most));
    };
    return success(ok(clusterPreloadChunks, 0) && ok(prefetchAheadBytes, 1) &&
                   ok(prefetchAheadMinRows, 0));
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<KernelOp> kernels(module.getOps<KernelOp>());
    if (kernels.empty())
      return;
    OpBuilder b(module.getContext());
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    b.getUnitAttr());
    b.setInsertionPointToEnd(module.getBody());
    auto gpuModule = gpu::GPUModuleOp::create(b, module.getLoc(), "kgen");
    for (KernelOp k : kernels) {
      if (failed(lower(k, gpuModule)))
        return signalPassFailure();
      k.erase();
    }
  }

  LogicalResult lower(KernelOp k, gpu::GPUModuleOp gpuModule) {
    ScheduleAttr s = requireSchedule(k);
    if (!s)
      return failure();
    if (!s.getMaxRegisters())
      return k.emitOpError("needs a register cap; run kgen-occupancy first");
    MLIRContext *ctx = k.getContext();
    OpBuilder b(ctx);
    auto ptrType = LLVM::LLVMPointerType::get(ctx, /*addressSpace=*/1);
    SmallVector<Type> params;
    SmallVector<Attribute> abi;
    auto entryArgs = k.getBody().front().getArguments();
    for (auto [i, a] : llvm::enumerate(entryArgs))
      if (getTensorElementType(a.getType())) {
        params.push_back(ptrType);
        abi.push_back(b.getStringAttr("ptr:" + k.getArgName(i)));
      }
    for (auto [i, a] : llvm::enumerate(entryArgs))
      if (hasRowStride(a)) {
        params.push_back(b.getI64Type());
        abi.push_back(b.getStringAttr("stride:" + k.getArgName(i)));
      }
    for (auto [i, a] : llvm::enumerate(entryArgs)) {
      Type t = a.getType();
      if (getTensorElementType(t))
        continue;
      bool isDim = isa<IndexType>(t);
      params.push_back(isDim ? b.getI64Type() : t);
      abi.push_back(
          b.getStringAttr((isDim ? "dim:" : "scalar:") + k.getArgName(i)));
    }
    params.push_back(b.getI64Type());
    abi.push_back(b.getStringAttr("rows"));

    int64_t nReduce = 0; // shared slots a warp takes
    for (ReduceOp r : k.getBody().getOps<ReduceOp>())
      nReduce += RowLowering::slotsOf(r.getKind());
    SmallVector<Type> workgroup;
    LLVM::GlobalOp clusterSlots;
    if (s.getCluster()) {
      // Peers write these through mapa, which takes an LLVM pointer.
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(gpuModule.getBody());
      auto slots = LLVM::LLVMArrayType::get(
          b.getF32Type(), std::max<int64_t>(nReduce, 1) * s.getTiles() *
                              (s.getThreadsPerRow() / 32));
      clusterSlots = LLVM::GlobalOp::create(
          b, k.getLoc(), slots, /*isConstant=*/false, LLVM::Linkage::Internal,
          (k.getSymName() + "_cluster_slots").str(), Attribute(),
          /*alignment=*/4, /*addrSpace=*/3);
    } else if (s.getThreadsPerRow() > 32 && nReduce > 0)
      workgroup.push_back(MemRefType::get(
          {nReduce * s.getRowsPerBlock() * (s.getThreadsPerRow() / 32)},
          b.getF32Type(), MemRefLayoutAttrInterface(),
          gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup)));

    b.setInsertionPointToEnd(gpuModule.getBody());
    auto func =
        gpu::GPUFuncOp::create(b, k.getLoc(), k.getSymName(),
                               b.getFunctionType(params, {}), workgroup);
    func->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
    int32_t block = s.getThreadsPerRow() * s.getRowsPerBlock();
    if (s.getLaunchThreads() || s.getRowsPerBlock() > 1) // the most
      func->setAttr(NVVM::NVVMDialect::getMaxntidAttrName(),
                    b.getDenseI32ArrayAttr({block, 1, 1}));
    else
      func.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({block, 1, 1}));
    func->setAttr("nvvm.maxnreg",
                  b.getI32IntegerAttr(int32_t(s.getMaxRegisters())));
    func->setAttr(kAbiAttr, b.getArrayAttr(abi));
    if (s.getCluster()) // .reqnctapercluster: a plain launch forms them
      func->setAttr(NVVM::NVVMDialect::getClusterDimAttrName(),
                    b.getDenseI32ArrayAttr({int32_t(s.getTiles()), 1, 1}));
    b.setInsertionPointToStart(&func.getBody().front());
    RowLowering lowering(b, k, func);
    lowering.busyRow = s.getBusyRow();
    lowering.maxRegisters = s.getMaxRegisters();
    lowering.clusterPreloadChunks = clusterPreloadChunks;
    lowering.prefetchAheadBytes = prefetchAheadBytes;
    lowering.prefetchAheadMinRows = prefetchAheadMinRows;
    lowering.clusterSlots = clusterSlots;
    return lowering.run();
  }
};

} // namespace
