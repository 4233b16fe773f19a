//===- RowAccess.cpp - Loads and stores of chunks -------------------------===//
//
// A chunk access moves `vector_width` elements per instruction when the
// alignment analysis allowed it. A chunk that may cross the end of the row
// takes a per-element path instead, so no lane ever touches memory past the
// row (the tail is correct for any length); a chunk known to be wholly in or
// out reads from inside the row either way and stores only when in.
//
//===----------------------------------------------------------------------===//
#include "codegen/Transforms/RowLowering.h"

using namespace mlir;
using namespace mlir::kgen;

static int64_t bytesOf(Type t) { return (t.getIntOrFloatBitWidth() + 7) / 8; }

/// LLVM has no fp8 types: fp8 values are stored as their bytes.
static Value storable(OpBuilder &b, Location loc, Value v) {
  Type elem = getElementTypeOrSelf(v.getType());
  if (!isa<Float8E4M3FNType, Float8E5M2Type>(elem))
    return v;
  Type i8 = b.getI8Type();
  Type t = isa<mlir::VectorType>(v.getType())
               ? (Type)cast<mlir::VectorType>(v.getType()).clone(i8)
               : i8;
  return arith::BitcastOp::create(b, loc, t, v);
}

/// Element offset (i64) of element k of the chunk within the row pointer.
static Value elementOffset(RowLowering &r, Value start, int64_t stride,
                           Value e0, int64_t k) {
  OpBuilder &b = r.b;
  Value e = arith::AddIOp::create(b, r.loc, e0,
                                  arith::ConstantIndexOp::create(b, r.loc, k));
  Value s = arith::MulIOp::create(
      b, r.loc, e, arith::ConstantIndexOp::create(b, r.loc, stride));
  Value off = arith::AddIOp::create(b, r.loc, start, s);
  return arith::IndexCastOp::create(b, r.loc, b.getI64Type(), off);
}

static Value inRow(RowLowering &r, Value e0, int64_t k) {
  Value e = arith::AddIOp::create(
      r.b, r.loc, e0, arith::ConstantIndexOp::create(r.b, r.loc, k));
  return arith::CmpIOp::create(r.b, r.loc, arith::CmpIPredicate::ult, e,
                               r.length);
}

Value RowLowering::loadChunk(LoadOp op, Chunk &c) {
  Type elem = getTensorElementType(op.getSource().getType());
  auto vt = mlir::VectorType::get({vec}, elem);
  int64_t w = op.getVectorWidth().value_or(1);
  Value ptr = base.lookup(op.getSource());
  Value start = map.lookup(op.getStart());
  bool invariant = !isWritten(op.getSource());

  auto load = [&](Value offset, Type t, int64_t align) -> Value {
    auto l = LLVM::LoadOp::create(b, loc, t, gep(ptr, offset, elem), align,
                                  /*isVolatile=*/false,
                                  /*isNonTemporal=*/false, invariant);
    return l.getResult();
  };
  auto fullPath = [&]() -> Value {
    if (w == vec)
      return load(elementOffset(*this, start, op.getStride(), c.e0, 0), vt,
                  w * bytesOf(elem));
    Value acc = arith::ConstantOp::create(b, loc, vt, b.getZeroAttr(vt));
    for (int64_t k = 0; k < vec; k += w) {
      Value off = elementOffset(*this, start, op.getStride(), c.e0, k);
      if (w == 1) {
        acc = vector::InsertOp::create(b, loc, load(off, elem, bytesOf(elem)),
                                       acc, k);
      } else {
        Value piece =
            load(off, mlir::VectorType::get({w}, elem), w * bytesOf(elem));
        for (int64_t i = 0; i < w; ++i)
          acc = vector::InsertOp::create(
              b, loc, vector::ExtractOp::create(b, loc, piece, i), acc, k + i);
      }
    }
    return acc;
  };
  if (!c.fullCond || c.wholeOrNone)
    return checkGather(op, fullPath());

  auto ifOp = scf::IfOp::create(b, loc, TypeRange{vt}, c.fullCond, true);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  scf::YieldOp::create(b, loc, fullPath());
  b.setInsertionPointToStart(ifOp.elseBlock());
  scf::YieldOp::create(b, loc, loadElements(op, c));
  b.setInsertionPointAfter(ifOp);
  return checkGather(op, ifOp.getResult(0));
}

