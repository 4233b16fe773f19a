//===- KgenOps.cpp - Operation verifiers and formats ----------------------===//
#include "codegen/Dialect/KgenOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"

using namespace mlir;
using namespace mlir::kgen;

#include "codegen/Dialect/KgenEnums.cpp.inc"

#define GET_OP_CLASSES
#include "codegen/Dialect/KgenOps.cpp.inc"

//===----------------------------------------------------------------------===//
// KernelOp
//===----------------------------------------------------------------------===//

ParseResult KernelOp::parse(OpAsmParser &parser, OperationState &result) {
  auto buildType = [](Builder &b, ArrayRef<Type> args, ArrayRef<Type> results,
                      function_interface_impl::VariadicFlag, std::string &) {
    return b.getFunctionType(args, results);
  };
  return function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false,
      getFunctionTypeAttrName(result.name), buildType,
      getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name));
}

void KernelOp::print(OpAsmPrinter &p) {
  function_interface_impl::printFunctionOp(
      p, *this, /*isVariadic=*/false, getFunctionTypeAttrName(),
      getArgAttrsAttrName(), getResAttrsAttrName());
}

StringRef KernelOp::getArgName(unsigned i) {
  if (auto name = getArgAttrOfType<StringAttr>(i, "kgen.name"))
    return name.getValue();
  return "";
}

DomainOp KernelOp::getDomainOp() {
  for (DomainOp d : getBody().getOps<DomainOp>())
    return d;
  return {};
}

