//===- RowLoads.cpp - What a thread's share of a row holds ----------------===//
//
// Shared by the variants and the schedule (to size a thread's share of the
// row) and the lowering (to issue the held loads first): small analyses, one
// definition each.
//
//===----------------------------------------------------------------------===//
#include "codegen/Transforms/Passes.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::kgen;

llvm::SetVector<LoadOp> mlir::kgen::rowLoadsHeld(KernelOp kernel) {
  llvm::SetVector<LoadOp> held;
  SmallVector<Value> work;
  bool anyReduce = false;
  kernel.walk([&](ReduceOp r) {
    anyReduce = true;
    work.push_back(r.getInput());
  });
  if (!anyReduce) {
    kernel.walk([&](LoadOp l) {
      if (isa<RankedTensorType>(l.getResult().getType()))
        held.insert(l);
    });
    return held;
  }
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!isa<RankedTensorType>(v.getType()) || !seen.insert(v).second)
      continue;
    Operation *op = v.getDefiningOp();
    if (!op)
      continue;
    if (auto l = dyn_cast<LoadOp>(op))
      held.insert(l);
    for (Value o : op->getOperands())
      work.push_back(o);
  }
  return held;
}

static int64_t elementBytes(Value tensor) {
  return (getTensorElementType(tensor.getType()).getIntOrFloatBitWidth() + 7) /
         8;
}

SmallVector<LoadOp> mlir::kgen::widerSharedLoads(KernelOp kernel,
                                                 int64_t &heldBytes) {
  llvm::SetVector<LoadOp> held = rowLoadsHeld(kernel);
  heldBytes = 0;
  for (LoadOp l : held)
    heldBytes = heldBytes ? std::min(heldBytes, elementBytes(l.getSource()))
                          : elementBytes(l.getSource());
  SmallVector<LoadOp> wider;
  if (!heldBytes)
    return wider;
  kernel.walk([&](LoadOp l) {
    Value src = l.getSource();
    bool shared = isa<ColumnVectorType>(src.getType()) ||
                  src.getDefiningOp<GroupOp>() || src.getDefiningOp<GatherOp>();
    if (shared && !held.contains(l) &&
        isa<RankedTensorType>(l.getResult().getType()) &&
        elementBytes(src) > heldBytes)
      wider.push_back(l);
  });
  return wider;
}

int64_t mlir::kgen::heldLoadCount(KernelOp kernel) {
  int64_t heldBytes;
  SmallVector<LoadOp> wider = widerSharedLoads(kernel, heldBytes);
  int64_t count = std::max<int64_t>(rowLoadsHeld(kernel).size(), 1);
  for (LoadOp l : wider)
    count += elementBytes(l.getSource()) / heldBytes - 1;
  return count;
}

bool mlir::kgen::readsPartVector(LoadOp l) {
  auto heads = l.getSource().getDefiningOp<HeadsOp>();
  return heads && isa<ColumnVectorType>(heads.getParts().front().getType());
}

bool mlir::kgen::readsMappedRows(KernelOp kernel) {
  Block &body = kernel.getBody().front();
  return !body.getOps<GroupOp>().empty() || !body.getOps<HeadsOp>().empty() ||
         !body.getOps<GatherOp>().empty();
}

bool mlir::kgen::streamsChunks(KernelOp kernel) {
  return !readsMappedRows(kernel) &&
         !kernel
              .walk([](Operation *op) {
                return isa<ReduceOp, GroupReduceOp>(op)
                           ? WalkResult::interrupt()
                           : WalkResult::advance();
              })
              .wasInterrupted();
}

int64_t mlir::kgen::distinctViews(ArrayRef<LoadOp> loads) {
  auto start = [](LoadOp l) -> std::optional<int64_t> {
    if (!l.getStart())
      return 0;
    return getConstantIntValue(l.getStart());
  };
  int64_t views = 0;
  for (size_t i = 0; i < loads.size(); ++i) {
    LoadOp l = loads[i];
    views += llvm::none_of(loads.take_front(i), [&](LoadOp e) {
      return e.getSource() == l.getSource() && e.getStride() == l.getStride() &&
             (e.getStart() == l.getStart() ||
              (start(e) && start(e) == start(l)));
    });
  }
  return views;
}

bool mlir::kgen::storesNarrowerRow(KernelOp kernel) {
  int64_t narrowest = 0; // bits
  for (LoadOp l : rowLoadsHeld(kernel))
    if (isa<RowsType>(l.getSource().getType()) && !readsPartVector(l)) {
      int64_t bits =
          getTensorElementType(l.getSource().getType()).getIntOrFloatBitWidth();
      narrowest = narrowest ? std::min(narrowest, bits) : bits;
    }
  return narrowest &&
         llvm::any_of(kernel.getBody().getOps<StoreOp>(), [&](StoreOp st) {
           return isa<RankedTensorType>(st.getValue().getType()) &&
                  getTensorElementType(st.getDest().getType())
                          .getIntOrFloatBitWidth() < narrowest;
         });
}