/// A gather index outside the table: the row reads NaN (the pointer was
/// clamped to row 0, so the load itself stayed inside the table).
Value RowLowering::checkGather(LoadOp op, Value v) {
  Value valid = gatherValid.lookup(op.getSource());
  if (!valid)
    return v;
  auto vt = cast<mlir::VectorType>(v.getType());
  auto ft = cast<FloatType>(vt.getElementType());
  auto nan = b.getFloatAttr(ft, APFloat::getNaN(ft.getFloatSemantics()));
  Value nans = arith::ConstantOp::create(
      b, loc, vt, DenseElementsAttr::get(vt, cast<Attribute>(nan)));
  return arith::SelectOp::create(b, loc, valid, v, nans);
}

/// One element at a time, each only if it lies inside the row (0 outside).
Value RowLowering::loadElements(LoadOp op, Chunk &c) {
  Type elem = getTensorElementType(op.getSource().getType());
  auto vt = mlir::VectorType::get({vec}, elem);
  Value ptr = base.lookup(op.getSource());
  Value start = map.lookup(op.getStart());
  bool invariant = !isWritten(op.getSource());
  Value acc = arith::ConstantOp::create(b, loc, vt, b.getZeroAttr(vt));
  for (int64_t k = 0; k < vec; ++k) {
    auto one =
        scf::IfOp::create(b, loc, TypeRange{elem}, inRow(*this, c.e0, k), true);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(one.thenBlock());
    Value off = elementOffset(*this, start, op.getStride(), c.e0, k);
    scf::YieldOp::create(b, loc,
                         LLVM::LoadOp::create(b, loc, elem, gep(ptr, off, elem),
                                              bytesOf(elem), false, false,
                                              invariant)
                             .getResult());
    b.setInsertionPointToStart(one.elseBlock());
    scf::YieldOp::create(
        b, loc,
        arith::ConstantOp::create(b, loc, elem, b.getZeroAttr(elem))
            .getResult());
    b.setInsertionPointAfter(one);
    acc = vector::InsertOp::create(b, loc, one.getResult(0), acc, k);
  }
  return acc;
}

/// Elements [start + 2*e0, start + 2*(e0 + vector)) of the row, the span an
/// even/odd pair of views covers, in accesses of the pair's vector_width.
Value RowLowering::loadSpan(LoadOp even, Chunk &c) {
  Type elem = getTensorElementType(even.getSource().getType());
  int64_t w = *even.getVectorWidth(), n = 2 * vec;
  auto vt = mlir::VectorType::get({n}, elem);
  Value ptr = base.lookup(even.getSource());
  Value first =
      arith::AddIOp::create(b, loc, map.lookup(even.getStart()),
                            arith::MulIOp::create(b, loc, c.e0, cIndex(2)));
  bool invariant = !isWritten(even.getSource());
  Value acc = arith::ConstantOp::create(b, loc, vt, b.getZeroAttr(vt));
  for (int64_t k = 0; k < n; k += w) {
    Value off = toI64(arith::AddIOp::create(b, loc, first, cIndex(k)));
    Value piece = LLVM::LoadOp::create(b, loc, mlir::VectorType::get({w}, elem),
                                       gep(ptr, off, elem), w * bytesOf(elem),
                                       false, false, invariant);
    for (int64_t i = 0; i < w; ++i)
      acc = vector::InsertOp::create(
          b, loc, vector::ExtractOp::create(b, loc, piece, i), acc, k + i);
  }
  return acc;
}

