//===- RowLowering.h - State shared by the kgen-lower-to-gpu files -*- C++
//-*-===//
//
// Lowers one scheduled kgen.kernel into the body of a gpu.func. A "chunk" is
// the `vector` consecutive domain elements [e0, e0 + vector) one thread
// handles at a time; row values become vectors of that many elements.
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_CODEGEN_TRANSFORMS_ROWLOWERING_H
#define KGEN_CODEGEN_TRANSFORMS_ROWLOWERING_H

#include "codegen/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::kgen {

struct Chunk {
  Value e0;       ///< index of the chunk's first domain element
  Value fullCond; ///< i1: the whole chunk is inside the row; null: known so
  Value mask;     ///< vector<V x i1> of in-row elements; null when known full
  /// The chunk is wholly in or out of the row (fullCond); e0 was moved to
  /// chunk 0 when out, so its accesses need no per-element path.
  bool wholeOrNone = false;
  DenseMap<Value, Value> memo; ///< row value -> its vector for this chunk
};

class RowLowering {
public:
  RowLowering(OpBuilder &b, KernelOp kernel, gpu::GPUFuncOp func);
  LogicalResult run();
  /// Shared slots a warp's partial of a reduction of `kind` takes.
  static int slotsOf(ReduceKind kind);

  // RowAccess.cpp: memory.
  Value loadChunk(LoadOp op, Chunk &c);
  void storeChunk(StoreOp op, Value v, Chunk &c);
  Value loadScalar(LoadOp op);
  /// Brings the line of the chunk's first element into L2 (a hint: no
  /// value, no fault), for loads issued before the grids ahead are waited on.
  void prefetchChunk(LoadOp op, Chunk &c);
  void storeScalar(StoreOp op, Value v);
  /// An even/odd pair of stride-2 views (Pairs.cpp) moved as one span.
  std::pair<Value, Value> loadPair(LoadOp even, LoadOp odd, Chunk &c);
  void storePair(StoreOp even, StoreOp odd, Value ve, Value vo, Chunk &c);

private:
  Value loadElements(LoadOp op, Chunk &c);
  void storeElements(StoreOp op, Value v, Chunk &c);
  Value loadSpan(LoadOp even, Chunk &c);
  Value checkGather(LoadOp op, Value v);

  Value chunkValue(Value rowValue, Chunk &c);
  Chunk makeChunk(Value chunkIndex, std::optional<int64_t> staticIndex,
                  bool inside = false);
  void emitReadyScalars();
  int reduceLevel(Value v);
  llvm::SetVector<LoadOp> lateLoads(std::optional<int> level);
  // Reductions.cpp: a row's reductions over its threads.
  /// A thread's partial of a reduction (one value; a sqdev's count, sum and
  /// squared deviations; an expsum's max and sum of exponentials) and the
  /// reduction's first shared slot.
  struct Partial {
    SmallVector<Value> values;
    ReduceOp op;
    int slot;
  };
  SmallVector<Value> butterfly(ValueRange x, ReduceOp r, int64_t width,
                               Value within = {});
  /// The launched warps of each row of the block combine their partials
  /// through shared memory (at most 32 warps a block).
  SmallVector<SmallVector<Value>>
  acrossWarps(ArrayRef<Partial> parts, ArrayRef<SmallVector<Value>> warpTotals);
  SmallVector<SmallVector<Value>> crossThreadReduce(ArrayRef<Partial> parts);
  /// The tuple reduction over the same input as `r` that computes `r` on
  /// the way (a sqdev's sum, layernorm's mean; an expsum's max), and the
  /// index of that value in its partials: `r` needs no shuffles of its own.
  std::pair<ReduceOp, int> twinOf(ReduceOp r);
  /// ClusterReduce.cpp: the warps' partials of a row over its cluster.
  SmallVector<SmallVector<Value>>
  clusterReduce(ArrayRef<SmallVector<Value>> warpPartials,
                ArrayRef<Partial> parts);
  /// A group reduction's value for chunk `c`: the chunk's own elements, then
  /// xor shuffles over the lanes that hold the rest of its group (whole
  /// chunks of consecutive lanes at one step: checkGroupLanes).
  Value groupReduce(GroupReduceOp g, Chunk &c);
  /// Fails unless every group of the kernel lies in one step's lanes.
  LogicalResult checkGroupLanes();
  Value combine(ReduceKind kind, Value a, Value b);
  SmallVector<Value> combineParts(ReduceOp r, ValueRange a, ValueRange b);
  SmallVector<Value> mergeMoments(ValueRange a, ValueRange b);
  SmallVector<Value> localMoments(ReduceOp r, MutableArrayRef<Chunk> chunks);
  Value expOf(ReduceOp r, Value x);
  SmallVector<Value> mergeExpSums(ReduceOp r, ValueRange a, ValueRange b);
  SmallVector<Value> localExpSum(ReduceOp r, MutableArrayRef<Chunk> chunks);
  Value identity(ReduceKind kind, Type t);
  SmallVector<Value> identities(ReduceKind kind);
  /// This thread's partial of `r` over the chunks it holds.
  SmallVector<Value> threadPartial(ReduceOp r, MutableArrayRef<Chunk> chunks);
  Value reduceVector(ReduceOp r, Value acc);
  void emitPrologue();
  void emitRowMaps();
  Value groupRow(GroupOp g);
  bool isLateRowMap(GroupOp g, const llvm::SetVector<LoadOp> &held);
  void emitLateRowMaps();
  void emitGathers();
  /// The chunk's row stores; only those of reduction `level` when given.
  void emitStores(Chunk &c, std::optional<int> level = std::nullopt);
  /// Whether computing `v` for `c` would load, for the first time in `c`, a
  /// row of a tensor whose roots are in `written`.
  bool loadsUnread(Value v, Chunk &c, const DenseSet<Value> &written);
  void emitScalarStores();
  void emitInRegisters(int64_t count);
  void emitPrefetches(MutableArrayRef<Chunk> chunks);
  /// Prefetch the row of a later block into L2 (see the definition).
  void emitPrefetchAhead(int64_t count);
  void prefetchLines(LoadOp l, int64_t count);
  void rewiden(Chunk &c);
  void emitRereading();
  int64_t chunksPerTrip(int64_t trips, ArrayRef<LoadOp> preload);
  SmallVector<Value>
  chunkLoop(Value lb, Value ub, bool inside, ValueRange inits,
            ArrayRef<LoadOp> preload,
            function_ref<SmallVector<Value>(Chunk &, ValueRange)> body,
            std::optional<int64_t> trips = std::nullopt);
  SmallVector<Value>
  rowLoop(bool split, ValueRange inits, ArrayRef<LoadOp> preload,
          function_ref<SmallVector<Value>(Chunk &, ValueRange)> body);
  Value accumulate(ReduceOp r, Chunk &c, Value acc);
  /// The reductions of one level, from each one's per-thread partial.
  void finish(ArrayRef<ReduceOp> rs, ArrayRef<SmallVector<Value>> partials);

