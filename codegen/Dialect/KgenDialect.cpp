//===- KgenDialect.cpp - Dialect, types and attributes --------------------===//
#include "codegen/Dialect/KgenOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::kgen;

#include "codegen/Dialect/KgenDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "codegen/Dialect/KgenTypes.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "codegen/Dialect/KgenAttrs.cpp.inc"

void KgenDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "codegen/Dialect/KgenOps.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "codegen/Dialect/KgenTypes.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "codegen/Dialect/KgenAttrs.cpp.inc"
      >();
}

Type mlir::kgen::getTensorElementType(Type t) {
  return llvm::TypeSwitch<Type, Type>(t)
      .Case<RowsType, ColumnVectorType, ScalarsType>(
          [](auto tt) { return tt.getElementType(); })
      .Default([](Type) { return Type(); });
}

bool mlir::kgen::hasRowStride(BlockArgument arg) {
  if (isa<RowsType>(arg.getType()))
    return true;
  return isa<ScalarsType>(arg.getType()) &&
         llvm::any_of(arg.getUsers(),
                      [](Operation *u) { return isa<HeadsOp>(u); });
}

LogicalResult ScheduleAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t vector,
    int64_t threadsPerRow, int64_t rowsPerBlock, int64_t chunks, bool reread,
    int64_t tiles, bool launchThreads, int64_t launchRowsPerBlock, bool cluster,
    int64_t maxRegisters, bool busyRow, int64_t prefetchBlocks,
    bool prefetchFirst, bool prefetchLines, bool prefetchAhead) {
  if (vector < 1 || vector > 16)
    return emitError() << "vector must be in [1, 16], got " << vector;
  if (threadsPerRow < 1 || threadsPerRow > 1024 ||
      !(llvm::isPowerOf2_64(threadsPerRow) || threadsPerRow % 32 == 0))
    return emitError() << "threads_per_row must be a power of two or a "
                          "multiple of 32 in [1, 1024], got "
                       << threadsPerRow;
  // Divided, not multiplied: a huge rows_per_block must not wrap into range.
  if (rowsPerBlock < 1 || rowsPerBlock > 1024 / threadsPerRow)
    return emitError() << "a block of threads_per_row * rows_per_block = "
                       << threadsPerRow << " * " << rowsPerBlock
                       << " threads is outside [1, 1024]";
  if (launchRowsPerBlock < 0 || launchRowsPerBlock > rowsPerBlock)
    return emitError() << "launch_rows_per_block must be in [0, "
                       << rowsPerBlock << "] (0: rows_per_block), got "
                       << launchRowsPerBlock;
  if (chunks < 0)
    return emitError() << "chunks must be >= 0, got " << chunks;
  if (tiles < 1 || tiles > 65535)
    return emitError() << "tiles must be in [1, 65535], got " << tiles;
  if (tiles > 1 && (reread || chunks < 1))
    return emitError() << "tiles > 1 needs rows held in registers "
                          "(reread = false, chunks >= 1)";
  if (launchThreads && (rowsPerBlock != 1 || threadsPerRow % 32 || tiles != 1 ||
                        (reread ? chunks != 0 : chunks < 1)))
    return emitError() << "launchThreads needs rows_per_block = 1, tiles = 1, "
                          "threads_per_row a multiple of 32, and its rows "
                          "held (chunks >= 1) or re-read (reread = true, "
                          "chunks = 0)";
  // Rows over x threads by y rows chosen at launch (re-read, or one chunk a
  // thread) take x a power of two that divides the block (a power of two
  // too); re-read ones step by shifts (cttz of blockDim.x).
  if (launchThreads && (reread || chunks == 1) &&
      !(llvm::isPowerOf2_64(threadsPerRow) && llvm::isPowerOf2_64(vector)))
    return emitError() << "rows over threads and rows chosen at launch "
                          "(re-read, or one chunk a thread) need "
                          "threads_per_row and vector powers of two, got "
                       << threadsPerRow << " and " << vector;
  // 8: the most blocks a cluster may portably hold.
  if (cluster && (tiles < 2 || tiles > 8 || rowsPerBlock != 1 ||
                  launchThreads || reread || chunks < 1))
    return emitError() << "a cluster needs 2 to 8 tiles of one row per "
                          "block held in registers (tiles in [2, 8], "
                          "rows_per_block = 1, launchThreads = false, reread = "
                          "false, chunks >= 1), got tiles = "
                       << tiles;
  if (maxRegisters < 0 || maxRegisters > 255)
    return emitError() << "maxRegisters must be in [0, 255] (0: not decided), "
                          "got "
                       << maxRegisters;
  if (busyRow && !maxRegisters)
    return emitError() << "busyRow needs a register cap (maxRegisters > 0)";
  if (prefetchBlocks < 0 ||
      ((prefetchFirst || prefetchLines) && !prefetchBlocks))
    return emitError() << "prefetchFirst and prefetchLines need prefetchBlocks "
                          "> 0, got "
                       << prefetchBlocks;
  if ((prefetchBlocks || prefetchAhead) && reread)
    return emitError() << "only rows held in registers are prefetched";
  return success();
}

