//===- RowLoads.cpp - Which row loads stay live across reductions ---------===//
//
// Shared by the schedule (to size a thread's share of the row) and the
// lowering (to issue those loads first): a small analysis, one definition.
//
//===----------------------------------------------------------------------===//
#include "codegen/Transforms/Passes.h"

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
