//===- Passes.h - kgen passes -----------------------------------*- C++ -*-===//
#ifndef KGEN_CODEGEN_TRANSFORMS_PASSES_H
#define KGEN_CODEGEN_TRANSFORMS_PASSES_H

#include "codegen/Dialect/KgenOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::kgen {

#define GEN_PASS_DECL
#include "codegen/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "codegen/Transforms/Passes.h.inc"

/// Argument attributes the variants and the analysis agree on.
inline constexpr llvm::StringLiteral kAlignAttr = "kgen.align";
inline constexpr llvm::StringLiteral kDivisibilityAttr = "kgen.divisibility";
/// On an expsum reduction: the arith fastmath flags of its exponentials (the
/// softmax's `math.exp`).
inline constexpr llvm::StringLiteral kExpFastMathAttr = "kgen.exp_fastmath";
/// The largest value a tuning option takes: past it, products of options
/// could overflow.
inline constexpr int64_t kMaxTuningValue = int64_t(1) << 30;

/// Fails, naming `pass` and `option`, where a value a profile or a flag gave
/// lies outside [least, most]: options are user input, checked once in the
/// pass's initialize() rather than trusted by each rule that reads them.
LogicalResult checkOption(MLIRContext *ctx, const Pass &pass,
                          const Pass::Option<int64_t> &option, int64_t least,
                          int64_t most = kMaxTuningValue);
/// ...and for a list: each value in range, in strictly ascending order.
LogicalResult checkOption(MLIRContext *ctx, const Pass &pass,
                          const Pass::ListOption<int64_t> &option,
                          int64_t least, int64_t most = kMaxTuningValue);

/// The gpu.func attribute listing its parameters for the spec.
inline constexpr llvm::StringLiteral kAbiAttr = "kgen.abi";

/// The row loads whose values a thread keeps in registers across the
/// kernel's reductions: those the reductions read (all row loads when the
/// kernel has no reduction).
llvm::SetVector<LoadOp> rowLoadsHeld(KernelOp kernel);

/// The loads of shared rows (weights, grouped or gathered rows) that are not
/// held and whose elements are wider than the narrowest held row's (an f32
/// weight by bf16 rows), whose width `heldBytes` gets (0: no held rows).
/// ptxas hoists their loads ahead of the reductions, so the width they add
/// counts as held.
SmallVector<LoadOp> widerSharedLoads(KernelOp kernel, int64_t &heldBytes);

/// rowLoadsHeld's count (at least 1), plus each widerSharedLoads' extra
/// width in loads of the held rows' width.
int64_t heldLoadCount(KernelOp kernel);

/// `kernel`'s schedule; null, with an error on the kernel, when
/// kgen-schedule has not run: the passes after it take no default.
ScheduleAttr requireSchedule(KernelOp kernel);

/// 32-bit registers that `elements` elements of `l`'s tensor take as loaded.
int64_t loadedWords(LoadOp l, int64_t elements);

/// Whether every one of `loads` moves more than one element per access (the
/// `_vec` variants; the `_any` fallback accesses elements one by one).
bool allVectorized(ArrayRef<LoadOp> loads);

/// The kernel arguments under a tensor value (itself, or a row map's).
SmallVector<Value> tensorRoots(Value tensor);

/// Whether a row `kernel` loads is one it also stores (fused_add_rmsnorm's
/// residual, rope in place).
bool loadsAStoredRow(KernelOp kernel);

/// The row loads a held kernel prefetches, split into rows of its own
/// (`perRow`) and rows it shares with others (weights, grouped rows); a
/// gathered row's address needs a load, so it is in neither.
void prefetchedLoads(KernelOp kernel, SmallVectorImpl<LoadOp> &perRow,
                     SmallVectorImpl<LoadOp> &shared);

/// Whether `l` reads a part vector: the weight of the part holding its head
/// (a `kgen.heads` of `!kgen.vector` parts), loaded once per held slice.
bool readsPartVector(LoadOp l);

/// Whether `kernel` reads rows chosen by another index (kgen.group, heads,
/// gather).
bool readsMappedRows(KernelOp kernel);

/// Whether each chunk of `kernel`'s rows is computed on its own: no
/// reduction of either kind and no row map.
bool streamsChunks(KernelOp kernel);

/// The distinct views `loads` read: a view loaded twice (an expression that
/// uses x in two places) counts once.
int64_t distinctViews(ArrayRef<LoadOp> loads);

/// Whether `kernel` stores a row in a narrower dtype than the narrowest row
/// it holds (rmsnorm_quant's fp8 output of bf16 rows; heads and gathered
/// rows count as rows, heads of vectors do not).
bool storesNarrowerRow(KernelOp kernel);

/// Whether some reduction of `kernel` reads another's result (layernorm's
/// variance reads its mean). With `onePass`, those that
/// kgen-one-pass-variance and kgen-online-softmax make one reduction
/// (varianceInput, expSumInput) do not.
bool hasNestedReduction(KernelOp kernel, bool onePass = false);

/// The x of a `reduce sum ((x - mean(x)) * (x - mean(x)))`, with mean(x)
/// `reduce sum x` over the row length; null for other reductions.
Value varianceInput(ReduceOp r);

/// The x of a `reduce sum (exp(x - max(x)))`, with max(x) `reduce max x`;
/// null for other reductions.
Value expSumInput(ReduceOp r);

/// Elements in a chunk, what a thread moves per access: 16 bytes of the
/// widest dtype of the rows the row program streams.
int64_t chunkVector(KernelOp kernel);

/// The largest power of two known to divide `v`, an index value of `k`
/// (kUnboundedDivisor for 0).
int64_t knownDivisor(Value v, KernelOp k);
inline constexpr int64_t kUnboundedDivisor = int64_t(1) << 30;

/// The largest value the index value `v` of `k` can take, from constants and
/// the `kgen.max` bounds of dims; nullopt when unbounded.
std::optional<int64_t> knownUpperBound(Value v, KernelOp k);

/// Pairs of stride-2 views of one tensor whose starts differ by one
/// (even, odd): together they cover a contiguous span (Pairs.cpp).
struct StridePairs {
  SmallVector<std::pair<LoadOp, LoadOp>> loads;
  SmallVector<std::pair<StoreOp, StoreOp>> stores;
};
StridePairs findStridePairs(KernelOp kernel);

} // namespace mlir::kgen

#endif // KGEN_CODEGEN_TRANSFORMS_PASSES_H