ScheduleAttr ScheduleAttr::withRegisters(int64_t maxRegisters,
                                         bool busyRow) const {
  return get(getContext(), getVector(), getThreadsPerRow(), getRowsPerBlock(),
             getChunks(), getReread(), getTiles(), getLaunchThreads(),
             getLaunchRowsPerBlock(), getCluster(), maxRegisters, busyRow,
             getPrefetchBlocks(), getPrefetchFirst(), getPrefetchLines(),
             getPrefetchAhead());
}

ScheduleAttr ScheduleAttr::withPrefetch(int64_t blocks, bool first, bool lines,
                                        bool ahead) const {
  return get(getContext(), getVector(), getThreadsPerRow(), getRowsPerBlock(),
             getChunks(), getReread(), getTiles(), getLaunchThreads(),
             getLaunchRowsPerBlock(), getCluster(), getMaxRegisters(),
             getBusyRow(), blocks, first, lines, ahead);
}

LogicalResult VariantAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                  VariantKind kind, int64_t length,
                                  int64_t chunks, int64_t maxThreads, bool wide,
                                  int64_t minLength, int64_t maxLength,
                                  int64_t minRows, int64_t maxRows,
                                  int64_t priority) {
  if (length < 0 || chunks < 0 || maxThreads < 0 || minLength < 0 ||
      maxLength < 0 || minRows < 0 || maxRows < 0 || priority < 0)
    return emitError() << "variant fields must be >= 0";
  // Each field belongs to one kind (two for minRows): a field set on another
  // kind would be read by no pass and launched on by no rule.
  bool exact = kind == VariantKind::exact, held = kind == VariantKind::held,
       warp = kind == VariantKind::warp;
  if ((length && !exact) || ((chunks || maxThreads || wide) && !held) ||
      ((minLength || maxLength) && !warp) ||
      (minRows && !warp && kind != VariantKind::rows) ||
      (maxRows && kind != VariantKind::cluster))
    return emitError() << "a " << stringifyVariantKind(kind)
                       << " variant has a field of another kind";
  switch (kind) {
  case VariantKind::exact:
    if (!length)
      return emitError() << "an exact variant needs length > 0";
    break;
  case VariantKind::held:
    if (chunks < 1 || chunks > 64)
      return emitError() << "a held variant needs chunks in [1, 64], got "
                         << chunks;
    if (maxThreads % 32 || maxThreads > 1024)
      return emitError() << "a held variant's maxThreads must be whole warps "
                            "up to 1024 (0: the schedule's), got "
                         << maxThreads;
    break;
  case VariantKind::warp:
    if (!minLength || maxLength < minLength)
      return emitError() << "a warp variant needs 0 < minLength <= maxLength";
    break;
  case VariantKind::rows:
    if (!minRows)
      return emitError() << "a rows variant needs minRows > 0";
    break;
  case VariantKind::cluster:
    if (!maxRows)
      return emitError() << "a cluster variant needs maxRows > 0";
    break;
  case VariantKind::vec:
  case VariantKind::any:
  case VariantKind::narrow:
    break;
  }
  return success();
}

VariantAttr mlir::kgen::getVariant(Operation *kernel) {
  return kernel->getAttrOfType<VariantAttr>(kVariantAttr);
}

VariantKind mlir::kgen::getVariantKind(Operation *kernel) {
  VariantAttr v = getVariant(kernel);
  return v ? v.getKind() : VariantKind::vec;
}

LaunchPolicyAttr LaunchPolicyAttr::get(MLIRContext *ctx,
                                       const ::kgen::launch::LaunchPolicy &p) {
  Builder b(ctx);
  SmallVector<NamedAttribute> fields;
  for (const auto &f : ::kgen::launch::kLaunchPolicyFields)
    fields.push_back(b.getNamedAttr(f.name, b.getI64IntegerAttr(p.*f.field)));
  return get(ctx, b.getDictionaryAttr(fields));
}

::kgen::launch::LaunchPolicy LaunchPolicyAttr::getPolicy() const {
  ::kgen::launch::LaunchPolicy p;
  for (const auto &f : ::kgen::launch::kLaunchPolicyFields)
    if (auto v = getFields().getAs<IntegerAttr>(f.name))
      p.*f.field = v.getInt();
  return p;
}

LogicalResult
LaunchPolicyAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                         DictionaryAttr fields) {
  ::kgen::launch::LaunchPolicy p;
  for (const auto &f : ::kgen::launch::kLaunchPolicyFields) {
    auto v = fields.getAs<IntegerAttr>(f.name);
    if (!v)
      return emitError() << "launch_policy needs an integer '" << f.name << "'";
    p.*f.field = v.getInt();
  }
  if (fields.size() != std::size(::kgen::launch::kLaunchPolicyFields))
    return emitError() << "launch_policy has fields it does not know";
  if (const char *bad = p.invalidField())
    return emitError() << "launch_policy's '" << bad
                       << "' is out of range (thread counts: powers of two "
                          "up to 1024; others positive)";
  return success();
}

::kgen::launch::LaunchPolicy mlir::kgen::getLaunchPolicy(Operation *op) {
  ModuleOp module =
      isa<ModuleOp>(op) ? cast<ModuleOp>(op) : op->getParentOfType<ModuleOp>();
  if (module)
    if (auto attr = module->getAttrOfType<LaunchPolicyAttr>(kLaunchPolicyAttr))
      return attr.getPolicy();
  return {};
}