std::pair<Value, Value> RowLowering::loadPair(LoadOp even, LoadOp odd,
                                              Chunk &c) {
  Type elem = getTensorElementType(even.getSource().getType());
  auto vt = mlir::VectorType::get({vec}, elem);
  auto split = [&](Value span) -> std::pair<Value, Value> {
    SmallVector<int64_t> evens, odds;
    for (int64_t i = 0; i < vec; ++i) {
      evens.push_back(2 * i);
      odds.push_back(2 * i + 1);
    }
    return {vector::ShuffleOp::create(b, loc, span, span, evens),
            vector::ShuffleOp::create(b, loc, span, span, odds)};
  };
  std::pair<Value, Value> r;
  if (!c.fullCond || c.wholeOrNone) {
    r = split(loadSpan(even, c));
  } else {
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{vt, vt}, c.fullCond, true);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    auto [e, o] = split(loadSpan(even, c));
    scf::YieldOp::create(b, loc, ValueRange{e, o});
    b.setInsertionPointToStart(ifOp.elseBlock());
    Value ee = loadElements(even, c);
    Value oo = loadElements(odd, c);
    scf::YieldOp::create(b, loc, ValueRange{ee, oo});
    b.setInsertionPointAfter(ifOp);
    r = {ifOp.getResult(0), ifOp.getResult(1)};
  }
  return {checkGather(even, r.first), checkGather(odd, r.second)};
}

void RowLowering::storeChunk(StoreOp op, Value v, Chunk &c) {
  v = storable(b, loc, v);
  Type elem = getElementTypeOrSelf(v.getType());
  int64_t w = op.getVectorWidth().value_or(1);
  Value ptr = base.lookup(op.getDest());
  Value start = map.lookup(op.getStart());

  OpBuilder::InsertionGuard g(b);
  auto valid = scf::IfOp::create(b, loc, TypeRange{}, rowValid, false);
  b.setInsertionPoint(valid.thenBlock()->getTerminator());
  if (std::optional<int64_t> group = op.getGroup()) {
    // One element a group, from the chunk that starts it (groups are whole
    // chunks, checkGroupLanes): element 0 to element e0 / group, times the
    // pitch where the store has one.
    Value first = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::RemUIOp::create(b, loc, c.e0, cIndex(*group)), cIndex(0));
    if (c.fullCond)
      first = arith::AndIOp::create(b, loc, first, c.fullCond);
    auto starts = scf::IfOp::create(b, loc, TypeRange{}, first, false);
    b.setInsertionPoint(starts.thenBlock()->getTerminator());
    Value g = arith::DivUIOp::create(b, loc, c.e0, cIndex(*group));
    if (Value pitch = op.getPitch())
      g = arith::MulIOp::create(b, loc, g, map.lookup(pitch));
    Value off = elementOffset(*this, start, 1, g, 0);
    LLVM::StoreOp::create(b, loc, vector::ExtractOp::create(b, loc, v, 0),
                          gep(ptr, off, elem), bytesOf(elem));
    return;
  }
  auto fullPath = [&]() {
    for (int64_t k = 0; k < vec; k += w) {
      Value off = elementOffset(*this, start, op.getStride(), c.e0, k);
      Value piece = w == vec ? v
                    : w == 1
                        ? (Value)vector::ExtractOp::create(b, loc, v, k)
                        : (Value)vector::ShuffleOp::create(
                              b, loc, v, v,
                              llvm::to_vector(llvm::seq<int64_t>(k, k + w)));
      LLVM::StoreOp::create(b, loc, piece, gep(ptr, off, elem),
                            w * bytesOf(elem));
    }
  };
  if (!c.fullCond)
    return fullPath();
  auto ifOp =
      scf::IfOp::create(b, loc, TypeRange{}, c.fullCond, !c.wholeOrNone);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  fullPath();
  if (c.wholeOrNone)
    return;
  b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
  storeElements(op, v, c);
}

/// One element at a time, each only if it lies inside the row. `v` is
/// already storable.
void RowLowering::storeElements(StoreOp op, Value v, Chunk &c) {
  Type elem = getElementTypeOrSelf(v.getType());
  Value ptr = base.lookup(op.getDest());
  Value start = map.lookup(op.getStart());
  for (int64_t k = 0; k < vec; ++k) {
    auto one =
        scf::IfOp::create(b, loc, TypeRange{}, inRow(*this, c.e0, k), false);
    OpBuilder::InsertionGuard g(b);
    b.setInsertionPoint(one.thenBlock()->getTerminator());
    Value off = elementOffset(*this, start, op.getStride(), c.e0, k);
    LLVM::StoreOp::create(b, loc, vector::ExtractOp::create(b, loc, v, k),
                          gep(ptr, off, elem), bytesOf(elem));
  }
}

