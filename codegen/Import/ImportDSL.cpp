//===- ImportDSL.cpp - DSL graph to the kgen dialect ----------------------===//
#include "codegen/Import/ImportDSL.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kgen;
namespace dsl = ::kgen;

Type mlir::kgen::toMLIRType(MLIRContext *ctx, dsl::DType t) {
  switch (t) {
  case dsl::DType::F32:
    return Float32Type::get(ctx);
  case dsl::DType::F16:
    return Float16Type::get(ctx);
  case dsl::DType::BF16:
    return BFloat16Type::get(ctx);
  case dsl::DType::F8E4M3:
    return Float8E4M3FNType::get(ctx);
  case dsl::DType::F8E5M2:
    return Float8E5M2Type::get(ctx);
  case dsl::DType::I32:
    return IntegerType::get(ctx, 32);
  case dsl::DType::I64:
    return IntegerType::get(ctx, 64);
  case dsl::DType::I8:
    return IntegerType::get(ctx, 8);
  case dsl::DType::Bool:
    return IntegerType::get(ctx, 1);
  }
  return {};
}

Value mlir::kgen::buildCeilPow2(OpBuilder &b, Location loc, Value x,
                                function_ref<Value(Value)> splat) {
  Type i32 = b.getI32Type();
  if (auto t = dyn_cast<RankedTensorType>(x.getType()))
    i32 = t.clone(i32);
  auto c = [&](uint32_t v) {
    return splat(
        arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(int32_t(v))));
  };
  Value bits = b.createOrFold<arith::AndIOp>(
      loc, b.createOrFold<arith::BitcastOp>(loc, i32, x), c(0x7fffffff));
  Value up = b.createOrFold<arith::AndIOp>(
      loc, b.createOrFold<arith::AddIOp>(loc, bits, c(0x007fffff)),
      c(0xff800000));
  Value keep = b.createOrFold<arith::OrIOp>(
      loc,
      b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, bits, c(0)),
      b.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::uge, bits,
                                    c(0x7f800000)));
  return b.createOrFold<arith::BitcastOp>(
      loc, x.getType(), b.createOrFold<arith::SelectOp>(loc, keep, bits, up));
}

namespace {

class Importer {
public:
  Importer(OpBuilder &b, const dsl::Kernel &k)
      : b(b), k(k), loc(b.getUnknownLoc()) {}

  KernelOp run(const std::map<std::string, int64_t> &staticDims,
               StringRef symName);

private:
  Type rowOf(Type elem) { return RankedTensorType::get({domainSize}, elem); }
  Type typeOf(const dsl::Node &n) {
    Type e = toMLIRType(b.getContext(), n.dtype);
    return n.isRow ? rowOf(e) : e;
  }
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value lenValue(const dsl::Len &l);
  /// Converts v (scalar or row) to element type `to`, keeping its shape.
  Value convert(Value v, Type to);
  Value broadcastIfNeeded(Value v, bool toRow);
  Value importNode(const dsl::Node &n);
  /// The value loads and stores of tensor t use: its argument, or the row
  /// map op (kgen.group / kgen.heads / kgen.gather) over it.
  Value source(int t);
  Value compute(const dsl::Node &n, ArrayRef<Value> ops, Type computeType);
  Value ceilPow2(Value x);