LogicalResult KernelOp::verify() {
  if (!getFunctionType().getResults().empty())
    return emitOpError("returns nothing; write results with kgen.store");
  for (auto [i, t] : llvm::enumerate(getArgumentTypes())) {
    if (!getTensorElementType(t) && !isa<FloatType, IntegerType, IndexType>(t))
      return emitOpError("argument #")
             << i << " has type " << t
             << "; expected a kgen tensor, a scalar or an index";
  }
  auto domains = getBody().getOps<DomainOp>();
  if (std::distance(domains.begin(), domains.end()) != 1)
    return emitOpError("needs exactly one kgen.domain");
  std::optional<int64_t> length =
      getConstantIntValue((*domains.begin()).getLength());
  int64_t expected = length ? *length : ShapedType::kDynamic;
  WalkResult r = walk([&](Operation *op) {
    for (Type t : op->getResultTypes()) {
      auto tt = dyn_cast<RankedTensorType>(t);
      if (!tt)
        continue;
      if (tt.getRank() != 1 || tt.getDimSize(0) != expected) {
        op->emitOpError("produces ")
            << t << " but row values of this kernel are tensor<"
            << (length ? std::to_string(*length) : std::string("?"))
            << "x...> (see kgen.domain)";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(r.wasInterrupted());
}

//===----------------------------------------------------------------------===//
// LoadOp / StoreOp
//===----------------------------------------------------------------------===//

/// Shared rules of a load's or store's view; `value` is the row or scalar.
/// Element offsets of at most this, times an element of at most 8 bytes,
/// fit the lowering's int64 address arithmetic.
static constexpr int64_t kMaxElementOffset = int64_t(1) << 60;

static LogicalResult verifyAccess(Operation *op, Type tensorType, Type value,
                                  Value start, int64_t stride,
                                  std::optional<int64_t> width) {
  bool hasStart = !!start;
  Type elem = getTensorElementType(tensorType);
  if (stride < 1)
    return op->emitOpError("stride must be >= 1, got ") << stride;
  if (width && *width < 1)
    return op->emitOpError("vector_width must be >= 1, got ") << *width;
  if (isa<ScalarsType>(tensorType)) {
    if (hasStart)
      return op->emitOpError("a !kgen.scalars tensor has one element per row "
                             "and takes no start index");
    if (value != elem)
      return op->emitOpError("value of type ")
             << value << " does not match the element type " << elem;
    return success();
  }
  if (!hasStart)
    return op->emitOpError("needs a start index into the row");
  auto tt = dyn_cast<RankedTensorType>(value);
  if (!tt || tt.getRank() != 1 || tt.getElementType() != elem)
    return op->emitOpError("row value of type ")
           << value << " must be a 1-D tensor of " << elem;
  // A constant view must lie where addresses cannot wrap.
  if (std::optional<int64_t> first = getConstantIntValue(start)) {
    __int128 last = *first;
    if (!tt.isDynamicDim(0))
      last += (__int128)(tt.getDimSize(0) - 1) * stride;
    if (*first < 0 || last >= kMaxElementOffset)
      return op->emitOpError("a view from element ")
             << *first << " (stride " << stride
             << ") is outside [0, 2^60): its byte offsets would overflow";
  }
  return success();
}

LogicalResult LoadOp::verify() {
  return verifyAccess(*this, getSource().getType(), getResult().getType(),
                      getStart(), getStride(), getVectorWidth());
}

LogicalResult StoreOp::verify() {
  if (isa<ColumnVectorType>(getDest().getType()))
    return emitOpError("cannot write a !kgen.vector: it is shared by all rows");
  if (std::optional<int64_t> g = getGroup()) {
    auto row = dyn_cast<RankedTensorType>(getValue().getType());
    if (!row || getStride() != 1)
      return emitOpError("a group store writes a row value at stride 1");
    if (!row.isDynamicDim(0) && row.getDimSize(0) % *g)
      return emitOpError("rows of ")
             << row.getDimSize(0) << " elements are not a whole number of "
             << "groups of " << *g;
  } else if (getPitch()) {
    return emitOpError("only a group store takes a pitch");
  }
  return verifyAccess(*this, getDest().getType(), getValue().getType(),
                      getStart(), getStride(), getVectorWidth());
}

LogicalResult GroupReduceOp::verify() {
  if (getKind() != ReduceKind::sum && getKind() != ReduceKind::max &&
      getKind() != ReduceKind::min)
    return emitOpError("reduces groups by sum, max or min only");
  int64_t n = getInput().getType().getDimSize(0);
  if (!ShapedType::isDynamic(n) && n % getGroup())
    return emitOpError("rows of ") << n << " elements are not a whole number "
                                   << "of groups of " << getGroup();
  return success();
}

LogicalResult BroadcastOp::verify() {
  if (getResult().getType().getElementType() != getInput().getType())
    return emitOpError("result element type ")
           << getResult().getType().getElementType()
           << " differs from the input type " << getInput().getType();
  return success();
}

//===----------------------------------------------------------------------===//
// Row maps
//===----------------------------------------------------------------------===//

static bool isKernelArgument(Value v) {
  auto a = dyn_cast<BlockArgument>(v);
  return a && isa<KernelOp>(a.getOwner()->getParentOp());
}

LogicalResult GroupOp::verify() {
  if (isa<ColumnVectorType>(getSource().getType()))
    return emitOpError("cannot group a !kgen.vector: it is shared by all rows "
                       "already");
  if (!isKernelArgument(getSource()))
    return emitOpError("source must be a kernel argument (row maps do not "
                       "nest)");
  return success();
}

LogicalResult HeadsOp::verify() {
  if (getParts().empty())
    return emitOpError("needs at least one part");
  if (getParts().size() != getCounts().size())
    return emitOpError("has ")
           << getParts().size() << " parts but " << getCounts().size()
           << " counts; give one count per part";
  if (!getPitches().empty() && getPitches().size() != getParts().size())
    return emitOpError("has ")
           << getParts().size() << " parts but " << getPitches().size()
           << " pitches; give one pitch per part or none";
  bool vectors = isa<ColumnVectorType>(getParts().front().getType());
  if (vectors && !getPitches().empty())
    return emitOpError("has pitches but its parts are vectors (each is one "
                       "sub-row)");
  if (isa<ScalarsType>(getResult().getType()) &&
      getConstantIntValue(getLength()) != std::optional<int64_t>(1))
    return emitOpError("has scalars parts, whose sub-rows are one element; "
                       "the length must be the constant 1");
  for (Value p : getParts()) {
    Type expected = getResult().getType();
    if (vectors)
      expected =
          ColumnVectorType::get(getContext(), getTensorElementType(expected));
    if (p.getType() != expected)
      return emitOpError("part of type ")
             << p.getType() << " does not fit the result type "
             << getResult().getType()
             << " (rows of rows or of vectors, scalars of scalars)";
    if (!isKernelArgument(p))
      return emitOpError("parts must be kernel arguments (row maps do not "
                         "nest)");
  }
  return success();
}

LogicalResult GatherOp::verify() {
  auto it = dyn_cast<IntegerType>(getIndex().getType().getElementType());
  if (!it || (it.getWidth() != 32 && it.getWidth() != 64))
    return emitOpError("index elements must be i32 or i64, not ")
           << getIndex().getType().getElementType();
  if (!isKernelArgument(getTable()))
    return emitOpError("table must be a kernel argument (row maps do not "
                       "nest)");
  Value idx = getIndex();
  if (auto g = idx.getDefiningOp<GroupOp>())
    idx = g.getSource();
  if (!isKernelArgument(idx))
    return emitOpError("index must be a kernel argument or its kgen.group");
  return success();
}
