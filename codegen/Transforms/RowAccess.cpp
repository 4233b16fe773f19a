//===- RowAccess.cpp - Loads and stores of chunks -------------------------===//
//
// A chunk access moves `vector_width` elements per instruction when the
// alignment analysis allowed it. A chunk that may cross the end of the row
// takes a per-element path instead, so no lane ever touches memory past the
// row (the tail is correct for any length).
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
  // A gather index outside the table: the row reads NaN (the pointer was
  // clamped to row 0, so the load itself stays inside the table).
  auto checked = [&](Value v) -> Value {
    Value valid = gatherValid.lookup(op.getSource());
    if (!valid)
      return v;
    auto nan = b.getFloatAttr(elem, APFloat::getNaN(
                                        cast<FloatType>(elem).getFloatSemantics()));
    Value nans = arith::ConstantOp::create(
        b, loc, vt, DenseElementsAttr::get(vt, cast<Attribute>(nan)));
    return arith::SelectOp::create(b, loc, valid, v, nans);
  };
  if (!c.fullCond)
    return checked(fullPath());

  auto ifOp = scf::IfOp::create(b, loc, TypeRange{vt}, c.fullCond, true);
  OpBuilder::InsertionGuard g(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  scf::YieldOp::create(b, loc, fullPath());
  b.setInsertionPointToStart(ifOp.elseBlock());
  Value acc = arith::ConstantOp::create(b, loc, vt, b.getZeroAttr(vt));
  for (int64_t k = 0; k < vec; ++k) {
    auto one =
        scf::IfOp::create(b, loc, TypeRange{elem}, inRow(*this, c.e0, k), true);
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPointToStart(one.thenBlock());
    scf::YieldOp::create(
        b, loc,
        load(elementOffset(*this, start, op.getStride(), c.e0, k), elem,
             bytesOf(elem)));
    b.setInsertionPointToStart(one.elseBlock());
    scf::YieldOp::create(
        b, loc,
        arith::ConstantOp::create(b, loc, elem, b.getZeroAttr(elem))
            .getResult());
    b.setInsertionPointAfter(one);
    acc = vector::InsertOp::create(b, loc, one.getResult(0), acc, k);
  }
  scf::YieldOp::create(b, loc, acc);
  b.setInsertionPointAfter(ifOp);
  return checked(ifOp.getResult(0));
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
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, c.fullCond, true);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  fullPath();
  b.setInsertionPoint(ifOp.elseBlock()->getTerminator());
  for (int64_t k = 0; k < vec; ++k) {
    auto one =
        scf::IfOp::create(b, loc, TypeRange{}, inRow(*this, c.e0, k), false);
    OpBuilder::InsertionGuard g2(b);
    b.setInsertionPoint(one.thenBlock()->getTerminator());
    Value off = elementOffset(*this, start, op.getStride(), c.e0, k);
    LLVM::StoreOp::create(b, loc, vector::ExtractOp::create(b, loc, v, k),
                          gep(ptr, off, elem), bytesOf(elem));
  }
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
    cond = arith::AndIOp::create(
        b, loc, cond,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tileIndex,
                              cIndex(0)));
  OpBuilder::InsertionGuard g(b);
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, cond, false);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  LLVM::StoreOp::create(b, loc, v, base.lookup(op.getDest()), bytesOf(elem));
}