bool mlir::kgen::hasNestedReduction(KernelOp kernel, bool onePass) {
  auto input = [&](ReduceOp r) {
    Value x;
    if (onePass && !(x = varianceInput(r)))
      x = expSumInput(r);
    return x ? x : r.getInput();
  };
  DenseMap<Value, bool> memo;
  std::function<bool(Value)> readsReduce = [&](Value v) {
    Operation *op = v.getDefiningOp();
    if (!op)
      return false;
    if (isa<ReduceOp>(op))
      return true;
    auto [it, fresh] = memo.try_emplace(v, false);
    if (!fresh)
      return it->second;
    bool r = llvm::any_of(op->getOperands(), readsReduce);
    return memo[v] = r;
  };
  return llvm::any_of(kernel.getBody().getOps<ReduceOp>(),
                      [&](ReduceOp r) { return readsReduce(input(r)); });
}

int64_t mlir::kgen::chunkVector(KernelOp kernel) {
  auto bytes = [](Type t) { return (t.getIntOrFloatBitWidth() + 7) / 8; };
  // A chunk is 16 bytes of the widest dtype a streamed row access moves:
  // rows of the row program's own. Rows many programs share (weights,
  // grouped rows, gathered table rows) come from cache and may take two
  // accesses per chunk (rope's f32 cos/sin with bf16 q: 16-byte q accesses
  // rather than 8). A group store writes one element a group: no stream.
  int64_t widest = 0, widestShared = 1;
  kernel.walk([&](Operation *op) {
    Value v, tensor;
    if (auto l = dyn_cast<LoadOp>(op)) {
      v = l.getResult();
      tensor = l.getSource();
    } else if (auto s = dyn_cast<StoreOp>(op); s && !s.getGroup()) {
      v = s.getValue();
      tensor = s.getDest();
    }
    auto tt = v ? dyn_cast<RankedTensorType>(v.getType()) : nullptr;
    if (!tt)
      return;
    bool shared = isa<ColumnVectorType>(tensor.getType()) ||
                  tensor.getDefiningOp<GroupOp>() ||
                  tensor.getDefiningOp<GatherOp>();
    int64_t &w = shared ? widestShared : widest;
    w = std::max<int64_t>(w, bytes(tt.getElementType()));
  });
  return 16 / (widest ? widest : widestShared);
}

int64_t mlir::kgen::loadedWords(LoadOp l, int64_t elements) {
  return llvm::divideCeil(
      elements *
          getTensorElementType(l.getSource().getType()).getIntOrFloatBitWidth(),
      32);
}

bool mlir::kgen::allVectorized(ArrayRef<LoadOp> loads) {
  return llvm::all_of(
      loads, [](LoadOp l) { return l.getVectorWidth().value_or(1) > 1; });
}

SmallVector<Value> mlir::kgen::tensorRoots(Value tensor) {
  Operation *op = tensor.getDefiningOp();
  if (!op)
    return {tensor};
  if (auto g = dyn_cast<GroupOp>(op))
    return tensorRoots(g.getSource());
  if (auto g = dyn_cast<GatherOp>(op))
    return tensorRoots(g.getTable());
  return llvm::to_vector(cast<HeadsOp>(op).getParts());
}

bool mlir::kgen::loadsAStoredRow(KernelOp kernel) {
  DenseSet<Value> stored;
  kernel.walk([&](StoreOp s) {
    for (Value r : tensorRoots(s.getDest()))
      stored.insert(r);
  });
  return llvm::any_of(kernel.getBody().getOps<LoadOp>(), [&](LoadOp l) {
    return isa<RankedTensorType>(l.getResult().getType()) &&
           llvm::any_of(tensorRoots(l.getSource()),
                        [&](Value r) { return stored.contains(r); });
  });
}

void mlir::kgen::prefetchedLoads(KernelOp kernel,
                                 SmallVectorImpl<LoadOp> &perRow,
                                 SmallVectorImpl<LoadOp> &shared) {
  auto ownRow = [](Value source) {
    return isa<RowsType>(source.getType()) &&
           (isa<BlockArgument>(source) || source.getDefiningOp<HeadsOp>());
  };
  for (LoadOp l : kernel.getBody().getOps<LoadOp>())
    if (isa<RankedTensorType>(l.getResult().getType()) &&
        !l.getSource().getDefiningOp<GatherOp>())
      (ownRow(l.getSource()) ? perRow : shared).push_back(l);
}

ScheduleAttr mlir::kgen::requireSchedule(KernelOp kernel) {
  ScheduleAttr s = kernel.getScheduleAttr();
  if (!s)
    kernel.emitOpError("needs a schedule; run kgen-schedule first");
  return s;
}