  OpBuilder &b;
  const dsl::Kernel &k;
  Location loc;
  std::vector<Value> dimValues;
  std::vector<std::optional<int64_t>> known; ///< static dim values
  std::vector<Value> args;
  std::vector<Value> values;
  std::map<int, Value> sources;
  Value domainLen;
  int64_t domainSize = ShapedType::kDynamic;
};

Value Importer::lenValue(const dsl::Len &l) {
  if (std::optional<int64_t> n = l.tryEval(known))
    return index(*n);
  Value v = index(l.constant);
  for (auto [d, c] : l.terms) {
    Value term = arith::MulIOp::create(b, loc, dimValues[d], index(c));
    v = arith::AddIOp::create(b, loc, v, term);
  }
  return v;
}

static Type elementOf(Type t) {
  if (auto tt = dyn_cast<RankedTensorType>(t))
    return tt.getElementType();
  return t;
}

static Type withElement(Type shapeOf, Type elem) {
  if (auto tt = dyn_cast<RankedTensorType>(shapeOf))
    return tt.clone(elem);
  return elem;
}

Value Importer::convert(Value v, Type to) {
  Type from = elementOf(v.getType());
  if (from == to)
    return v;
  Type target = withElement(v.getType(), to);
  auto ff = dyn_cast<FloatType>(from), ft = dyn_cast<FloatType>(to);
  if (ff && ft) {
    if (ff.getWidth() == ft.getWidth()) // bf16 <-> f16 goes through f32
      return convert(convert(v, b.getF32Type()), to);
    if (ff.getWidth() < ft.getWidth())
      return arith::ExtFOp::create(b, loc, target, v);
    return arith::TruncFOp::create(b, loc, target, v);
  }
  if (!ff && !ft) {
    if (from.getIntOrFloatBitWidth() < to.getIntOrFloatBitWidth())
      return arith::ExtSIOp::create(b, loc, target, v);
    return arith::TruncIOp::create(b, loc, target, v);
  }
  if (ft)
    return arith::SIToFPOp::create(b, loc, target, v);
  // Float to int: NaN -> 0 and saturation, as the interpreter defines it;
  // a plain fptosi would be poison there.
  unsigned w = to.getIntOrFloatBitWidth();
  Value f = convert(v, b.getF32Type());
  Type f32 = withElement(v.getType(), b.getF32Type());
  auto splat = [&](Type t, TypedAttr a) -> Value {
    if (auto tt = dyn_cast<RankedTensorType>(t))
      return BroadcastOp::create(b, loc, tt,
                                 arith::ConstantOp::create(b, loc, a));
    return arith::ConstantOp::create(b, loc, a);
  };
  double lo = -std::ldexp(1.0, w - 1), hi = std::ldexp(1.0, w - 1) - 1;
  Value clamped = arith::MinimumFOp::create(
      b, loc,
      arith::MaximumFOp::create(b, loc, f, splat(f32, b.getF32FloatAttr(lo))),
      splat(f32, b.getF32FloatAttr((float)hi == (float)std::ldexp(1.0, w - 1)
                                       ? std::nextafter((float)hi, 0.0f)
                                       : (float)hi)));
  Value i = arith::FPToSIOp::create(b, loc, target, clamped);
  Value isNan = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, f, f);
  return arith::SelectOp::create(b, loc, isNan,
                                 splat(target, b.getIntegerAttr(to, 0)), i);
}

Value Importer::broadcastIfNeeded(Value v, bool toRow) {
  if (!toRow || isa<RankedTensorType>(v.getType()))
    return v;
  return BroadcastOp::create(b, loc, cast<RankedTensorType>(rowOf(v.getType())),
                             v);
}

Value Importer::ceilPow2(Value x) {
  return buildCeilPow2(b, loc, x, [&](Value c) {
    return broadcastIfNeeded(c, isa<RankedTensorType>(x.getType()));
  });
}