  Value cIndex(int64_t v);
  /// Rows over a block of x threads a row by y rows chosen at launch
  /// (blockDim.x, blockDim.y): re-read, or held in one chunk a thread. Rows
  /// held in more take one row a block: the row index from blockDim.y and
  /// tid.y cost layernorm's hold2 registers, and with it an SM's seventh
  /// block (bench/results/lowering-decisions.md).
  bool launchedRows() const {
    return sched.getLaunchThreads() &&
           (sched.getReread() || sched.getChunks() == 1);
  }
  /// True when a store writes one of the tensor's arguments.
  bool isWritten(Value tensor);
  Value toI64(Value index);
  /// Pointer to element `offset` (i64) of `ptr`, for elements of type t.
  Value gep(Value ptr, Value offset, Type t);

public:
  OpBuilder &b;
  Location loc;
  KernelOp kernel;
  gpu::GPUFuncOp func;
  ScheduleAttr sched;
  int64_t vec;
  IRMapping map;                 ///< kernel scalars -> lowered values
  DenseMap<Value, Value> base;   ///< tensor -> pointer to this thread's row
  DenseMap<Value, Value> rawPtr; ///< rows/scalars arg -> its pointer param
  DenseMap<Value, Value> pitch;  ///< rows arg -> its row stride (i64)
  /// kgen.gather result -> i1: the index is inside the table.
  DenseMap<Value, Value> gatherValid;
  DenseSet<Value> written; ///< tensor args some store writes
  Value lane, rowInBlock, row, rowValid, length;
  Value rows;      ///< the launch's row count (i64)
  Value threads;   ///< threads per row (index): the schedule's, or launched
  Value tileIndex; ///< this block's tile of its rows, when there are tiles
  /// A cluster schedule's shared slots: a partial per reduction and warp.
  LLVM::GlobalOp clusterSlots;
  /// The first cluster reduction waited on the barrier arrived at the start.
  bool clusterStarted = false;
  /// A long busy bf16 row under the three-block cap (keepsThreeBlocks): its
  /// held values re-widen after each reduction.
  bool busyRow = false;
  /// kgen-lower-to-gpu's options of these names (Passes.td).
  int64_t clusterPreloadChunks = 0, prefetchAheadBytes = 0,
          prefetchAheadMinRows = 0;
  /// The kernel's `.maxnreg` (LowerToGPU's registerCap).
  int64_t maxRegisters = 255;
  std::optional<int64_t> staticLength;
  /// The shortest row the variant is launched on (staticLength, or a
  /// warp variant's minLength): chunks that lie before it need no mask.
  int64_t shortestRow = 0;
  /// The row length is a known multiple of `vec`: chunks are whole or out.
  bool wholeChunks = false;
  DenseMap<Value, int> levels;
  SmallVector<ReduceOp> reduces;
  DenseMap<Operation *, int> slotOf; ///< reduction -> its first shared slot
  int maxLevel = 0;
  /// Stride-2 pairs the alignment analysis gave span accesses (width > 1):
  /// either member -> (even, odd).
  DenseMap<Operation *, std::pair<LoadOp, LoadOp>> loadPairOf;
  DenseMap<Operation *, std::pair<StoreOp, StoreOp>> storePairOf;
};

} // namespace mlir::kgen

#endif // KGEN_CODEGEN_TRANSFORMS_ROWLOWERING_H