/// The converse of loadPair: interleaves the even and odd values and writes
/// their span with the pair's vector_width.
void RowLowering::storePair(StoreOp even, StoreOp odd, Value ve, Value vo,
                            Chunk &c) {
  ve = storable(b, loc, ve);
  vo = storable(b, loc, vo);
  Type elem = getElementTypeOrSelf(ve.getType());
  int64_t w = *even.getVectorWidth(), n = 2 * vec;
  Value ptr = base.lookup(even.getDest());
  SmallVector<int64_t> order;
  for (int64_t i = 0; i < vec; ++i) {
    order.push_back(i);
    order.push_back(vec + i);
  }
  OpBuilder::InsertionGuard g(b);
  auto valid = scf::IfOp::create(b, loc, TypeRange{}, rowValid, false);
  b.setInsertionPoint(valid.thenBlock()->getTerminator());
  auto spanStore = [&]() {
    Value span = vector::ShuffleOp::create(b, loc, ve, vo, order);
    Value first =
        arith::AddIOp::create(b, loc, map.lookup(even.getStart()),
                              arith::MulIOp::create(b, loc, c.e0, cIndex(2)));
    for (int64_t k = 0; k < n; k += w) {
      Value off = toI64(arith::AddIOp::create(b, loc, first, cIndex(k)));
      Value piece = vector::ShuffleOp::create(
          b, loc, span, span, llvm::to_vector(llvm::seq<int64_t>(k, k + w)));
      LLVM::StoreOp::create(b, loc, piece, gep(ptr, off, elem),
                            w * bytesOf(elem));
    }
  };
  if (!c.fullCond)
    return spanStore();
  auto ifOp =
      scf::IfOp::create(b, loc, TypeRange{}, c.fullCond, !c.wholeOrNone);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  spanStore();
  if (c.wholeOrNone)
    return;
  b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
  storeElements(even, ve, c);
  storeElements(odd, vo, c);
}

void RowLowering::prefetchChunk(LoadOp op, Chunk &c) {
  // A masked chunk's first element may lie past the row (and the tensor);
  // a whole-or-none chunk was moved to chunk 0 when out.
  if (c.fullCond && !c.wholeOrNone)
    return;
  Value start = map.lookup(op.getStart());
  Value ptr = base.lookup(op.getSource());
  if (!start || !ptr)
    return;
  Type elem = getTensorElementType(op.getSource().getType());
  Value off = elementOffset(*this, start, op.getStride(), c.e0, 0);
  NVVM::PrefetchOp::create(b, loc,
                           NVVM::PrefetchCacheLevelAttr::get(
                               b.getContext(), NVVM::PrefetchCacheLevel::L2),
                           /*evictPriority=*/nullptr, gep(ptr, off, elem),
                           /*predicate=*/Value(),
                           /*tensormap=*/false);
}

Value RowLowering::loadScalar(LoadOp op) {
  Type elem = getTensorElementType(op.getSource().getType());
  return LLVM::LoadOp::create(b, loc, elem, base.lookup(op.getSource()),
                              bytesOf(elem), false, false,
                              !isWritten(op.getSource()));
}

void RowLowering::storeScalar(StoreOp op, Value v) {
  v = storable(b, loc, v);
  Type elem = v.getType();
  Value first =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane, cIndex(0));
  Value cond = arith::AndIOp::create(b, loc, rowValid, first);
  if (tileIndex) // one tile writes the row's scalars
    cond = arith::AndIOp::create(b, loc, cond,
                                 arith::CmpIOp::create(b, loc,
                                                       arith::CmpIPredicate::eq,
                                                       tileIndex, cIndex(0)));
  OpBuilder::InsertionGuard g(b);
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, cond, false);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  LLVM::StoreOp::create(b, loc, v, base.lookup(op.getDest()), bytesOf(elem));
}