/// Emits the op of an elementwise node on operands already in computeType.
Value Importer::compute(const dsl::Node &n, ArrayRef<Value> ops,
                        Type computeType) {
  bool isF = isa<FloatType>(computeType);
  Type shapeT = ops.empty() ? computeType : ops[0].getType();
  auto cst = [&](double c) -> Value {
    Value s = arith::ConstantOp::create(b, loc, b.getFloatAttr(computeType, c));
    return broadcastIfNeeded(s, isa<RankedTensorType>(shapeT));
  };
  switch (n.kind) {
  case dsl::NodeKind::Unary:
    switch (n.unary) {
    case dsl::UnaryOp::Neg:
      if (!isF)
        return arith::SubIOp::create(
            b, loc,
            broadcastIfNeeded(arith::ConstantOp::create(
                                  b, loc, b.getIntegerAttr(computeType, 0)),
                              isa<RankedTensorType>(shapeT)),
            ops[0]);
      return arith::NegFOp::create(b, loc, ops[0]);
    case dsl::UnaryOp::Abs:
      if (!isF)
        return math::AbsIOp::create(b, loc, ops[0]);
      return math::AbsFOp::create(b, loc, ops[0]);
    case dsl::UnaryOp::Exp:
      return math::ExpOp::create(b, loc, ops[0]);
    case dsl::UnaryOp::Log:
      return math::LogOp::create(b, loc, ops[0]);
    case dsl::UnaryOp::Sqrt:
      return math::SqrtOp::create(b, loc, ops[0]);
    case dsl::UnaryOp::Rsqrt:
      return math::RsqrtOp::create(b, loc, ops[0]);
    case dsl::UnaryOp::Tanh:
      return math::TanhOp::create(b, loc, ops[0]);
    case dsl::UnaryOp::Erf:
      return math::ErfOp::create(b, loc, ops[0]);
    case dsl::UnaryOp::Round:
      return math::RoundEvenOp::create(b, loc, ops[0]);
    case dsl::UnaryOp::CeilPow2:
      return ceilPow2(ops[0]);
    case dsl::UnaryOp::Sigmoid: {
      Value e =
          math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, ops[0]));
      return arith::DivFOp::create(b, loc, cst(1.0),
                                   arith::AddFOp::create(b, loc, cst(1.0), e));
    }
    }
    break;
  case dsl::NodeKind::Binary: {
    Value l = ops[0], r = ops[1];
    using P = arith::CmpFPredicate;
    using PI = arith::CmpIPredicate;
    switch (n.binary) {
    case dsl::BinaryOp::Add:
      return isF ? (Value)arith::AddFOp::create(b, loc, l, r)
                 : (Value)arith::AddIOp::create(b, loc, l, r);
    case dsl::BinaryOp::Sub:
      return isF ? (Value)arith::SubFOp::create(b, loc, l, r)
                 : (Value)arith::SubIOp::create(b, loc, l, r);
    case dsl::BinaryOp::Mul:
      return isF ? (Value)arith::MulFOp::create(b, loc, l, r)
                 : (Value)arith::MulIOp::create(b, loc, l, r);
    case dsl::BinaryOp::Div: {
      if (isF)
        return arith::DivFOp::create(b, loc, l, r);
      // x / 0 = 0 (defined, as in the interpreter), never a trap.
      Value zero = broadcastIfNeeded(
          arith::ConstantOp::create(b, loc, b.getIntegerAttr(computeType, 0)),
          isa<RankedTensorType>(shapeT));
      Value one = broadcastIfNeeded(
          arith::ConstantOp::create(b, loc, b.getIntegerAttr(computeType, 1)),
          isa<RankedTensorType>(shapeT));
      Value isZero = arith::CmpIOp::create(b, loc, PI::eq, r, zero);
      Value safe = arith::SelectOp::create(b, loc, isZero, one, r);
      return arith::SelectOp::create(b, loc, isZero, zero,
                                     arith::DivSIOp::create(b, loc, l, safe));
    }
    case dsl::BinaryOp::Max:
      return isF ? (Value)arith::MaximumFOp::create(b, loc, l, r)
                 : (Value)arith::MaxSIOp::create(b, loc, l, r);
    case dsl::BinaryOp::Min:
      return isF ? (Value)arith::MinimumFOp::create(b, loc, l, r)
                 : (Value)arith::MinSIOp::create(b, loc, l, r);
    default: {
      static const P fp[] = {P::OLT, P::OLE, P::OGT, P::OGE, P::OEQ, P::UNE};
      static const PI ip[] = {PI::slt, PI::sle, PI::sgt,
                              PI::sge, PI::eq,  PI::ne};
      int c = (int)n.binary - (int)dsl::BinaryOp::Lt;
      if (isF)
        return arith::CmpFOp::create(b, loc, fp[c], l, r);
      return arith::CmpIOp::create(b, loc, ip[c], l, r);
    }
    }
  }
  case dsl::NodeKind::Select:
    return arith::SelectOp::create(b, loc, ops[0], ops[1], ops[2]);
  default:
    break;
  }
  ::kgen::internalError("importNode: not an elementwise node");
}

Value Importer::source(int t) {
  auto it = sources.find(t);
  if (it != sources.end())
    return it->second;
  const dsl::RowMap &m = k.tensors[t].map;
  Value v = args[t];
  if (m.gather >= 0) {
    v = GatherOp::create(b, loc, v.getType(), v, source(m.gather),
                         lenValue(m.tableRows));
  } else if (m.subLength != dsl::Len(0)) {
    SmallVector<Value> parts, counts, pitches;
    bool padded = false;
    for (int p = t; p >= 0; p = k.tensors[p].map.next) {
      const dsl::RowMap &pm = k.tensors[p].map;
      parts.push_back(args[p]);
      counts.push_back(lenValue(pm.subCount));
      padded |= pm.subPitch != dsl::Len(0);
      pitches.push_back(
          lenValue(pm.subPitch != dsl::Len(0) ? pm.subPitch : pm.subLength));
    }
    if (!padded)
      pitches.clear();
    // Part vectors: each row program sees its part's vector as its row.
    Type result = v.getType();
    if (auto cv = dyn_cast<ColumnVectorType>(result))
      result = RowsType::get(b.getContext(), cv.getElementType());
    v = HeadsOp::create(b, loc, result, parts, counts, pitches,
                        lenValue(m.subLength));
  } else if (m.group != dsl::Len(1)) {
    v = GroupOp::create(b, loc, v.getType(), v, lenValue(m.group));
  }
  return sources[t] = v;
}

Value Importer::importNode(const dsl::Node &n) {
  MLIRContext *ctx = b.getContext();
  Type elem = toMLIRType(ctx, n.dtype);
  switch (n.kind) {
  case dsl::NodeKind::Load: {
    const dsl::TensorDecl &t = k.tensors[n.index];
    if (t.layout == dsl::Layout::RowScalar)
      return LoadOp::create(b, loc, elem, source(n.index), Value(), n.stride,
                            IntegerAttr());
    return LoadOp::create(b, loc, rowOf(elem), source(n.index),
                          lenValue(n.start), n.stride, IntegerAttr());
  }
  case dsl::NodeKind::Param:
    return args[k.tensors.size() + n.index];
  case dsl::NodeKind::Const: {
    if (isa<FloatType>(elem)) // narrow types round via f32, as the spec says
      return arith::ConstantOp::create(
          b, loc, b.getFloatAttr(elem, (double)(float)n.constant));
    return arith::ConstantOp::create(
        b, loc, b.getIntegerAttr(elem, (int64_t)n.constant));
  }
  case dsl::NodeKind::Cast:
    return broadcastIfNeeded(convert(values[n.operands[0]], elem), n.isRow);
  case dsl::NodeKind::Reduce: {
    Value in = convert(values[n.operands[0]], b.getF32Type());
    static const ReduceKind kinds[] = {ReduceKind::sum, ReduceKind::sum,
                                       ReduceKind::max, ReduceKind::min};
    if (n.group > 0) {
      Value r = GroupReduceOp::create(b, loc, in.getType(),
                                      kinds[(int)n.reduce], in, n.group);
      if (n.reduce == dsl::ReduceOp::Mean)
        r = arith::DivFOp::create(
            b, loc, r,
            BroadcastOp::create(
                b, loc, cast<RankedTensorType>(r.getType()),
                arith::ConstantOp::create(b, loc,
                                          b.getF32FloatAttr(double(n.group)))));
      return convert(r, elem);
    }
    Value r =
        ReduceOp::create(b, loc, b.getF32Type(), kinds[(int)n.reduce], in);
    if (n.reduce == dsl::ReduceOp::Mean) {
      Value len = arith::UIToFPOp::create(
          b, loc, b.getF32Type(),
          arith::IndexCastUIOp::create(b, loc, b.getI64Type(), domainLen));
      r = arith::DivFOp::create(b, loc, r, len);
    }
    return convert(r, elem);
  }
  default:
    break;
  }
  // Elementwise: widen narrow floats to f32, compute, round back.
  Type operandElem = toMLIRType(
      ctx, k.nodes[n.operands[n.kind == dsl::NodeKind::Select ? 1 : 0]].dtype);
  Type computeType = operandElem;
  if (isa<FloatType>(operandElem) && !operandElem.isF32())
    computeType = b.getF32Type();
  SmallVector<Value> ops;
  for (auto [i, id] : llvm::enumerate(n.operands)) {
    Value v = values[id];
    if (!(n.kind == dsl::NodeKind::Select && i == 0))
      v = convert(v, computeType);
    ops.push_back(broadcastIfNeeded(v, n.isRow));
  }
  Value r = compute(n, ops, computeType);
  if (n.dtype == dsl::DType::Bool)
    return r;
  return convert(r, elem);
}

KernelOp Importer::run(const std::map<std::string, int64_t> &staticDims,
                       StringRef symName) {
  MLIRContext *ctx = b.getContext();
  SmallVector<Type> argTypes;
  SmallVector<Attribute> argAttrs;
  auto named = [&](StringRef name) {
    return b.getDictionaryAttr(
        b.getNamedAttr("kgen.name", b.getStringAttr(name)));
  };
  for (const dsl::TensorDecl &t : k.tensors) {
    Type e = toMLIRType(ctx, t.dtype);
    switch (t.layout) {
    case dsl::Layout::Rows:
      argTypes.push_back(RowsType::get(ctx, e));
      break;
    case dsl::Layout::Vector:
      argTypes.push_back(ColumnVectorType::get(ctx, e));
      break;
    case dsl::Layout::RowScalar:
      argTypes.push_back(ScalarsType::get(ctx, e));
      break;
    }
    argAttrs.push_back(named(t.name));
  }
  for (const dsl::ParamDecl &p : k.params) {
    argTypes.push_back(toMLIRType(ctx, p.dtype));
    if (std::isfinite(p.min))
      argAttrs.push_back(b.getDictionaryAttr(
          {b.getNamedAttr("kgen.name", b.getStringAttr(p.name)),
           b.getNamedAttr(kMinAttr, b.getF32FloatAttr(p.min))}));
    else
      argAttrs.push_back(named(p.name));
  }
  SmallVector<NamedAttribute> dimAttrs;
  std::vector<int> dynamicDims;
  for (auto [i, d] : llvm::enumerate(k.dims)) {
    auto it = staticDims.find(d);
    if (it != staticDims.end()) {
      dimAttrs.push_back(b.getNamedAttr(d, b.getI64IntegerAttr(it->second)));
    } else {
      dynamicDims.push_back(i);
      argTypes.push_back(b.getIndexType());
      SmallVector<NamedAttribute> attrs = {
          b.getNamedAttr("kgen.name", b.getStringAttr(d))};
      if (i < k.dimMax.size() && k.dimMax[i] != INT64_MAX)
        attrs.push_back(
            b.getNamedAttr(kMaxAttr, b.getI64IntegerAttr(k.dimMax[i])));
      argAttrs.push_back(b.getDictionaryAttr(attrs));
    }
  }
  auto kernel =
      KernelOp::create(b, loc, symName, b.getFunctionType(argTypes, {}),
                       b.getDictionaryAttr(dimAttrs), ScheduleAttr(),
                       b.getArrayAttr(argAttrs), ArrayAttr());
  Block *body = new Block();
  kernel.getBody().push_back(body);
  for (Type t : argTypes)
    body->addArgument(t, loc);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(body);
  args.assign(body->args_begin(), body->args_end());

  size_t nextDynamic = k.tensors.size() + k.params.size();
  for (auto [i, d] : llvm::enumerate(k.dims)) {
    auto it = staticDims.find(d);
    dimValues.push_back(it != staticDims.end() ? index(it->second)
                                               : args[nextDynamic++]);
  }
  for (const std::string &d : k.dims) {
    auto it = staticDims.find(d);
    known.push_back(it == staticDims.end() ? std::nullopt
                                           : std::optional(it->second));
  }
  if (auto n = k.domain.tryEval(known))
    domainSize = *n;
  domainLen = lenValue(k.domain);
  DomainOp::create(b, loc, domainLen);

  for (const dsl::Node &n : k.nodes)
    values.push_back(importNode(n));
  for (const dsl::Store &s : k.stores) {
    const dsl::TensorDecl &t = k.tensors[s.tensor];
    Value start =
        t.layout == dsl::Layout::RowScalar ? Value() : lenValue(s.start);
    Value pitch = t.pitch == dsl::Len(0) ? Value() : lenValue(t.pitch);
    StoreOp::create(b, loc, values[s.value], source(s.tensor), start, pitch,
                    s.stride, IntegerAttr(),
                    s.group ? b.getI64IntegerAttr(s.group) : IntegerAttr());
  }
  ReturnOp::create(b, loc);
  return kernel;
}

} // namespace

KernelOp mlir::kgen::importKernel(OpBuilder &b, const dsl::Kernel &k,
                                  const std::map<std::string, int64_t> &dims,
                                  StringRef symName) {
  for (const dsl::TensorDecl &t : k.tensors)
    if (t.isRead &&
        (t.dtype == dsl::DType::F8E4M3 || t.dtype == dsl::DType::F8E5M2)) {
      emitError(b.getUnknownLoc())
          << "kernel '" << k.name << "' reads the fp8 tensor '" << t.name
          << "': the code generator writes fp8 but does not read it yet";
      return {};
    }
  // A value computed in fp8 (a cast to fp8 read back, fp8 arithmetic): the
  // lowering has no fp8 to wider conversion, so say where, at the user's line.
  for (const dsl::Node &n : k.nodes)
    for (int o : n.operands) {
      dsl::DType t = k.nodes[o].dtype;
      if (t != dsl::DType::F8E4M3 && t != dsl::DType::F8E5M2)
        continue;
      emitError(b.getUnknownLoc())
          << n.loc.str() << ": kernel '" << k.name << "' reads an "
          << dsl::name(t)
          << " value: the code generator writes fp8 but does not read it "
             "yet; compute in f32 and cast to fp8 only to store";
      return {};
    }
  for (auto [i, d] : llvm::enumerate(k.dims)) {
    auto it = dims.find(d);
    if (it != dims.end() && i < k.dimMax.size() && it->second > k.dimMax[i]) {
      emitError(b.getUnknownLoc())
          << "kernel '" << k.name << "': dim '" << d << "' = " << it->second
          << " is past its bound " << k.dimMax[i];
      return {};
    }
  }
  return Importer(b, k).run(dims, symName);
}
