//===- Builder.cpp - Graph construction and user-error checks -------------===//
#include "dsl/Builder.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace kgen {
namespace detail {

struct BuilderState {
  Kernel k;
  bool built = false;
  std::set<std::string> names;
  std::vector<int> depths; ///< Per node: operations deep (a leaf is 1).
  bool hasRows = false;    ///< Some node is a row value.

  [[noreturn]] void fail(const std::source_location &loc, const std::string &op,
                         const std::string &what) const {
    userError(SourceLoc::from(loc), k.name, op, what);
  }
  std::string lenStr(const Len &l) const { return l.str(k.dims); }
  const Node &node(int id) const { return k.nodes[id]; }

  void checkUsable(const std::source_location &loc, const std::string &op) {
    if (built)
      fail(loc, op,
           "the builder was already built; declare everything before "
           "calling build()");
  }

  void checkLenDims(const Len &l, const std::source_location &loc,
                    const std::string &op) {
    for (auto [d, c] : l.terms)
      if (d < 0 || d >= (int)k.dims.size())
        fail(loc, op,
             "a length uses a dim of another kernel; use dims "
             "declared with this builder's dim()");
  }

  void declareName(const std::string &name, const std::source_location &loc,
                   const std::string &op) {
    if (name.empty())
      fail(loc, op, "names must not be empty");
    if (!names.insert(name).second)
      fail(loc, op,
           fmt::format("the name '{}' is already declared in this kernel; "
                       "give each dim, tensor and scalar its own name",
                       name));
  }

  /// Appends a node made by `op` at n.loc, within kMaxExpressionDepth and
  /// kMaxKernelNodes.
  int add(Node n, const std::string &op) {
    int depth = 1;
    for (int o : n.operands)
      depth = std::max(depth, depths[o] + 1);
    if (depth > kMaxExpressionDepth)
      userError(n.loc, k.name, op,
                fmt::format("the expression is {} operations deep, past {}, "
                            "the deepest kgen compiles; combine terms "
                            "pairwise (a balanced tree) rather than in a "
                            "chain, or split the op into several kernels",
                            depth, kMaxExpressionDepth));
    if (k.nodes.size() >= (size_t)kMaxKernelNodes)
      userError(n.loc, k.name, op,
                fmt::format("the kernel would have more than {} operations, "
                            "the most kgen compiles; split the op into "
                            "several kernels",
                            kMaxKernelNodes));
    depths.push_back(depth);
    hasRows |= n.isRow;
    k.nodes.push_back(std::move(n));
    return (int)k.nodes.size() - 1;
  }

  /// Records the domain on first use; later rows must have the same length.
  void unifyDomain(const Len &len, const std::source_location &loc,
                   const std::string &op) {
    if (!hasRows) {
      k.domain = len;
      return;
    }
    if (k.domain != len)
      fail(loc, op,
           fmt::format("a row of length {} meets rows of length {}; every "
                       "row value of a kernel has one length. Take a slice() "
                       "of the longer tensor to match",
                       lenStr(len), lenStr(k.domain)));
  }
};

} // namespace detail

using detail::BuilderState;

namespace {

std::string dtypeStr(DType t) { return std::string(name(t)); }

/// The length of the row a row program sees: a sub-row for heads().
Len viewLength(const TensorDecl &t) {
  return t.map.subLength != Len(0) ? t.map.subLength : t.rowLength;
}

/// Marks `t` and the other tensors of its heads() view.
void markAccess(BuilderState &s, int t, bool write) {
  for (int i = t; i >= 0; i = s.k.tensors[i].map.next)
    (write ? s.k.tensors[i].isWritten : s.k.tensors[i].isRead) = true;
}

int loadPerRow(BuilderState &s, int tensor, const std::source_location &loc,
               const std::string &op) {
  const TensorDecl &t = s.k.tensors[tensor];
  if (!t.isInput)
    s.fail(loc, op,
           fmt::format("'{}' is an output; outputs cannot be read. Reuse the "
                       "Expr that was written to it",
                       t.name));
  markAccess(s, tensor, false);
  Node n{};
  n.kind = NodeKind::Load;
  n.dtype = t.dtype;
  n.isRow = false;
  n.isWeak = false;
  n.index = tensor;
  n.loc = SourceLoc::from(loc);
  return s.add(n, op);
}

/// True when the strided views {a + i*sa} and {b + j*sb}, i, j < n, provably
/// share no element for every value of the dims.
bool provablyDisjoint(const Len &a, int64_t sa, const Len &b, int64_t sb,
                      const Len &n) {
  if ((a + (n - 1) * sa + 1).provablyLE(b) ||
      (b + (n - 1) * sb + 1).provablyLE(a))
    return true;
  Len d = b - a;
  return sa == sb && d.isConstant() && d.constant % sa != 0;
}

/// Resolves an operand to a node id, creating nodes for tensors and numbers.
/// Numbers take `numberType` (they are weak: they do not promote).
int resolve(BuilderState &s, const Operand &o, DType numberType,
            const std::string &op) {
  if (o.isNumber) {
    Node n{};
    n.kind = NodeKind::Const;
    n.dtype = numberType;
    n.isRow = false;
    n.isWeak = true;
    n.constant = o.number;
    n.loc = SourceLoc::from(o.loc);
    // Range first: casting NaN, an infinity or 2^63 to int64 is undefined.
    if (isInt(numberType) &&
        !(std::isfinite(o.number) && o.number >= -0x1p63 && o.number < 0x1p63 &&
          o.number == (double)(int64_t)o.number))
      s.fail(o.loc, op,
             fmt::format("the literal {} is not an integer but is combined "
                         "with an integer value; cast that value to f32 first",
                         o.number));
    return s.add(n, op);
  }
  if (o.isTensor) {
    const TensorDecl &t = s.k.tensors[o.tensor.index];
    if (t.layout == Layout::RowScalar)
      return loadPerRow(s, o.tensor.index, o.loc, op);
    return Tensor(o.tensor).slice(0, viewLength(t), 1, o.loc).id;
  }
  if (!o.expr.state)
    s.fail(o.loc, op,
           "an operand is an empty Expr (declared but never "
           "assigned)");
  return o.expr.id;
}

BuilderState &stateOf(std::initializer_list<const Operand *> ops,
                      const std::string &op) {
  BuilderState *found = nullptr;
  std::source_location loc = (*ops.begin())->loc;
  for (const Operand *o : ops) {
    BuilderState *s = o->isTensor   ? o->tensor.state.get()
                      : o->isNumber ? nullptr
                                    : o->expr.state.get();
    if (!o->isNumber && !s)
      throw UserError(SourceLoc::from(o->loc),
                      fmt::format("{}: error: {}: an operand is an empty Expr "
                                  "(declared but never assigned)",
                                  SourceLoc::from(o->loc).str(), op));
    if (s && found && s != found)
      found->fail(o->loc, op,
                  fmt::format("an operand belongs to kernel '{}'; values of "
                              "different kernels cannot be combined",
                              s->k.name));
    if (s)
      found = s;
  }
  if (!found)
    throw UserError(SourceLoc::from(loc),
                    fmt::format("{}: error: {}: at least one operand must be a "
                                "kgen value, not only numbers",
                                SourceLoc::from(loc).str(), op));
  found->checkUsable(loc, op);
  return *found;
}

/// The dtype of an operand before numbers are resolved (numbers: nullopt).
std::optional<DType> operandType(const BuilderState &s, const Operand &o) {
  if (o.isNumber)
    return std::nullopt;
  if (o.isTensor)
    return s.k.tensors[o.tensor.index].dtype;
  return s.node(o.expr.id).dtype;
}

bool operandWeak(const BuilderState &s, const Operand &o) {
  if (o.isNumber)
    return true;
  if (o.isTensor)
    return false;
  return s.node(o.expr.id).isWeak;
}

/// PyTorch's result_type for two operands, or a user error.
DType promote(BuilderState &s, const Operand &a, const Operand &b,
              const std::string &op) {
  std::optional<DType> ta = operandType(s, a), tb = operandType(s, b);
  for (auto [t, o] : {std::pair{ta, &a}, std::pair{tb, &b}})
    if (t == DType::F8E4M3 || t == DType::F8E5M2)
      s.fail(o->loc, op,
             fmt::format("{} values are for storage only and take part in no "
                         "arithmetic; cast them with .to(DType::F32) first",
                         dtypeStr(*t)));
  if (!ta && !tb)
    return DType::F32;
  if (!ta)
    return *tb;
  if (!tb)
    return *ta;
  if (*ta == *tb)
    return *ta;
  if (*ta == DType::Bool || *tb == DType::Bool)
    s.fail(a.loc, op,
           "a comparison result (bool) is combined with a number; use "
           "select(cond, a, b) instead");
  if (isInt(*ta) != isInt(*tb))
    s.fail(a.loc, op,
           fmt::format("cannot combine {} with {}: integer values are "
                       "indices; cast one side with .to() to make the types "
                       "agree",
                       dtypeStr(*ta), dtypeStr(*tb)));
  bool wa = operandWeak(s, a), wb = operandWeak(s, b);
  if (wa != wb)
    return wa ? *tb : *ta; // a scalar parameter does not widen a tensor
  if (isInt(*ta))
    return DType::I64;
  return DType::F32; // f32 with a narrow float, or bf16 with f16
}

int makeCast(BuilderState &s, int id, DType t, const std::source_location &loc,
             const std::string &op) {
  if (s.node(id).dtype == t)
    return id;
  Node n{};
  n.kind = NodeKind::Cast;
  n.dtype = t;
  n.isRow = s.node(id).isRow;
  n.isWeak = s.node(id).isWeak;
  n.operands = {id};
  n.loc = SourceLoc::from(loc);
  return s.add(n, op);
}

/// An operand converted to the op's dtype `t`. A weak float (literal or f32
/// parameter) meeting a bf16/f16 value stays f32, as PyTorch computes such
/// ops with the Python scalar in f32 ("opmath"), not rounded to bf16.
int operandFor(BuilderState &s, const Operand &o, DType t,
               const std::string &op) {
  bool keepF32 = isNarrowFloat(t) && operandWeak(s, o) &&
                 (o.isNumber || operandType(s, o) == DType::F32);
  int id = resolve(s, o, keepF32 ? DType::F32 : t, op);
  return keepF32 ? id : makeCast(s, id, t, o.loc, op);
}

/// Whether `root` reads an input: each node is visited once, since a shared
/// DAG (e = e + e, repeated) has exponentially many paths.
bool dependsOnInput(const BuilderState &s, int root) {
  std::vector<bool> seen(s.k.nodes.size());
  std::vector<int> work{root};
  while (!work.empty()) {
    int id = work.back();
    work.pop_back();
    if (seen[id])
      continue;
    seen[id] = true;
    const Node &n = s.node(id);
    if (n.kind == NodeKind::Load)
      return true;
    work.insert(work.end(), n.operands.begin(), n.operands.end());
  }
  return false;
}

/// Creates a node over operands promoted to `t`; rows must share the domain.
int makeElementwise(BuilderState &s, Node n, std::vector<const Operand *> ops,
                    DType t, const std::string &op) {
  bool isRow = false, isWeak = true;
  for (const Operand *o : ops) {
    int id = resolve(s, *o, t, op);
    isRow |= s.node(id).isRow;
    isWeak &= s.node(id).isWeak;
    n.operands.push_back(id);
  }
  n.isRow = isRow;
  n.isWeak = isWeak;
  n.loc = SourceLoc::from(ops.front()->loc);
  return s.add(n, op);
}

Expr binary(BinaryOp bop, const Operand &a, const Operand &b) {
  std::string op = fmt::format("'{}'", name(bop));
  BuilderState &s = stateOf({&a, &b}, op);
  DType t = promote(s, a, b, op);
  if (t == DType::Bool && !isComparison(bop) && bop != BinaryOp::Eq)
    s.fail(a.loc, op,
           "arithmetic on comparison results is not supported; "
           "use select(cond, a, b)");
  Node n{};
  n.kind = NodeKind::Binary;
  n.binary = bop;
  int ia = operandFor(s, a, t, op), ib = operandFor(s, b, t, op);
  n.dtype = isComparison(bop) ? DType::Bool : t;
  n.isRow = s.node(ia).isRow || s.node(ib).isRow;
  n.isWeak = s.node(ia).isWeak && s.node(ib).isWeak;
  n.operands = {ia, ib};
  n.loc = SourceLoc::from(a.loc);
  return Expr(a.isTensor   ? a.tensor.state
              : a.isNumber ? (b.isTensor ? b.tensor.state : b.expr.state)
                           : a.expr.state,
              s.add(n, op));
}

std::shared_ptr<BuilderState> sharedOf(const Operand &a) {
  return a.isTensor ? a.tensor.state : a.expr.state;
}

Expr unary(UnaryOp uop, const Operand &a) {
  std::string op = fmt::format("{}()", name(uop));
  BuilderState &s = stateOf({&a}, op);
  DType t = *operandType(s, a);
  bool transcendental = uop != UnaryOp::Neg && uop != UnaryOp::Abs;
  if (!isFloat(t) && (transcendental || t == DType::Bool))
    s.fail(a.loc, op,
           fmt::format("{} needs a float operand but got {}; cast it with "
                       ".to(DType::F32)",
                       op, dtypeStr(t)));
  if (t == DType::F8E4M3 || t == DType::F8E5M2)
    s.fail(a.loc, op,
           fmt::format("{} values are for storage only; cast them with "
                       ".to(DType::F32) first",
                       dtypeStr(t)));
  if (uop == UnaryOp::CeilPow2 && t != DType::F32)
    s.fail(a.loc, op,
           fmt::format("{} works on f32 bits but got {}; cast it with "
                       ".to(DType::F32)",
                       op, dtypeStr(t)));
  Node n{};
  n.kind = NodeKind::Unary;
  n.unary = uop;
  n.dtype = t;
  return Expr(sharedOf(a), makeElementwise(s, n, {&a}, t, op));
}

/// The domain over `group` (> 0), or the user's error at `loc`.
Len groupCount(BuilderState &s, int64_t group, const std::source_location &loc,
               const std::string &op) {
  if (group < 1 || group > kMaxGroupLength)
    s.fail(loc, op,
           fmt::format("a group is {} elements; groups are 1 to {} elements",
                       group, kMaxGroupLength));
  std::optional<Len> n = s.k.domain.exactDiv(group);
  if (!n)
    s.fail(loc, op,
           fmt::format("rows of {} elements are not a whole number of groups "
                       "of {} for every value of the dims; declare the row "
                       "length as a multiple of the group (groups * {})",
                       s.lenStr(s.k.domain), group, group));
  return *n;
}

Expr reduction(ReduceOp rop, const Operand &a,
               std::optional<int64_t> group = std::nullopt) {
  std::string op = fmt::format("{}()", name(rop));
  BuilderState &s = stateOf({&a}, op);
  int id = resolve(s, a, DType::F32, op);
  const Node &in = s.node(id);
  if (!in.isRow)
    s.fail(a.loc, op,
           fmt::format("{} reduces a row, but its operand is already one "
                       "value per row (a reduction result or a scalar); "
                       "apply it to a row value instead",
                       op));
  if (!isFloat(in.dtype) || in.dtype == DType::F8E4M3 ||
      in.dtype == DType::F8E5M2)
    s.fail(a.loc, op,
           fmt::format("{} needs an f32, f16 or bf16 row but got {}; cast "
                       "it with .to(DType::F32)",
                       op, dtypeStr(in.dtype)));
  if (group)
    groupCount(s, *group, a.loc, op);
  Node n{};
  n.kind = NodeKind::Reduce;
  n.reduce = rop;
  n.group = group.value_or(0);
  n.dtype = in.dtype;
  n.isRow = group.has_value();
  n.isWeak = false;
  n.operands = {id};
  n.loc = SourceLoc::from(a.loc);
  return Expr(sharedOf(a), s.add(n, op));
}

} // namespace

DType Expr::dtype() const {
  if (!state)
    throw UserError({}, "error: dtype() of an empty Expr");
  return state->node(id).dtype;
}

bool Expr::isRow() const {
  if (!state)
    throw UserError({}, "error: isRow() of an empty Expr");
  return state->node(id).isRow;
}

Expr Expr::to(DType t, std::source_location loc) const {
  if (!state)
    throw UserError(SourceLoc::from(loc),
                    SourceLoc::from(loc).str() +
                        ": error: .to() of an empty Expr (declared but never "
                        "assigned)");
  state->checkUsable(loc, ".to()");
  if (t == DType::Bool)
    state->fail(loc, ".to()",
                "bool is not a dtype values can be cast to; "
                "compare values to get a condition");
  if (state->node(id).dtype == DType::Bool)
    state->fail(loc, ".to()",
                "a comparison result cannot be cast; use select(cond, 1.0, "
                "0.0) to turn it into a number");
  return Expr(state, makeCast(*state, id, t, loc, ".to()"));
}

Expr Tensor::slice(Len start, Len length, int64_t stride,
                   std::source_location loc) const {
  if (!state)
    throw UserError(SourceLoc::from(loc),
                    SourceLoc::from(loc).str() +
                        ": error: slice() of an empty Tensor");
  BuilderState &s = *state;
  const TensorDecl &t = s.k.tensors[index];
  std::string op = fmt::format("slice() of '{}'", t.name);
  s.checkUsable(loc, op);
  s.checkLenDims(start, loc, op);
  s.checkLenDims(length, loc, op);
  if (!t.isInput)
    s.fail(loc, op,
           fmt::format("'{}' is an output; outputs cannot be read. Reuse the "
                       "Expr that was written to it",
                       t.name));
  if (t.layout == Layout::RowScalar)
    s.fail(loc, op,
           "a per-row tensor has no row to slice; use it as an operand to "
           "read its value for the row");
  if (stride < 1)
    s.fail(loc, op, fmt::format("the stride must be >= 1 but is {}", stride));
  if (!Len(0).provablyLE(start, s.k.dimMax))
    s.fail(loc, op,
           fmt::format("the start {} may be negative", s.lenStr(start)));
  if (!Len(1).provablyLE(length, s.k.dimMax))
    s.fail(loc, op,
           fmt::format("the length {} may be below 1", s.lenStr(length)));
  // The last element read is start + (length-1)*stride < rowLength.
  Len last;
  try {
    last = start + (length - 1) * stride + 1;
  } catch (const LenOverflow &) {
    s.fail(loc, op,
           fmt::format("the view's last element, {} + ({} - 1) * {}, is past "
                       "int64",
                       s.lenStr(start), s.lenStr(length), stride));
  }
  if (!last.provablyLE(viewLength(t), s.k.dimMax))
    s.fail(loc, op,
           fmt::format("elements up to {} are read but a row of '{}' has {}; "
                       "the view must lie inside the row for every dim value",
                       s.lenStr(last), t.name, s.lenStr(viewLength(t))));
  s.unifyDomain(length, loc, op);
  markAccess(s, index, false);
  Node n{};
  n.kind = NodeKind::Load;
  n.dtype = t.dtype;
  n.isRow = true;
  n.isWeak = false;
  n.index = index;
  n.start = start;
  n.stride = stride;
  n.loc = SourceLoc::from(loc);
  return Expr(state, s.add(n, op));
}

Expr Tensor::to(DType t, std::source_location loc) const {
  if (state && state->k.tensors[index].layout == Layout::RowScalar)
    return Expr(state, loadPerRow(*state, index, loc,
                                  fmt::format(".to() of '{}'", name())))
        .to(t, loc);
  return slice(0, state ? viewLength(state->k.tensors[index]) : Len(1), 1, loc)
      .to(t, loc);
}

const std::string &Tensor::name() const {
  if (!state)
    throw UserError({}, "error: name() of an empty Tensor");
  return state->k.tensors[index].name;
}

Builder::Builder(std::string name, std::source_location loc)
    : state(std::make_shared<BuilderState>()) {
  state->k.name = std::move(name);
  state->k.loc = SourceLoc::from(loc);
  if (state->k.name.empty())
    throw UserError(SourceLoc::from(loc),
                    SourceLoc::from(loc).str() +
                        ": error: Builder: a kernel needs a non-empty name");
}

Len Builder::dim(const std::string &name, std::source_location loc) {
  state->checkUsable(loc, "dim()");
  state->declareName(name, loc, "dim()");
  state->k.dims.push_back(name);
  state->k.dimMax.push_back(INT64_MAX);
  return Len::dim((int)state->k.dims.size() - 1);
}

Len Builder::dim(const std::string &name, int64_t max,
                 std::source_location loc) {
  if (max < 1)
    state->fail(loc, "dim()",
                fmt::format("dim '{}' has the bound {}; a bound must be >= 1",
                            name, max));
  Len d = dim(name, loc);
  state->k.dimMax.back() = max;
  return d;
}

static Tensor declare(BuilderState &s, std::shared_ptr<BuilderState> sp,
                      const std::string &name, DType dtype, Len len,
                      Layout layout, bool isInput,
                      const std::source_location &loc, const std::string &op,
                      RowMap map = {}) {
  s.checkUsable(loc, op);
  s.checkLenDims(len, loc, op);
  if (dtype == DType::Bool)
    s.fail(loc, op,
           "tensors cannot hold bool; store select(cond, 1, 0) "
           "in a numeric dtype");
  if (!Len(1).provablyLE(len))
    s.fail(loc, op,
           fmt::format("the row length {} may be below 1", s.lenStr(len)));
  s.declareName(name, loc, op);
  s.k.tensors.push_back(TensorDecl{name, dtype, layout, len, isInput, false,
                                   false, SourceLoc::from(loc), map});
  return Tensor(std::move(sp), (int)s.k.tensors.size() - 1);
}

Tensor Builder::input(const std::string &name, DType dtype, Len rowLength,
                      std::source_location loc) {
  return declare(*state, state, name, dtype, rowLength, Layout::Rows, true, loc,
                 fmt::format("input('{}')", name));
}

Tensor Builder::vector(const std::string &name, DType dtype, Len length,
                       std::source_location loc) {
  return declare(*state, state, name, dtype, length, Layout::Vector, true, loc,
                 fmt::format("vector('{}')", name));
}

static void checkAtLeastOne(BuilderState &s, const Len &l, const char *what,
                            const std::source_location &loc,
                            const std::string &op) {
  s.checkLenDims(l, loc, op);
  if (!Len(1).provablyLE(l))
    s.fail(loc, op, fmt::format("the {} {} may be below 1", what, s.lenStr(l)));
}

Tensor Builder::grouped(const std::string &name, DType dtype, Len rowLength,
                        Len group, std::source_location loc) {
  std::string op = fmt::format("grouped('{}')", name);
  state->checkUsable(loc, op);
  checkAtLeastOne(*state, group, "group", loc, op);
  RowMap map;
  map.group = group;
  return declare(*state, state, name, dtype, rowLength, Layout::Rows, true, loc,
                 op, map);
}

Tensor Builder::perRow(const std::string &name, DType dtype, Len group,
                       std::source_location loc) {
  std::string op = fmt::format("perRow('{}')", name);
  state->checkUsable(loc, op);
  checkAtLeastOne(*state, group, "group", loc, op);
  RowMap map;
  map.group = group;
  return declare(*state, state, name, dtype, 1, Layout::RowScalar, true, loc,
                 op, map);
}

Tensor Builder::gather(const std::string &name, DType dtype, Len rowLength,
                       const Tensor &index, Len tableRows,
                       std::source_location loc) {
  std::string op = fmt::format("gather('{}')", name);
  state->checkUsable(loc, op);
  if (index.state != state)
    state->fail(loc, op,
                "the index tensor is empty or belongs to another kernel");
  const TensorDecl &it = state->k.tensors[index.index];
  if (it.layout != Layout::RowScalar || !it.isInput ||
      (it.dtype != DType::I32 && it.dtype != DType::I64))
    state->fail(loc, op,
                fmt::format("the index '{}' must be an i32 or i64 perRow() "
                            "input (one position per row program)",
                            it.name));
  if (!isFloat(dtype))
    state->fail(loc, op,
                fmt::format("a gathered table holds floats (an index outside "
                            "the table reads NaN), not {}",
                            dtypeStr(dtype)));
  checkAtLeastOne(*state, tableRows, "table row count", loc, op);
  RowMap map;
  map.gather = index.index;
  map.tableRows = tableRows;
  Tensor t = declare(*state, state, name, dtype, rowLength, Layout::Rows, true,
                     loc, op, map);
  state->k.tensors[index.index].isRead = true;
  return t;
}

/// Undeclares tensors `first` on: a view refused part way leaves none of its
/// tensors with a map to tensors that never came.
static void dropTensorsFrom(BuilderState &s, int first) {
  for (size_t t = first; t < s.k.tensors.size(); ++t)
    s.names.erase(s.k.tensors[t].name);
  s.k.tensors.resize(first);
}

/// The tensors of heads(): one per part, whose maps chain from `head`.
static void declareParts(BuilderState &s, std::shared_ptr<BuilderState> sp,
                         const std::vector<HeadsPart> &parts, DType dtype,
                         Len length, bool isInput,
                         const std::source_location &loc, const std::string &op,
                         Len group, int head) {
  Len first = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const HeadsPart &p = parts[i];
    // Row lengths are affine in the dims: one factor must be a constant.
    Len rowLength;
    if (!length.isConstant() && !p.count.isConstant())
      s.fail(loc, op,
             fmt::format("'{}' would have rows of {} x {} elements, a product "
                         "of two dims; make the sub-row length (or the "
                         "count) a constant",
                         p.name, s.lenStr(p.count), s.lenStr(length)));
    try {
      rowLength = length.isConstant() ? p.count * length.constant
                                      : length * p.count.constant;
    } catch (const LenOverflow &) {
      s.fail(loc, op,
             fmt::format("'{}' would have rows of {} x {} elements, past "
                         "int64",
                         p.name, s.lenStr(p.count), s.lenStr(length)));
    }
    RowMap map;
    map.group = group;
    map.subLength = length;
    map.subFirst = first;
    map.subCount = p.count;
    map.subPitch = p.pitch;
    map.head = head;
    map.next = i + 1 < parts.size() ? head + (int)i + 1 : -1;
    declare(s, sp, p.name, dtype, rowLength, Layout::Rows, isInput, loc,
            fmt::format("{} part '{}'", op, p.name), map);
    first = first + p.count;
  }
}

/// A heads part's or a per-group output's pitch (0: none). One below the
/// length would overlap heads: refused here when both are constants, at
/// launch otherwise.
static void checkPitch(BuilderState &s, const HeadsPart &p, const Len &length,
                       const std::source_location &loc, const std::string &op,
                       bool heads = true) {
  if (p.pitch == Len(0))
    return;
  checkAtLeastOne(s, p.pitch, heads ? "head pitch" : "pitch", loc, op);
  // The spec and the runtime take N, a dim, or k * dim.
  if (!p.pitch.isConstant() &&
      (p.pitch.terms.size() != 1 || p.pitch.constant != 0))
    s.fail(loc, op,
           fmt::format("{} '{}' has the {} {}; a pitch is a constant, a dim or "
                       "a multiple of one",
                       heads ? "part" : "output", p.name,
                       heads ? "head pitch" : "pitch", s.lenStr(p.pitch)));
  if (p.pitch.isConstant() && length.isConstant() &&
      p.pitch.constant < length.constant)
    s.fail(loc, op,
           fmt::format("part '{}' has heads {} elements apart but {} "
                       "long; they would overlap",
                       p.name, p.pitch.constant, length.constant));
}

static Tensor declareHeads(BuilderState &s, std::shared_ptr<BuilderState> sp,
                           const std::vector<HeadsPart> &parts, DType dtype,
                           Len length, bool isInput,
                           const std::source_location &loc) {
  std::string op = isInput ? "heads()" : "outputHeads()";
  s.checkUsable(loc, op);
  if (parts.empty())
    s.fail(loc, op, "give at least one {name, count} part");
  checkAtLeastOne(s, length, "sub-row length", loc, op);
  Len group = 0;
  for (const HeadsPart &p : parts) {
    checkAtLeastOne(s, p.count, "head count", loc, op);
    checkPitch(s, p, length, loc, op);
    try {
      group = group + p.count;
    } catch (const LenOverflow &) {
      s.fail(loc, op,
             fmt::format("the total head count, {} + {}, is past int64",
                         s.lenStr(group), s.lenStr(p.count)));
    }
  }
  int head = (int)s.k.tensors.size();
  // All or nothing: when a part is refused, the parts before it go too.
  try {
    declareParts(s, sp, parts, dtype, length, isInput, loc, op, group, head);
  } catch (...) {
    dropTensorsFrom(s, head);
    throw;
  }
  return Tensor(std::move(sp), head);
}

Tensor Builder::heads(const std::vector<HeadsPart> &parts, DType dtype,
                      Len length, std::source_location loc) {
  return declareHeads(*state, state, parts, dtype, length, true, loc);
}

Tensor Builder::outputHeads(const std::vector<HeadsPart> &parts, DType dtype,
                            Len length, std::source_location loc) {
  return declareHeads(*state, state, parts, dtype, length, false, loc);
}

/// The first part of the heads() view `heads`, else a user error.
static const TensorDecl &headsView(BuilderState &s,
                                   const std::shared_ptr<BuilderState> &sp,
                                   const Tensor &heads,
                                   const std::source_location &loc,
                                   const std::string &op) {
  s.checkUsable(loc, op);
  if (heads.state != sp)
    s.fail(loc, op, "the heads tensor is empty or belongs to another kernel");
  const TensorDecl &h = s.k.tensors[heads.index];
  if (h.layout != Layout::Rows || h.map.subLength == Len(0) ||
      h.map.head != heads.index)
    s.fail(loc, op,
           fmt::format("'{}' is not a heads() view (the first part of one)",
                       h.name));
  return h;
}

Tensor Builder::partVectors(const Tensor &heads,
                            const std::vector<std::string> &names, DType dtype,
                            std::source_location loc) {
  BuilderState &s = *state;
  std::string op = "partVectors()";
  const TensorDecl &h = headsView(s, state, heads, loc, op);
  std::vector<int> parts;
  for (int t = heads.index; t >= 0; t = s.k.tensors[t].map.next)
    parts.push_back(t);
  if (names.size() != parts.size())
    s.fail(loc, op,
           fmt::format("'{}' has {} parts but {} names were given; give one "
                       "vector name per part",
                       h.name, parts.size(), names.size()));
  int head = (int)s.k.tensors.size();
  try {
    for (size_t i = 0; i < parts.size(); ++i) {
      RowMap map = s.k.tensors[parts[i]].map;
      map.subPitch = 0;
      map.head = head;
      map.next = i + 1 < parts.size() ? head + (int)i + 1 : -1;
      declare(s, state, names[i], dtype, map.subLength, Layout::Vector, true,
              loc, fmt::format("{} vector '{}'", op, names[i]), map);
    }
  } catch (...) {
    dropTensorsFrom(s, head);
    throw;
  }
  return Tensor(state, head);
}

Tensor Builder::output(const std::string &name, DType dtype, Len rowLength,
                       std::source_location loc) {
  return declare(*state, state, name, dtype, rowLength, Layout::Rows, false,
                 loc, fmt::format("output('{}')", name));
}

Expr Builder::scalar(const std::string &name, DType dtype,
                     std::source_location loc) {
  std::string op = fmt::format("scalar('{}')", name);
  state->checkUsable(loc, op);
  if (dtype != DType::F32 && dtype != DType::I32 && dtype != DType::I64)
    state->fail(loc, op,
                fmt::format("scalar parameters are f32, i32 or i64, not {}",
                            dtypeStr(dtype)));
  state->declareName(name, loc, op);
  state->k.params.push_back(ParamDecl{name, dtype, SourceLoc::from(loc)});
  Node n{};
  n.kind = NodeKind::Param;
  n.dtype = dtype;
  n.isRow = false;
  n.isWeak = true;
  n.index = (int)state->k.params.size() - 1;
  n.loc = SourceLoc::from(loc);
  return Expr(state, state->add(n, op));
}

Expr Builder::scalar(const std::string &name, DType dtype, double min,
                     std::source_location loc) {
  std::string op = fmt::format("scalar('{}')", name);
  if (dtype != DType::F32)
    state->fail(loc, op,
                fmt::format("only f32 scalars take a least value, not {}",
                            dtypeStr(dtype)));
  float least = float(min); // the least f32 >= min: the same launches
  if (least < min)
    least = std::nextafter(least, INFINITY);
  if (!std::isfinite(least))
    state->fail(loc, op,
                fmt::format("the least value {} is not a finite f32", min));
  Expr e = scalar(name, dtype, loc);
  state->k.params.back().min = least;
  return e;
}

static int storedValue(BuilderState &s, const Operand &value,
                       const std::string &op, const std::source_location &loc) {
  if (value.isNumber)
    s.fail(loc, op,
           "the value written depends on no input; an output must "
           "be computed from at least one input tensor");
  int id = resolve(s, value, DType::F32, op);
  if (s.node(id).dtype == DType::Bool)
    s.fail(loc, op,
           "a comparison result cannot be stored; store "
           "select(cond, 1.0, 0.0) instead");
  if (!dependsOnInput(s, id))
    s.fail(loc, op,
           "the value written depends on no input; an output must "
           "be computed from at least one input tensor");
  return id;
}

/// output(name, value) and, with `group`, output(name, value, Groups[,
/// pitch]).
static Tensor outputOf(const std::shared_ptr<BuilderState> &state,
                       const std::string &name, const Operand &value,
                       std::optional<int64_t> group,
                       const std::source_location &loc, Len pitch = 0) {
  std::string op = fmt::format("output('{}')", name);
  BuilderState &s = stateOf({&value}, op);
  if (&s != state.get())
    s.fail(loc, op, "the value belongs to another kernel");
  int id = storedValue(s, value, op, loc);
  const Node &n = s.node(id);
  if (group && !n.isRow)
    s.fail(loc, op,
           "a per-group output takes a row value (such as a group "
           "reduction's); write a per-row scalar with output(name, value)");
  Len length = group     ? groupCount(s, *group, loc, op)
               : n.isRow ? s.k.domain
                         : Len(1);
  checkPitch(s, HeadsPart{name, length, pitch}, 1, loc, op, /*heads=*/false);
  Tensor t =
      declare(s, state, name, n.dtype, length,
              n.isRow ? Layout::Rows : Layout::RowScalar, false, loc, op);
  s.k.tensors[t.index].isWritten = true;
  s.k.tensors[t.index].pitch = pitch;
  s.k.stores.push_back(
      Store{t.index, id, 0, 1, SourceLoc::from(loc), group.value_or(0)});
  return t;
}

Tensor Builder::outputPerHead(const HeadsPart &layout, Operand value,
                              const Tensor &heads, std::source_location loc) {
  BuilderState &s = *state;
  std::string op = fmt::format("outputPerHead('{}')", layout.name);
  const TensorDecl &h = headsView(s, state, heads, loc, op);
  RowMap map;
  map.group = h.map.group; // the view's heads a token, all parts
  if (layout.count != map.group)
    s.fail(loc, op,
           fmt::format("the output has {} heads a token but '{}''s view has "
                       "{}; give the view's total",
                       s.lenStr(layout.count), h.name, s.lenStr(map.group)));
  checkPitch(s, layout, 1, loc, op);
  BuilderState &vs = stateOf({&value}, op);
  if (&vs != &s)
    s.fail(loc, op, "the value belongs to another kernel");
  int id = storedValue(s, value, op, loc);
  if (s.node(id).isRow)
    s.fail(loc, op,
           "the value is a row value; outputPerHead() writes one per-row "
           "scalar a head (a reduction's result)");
  map.subLength = 1;
  map.subFirst = 0;
  map.subCount = map.group;
  // Always a pitch (1: dense), so that the spec gives the runtime the
  // row stride the kernel takes (runtime/Spec.h, hasRowStride).
  map.subPitch = layout.pitch == Len(0) ? Len(1) : layout.pitch;
  map.head = (int)s.k.tensors.size();
  Tensor t = declare(s, state, layout.name, s.node(id).dtype, 1,
                     Layout::RowScalar, false, loc, op, map);
  s.k.tensors[t.index].isWritten = true;
  s.k.stores.push_back(Store{t.index, id, 0, 1, SourceLoc::from(loc), 0});
  return t;
}

Tensor Builder::output(const std::string &name, Operand value,
                       std::source_location loc) {
  return outputOf(state, name, value, std::nullopt, loc);
}

Tensor Builder::output(const std::string &name, Operand value, Groups groups,
                       std::source_location loc) {
  return outputOf(state, name, value, groups.length, loc);
}

Tensor Builder::output(const std::string &name, Operand value, Groups groups,
                       Len pitch, std::source_location loc) {
  if (pitch == Len(0))
    state->fail(loc, fmt::format("output('{}')", name),
                "a pitch is at least 1; give no pitch for adjacent elements");
  return outputOf(state, name, value, groups.length, loc, pitch);
}

void Builder::store(const Tensor &dst, Operand value,
                    std::source_location loc) {
  if (!dst.state)
    state->fail(loc, "store()", "the destination is an empty Tensor");
  bool isRowExpr = !value.isNumber && !value.isTensor &&
                   value.expr.state == state && value.expr.isRow();
  if (dst.state == state && isRowExpr &&
      viewLength(state->k.tensors[dst.index]) != state->k.domain)
    state->fail(
        loc, "store()",
        fmt::format("the value has {} elements but a row of '{}' has "
                    "{}; use storeSlice() to write part of a row",
                    state->lenStr(state->k.domain), dst.name(),
                    state->lenStr(viewLength(state->k.tensors[dst.index]))));
  storeSlice(dst, 0, 1, value, loc);
}

void Builder::storeSlice(const Tensor &dst, Len start, int64_t stride,
                         Operand value, std::source_location loc) {
  if (!dst.state)
    state->fail(loc, "store()", "the destination is an empty Tensor");
  std::string op = fmt::format("store into '{}'", dst.name());
  BuilderState &s = stateOf({&value}, op);
  if (dst.state.get() != state.get() || &s != state.get())
    state->fail(loc, op, "the destination or value belongs to another kernel");
  s.checkLenDims(start, loc, op);
  int id = storedValue(s, value, op, loc);
  TensorDecl &t = s.k.tensors[dst.index];
  const Node &n = s.node(id);
  if (t.layout != Layout::Rows)
    s.fail(loc, op,
           fmt::format(
               "only [rows, n] tensors take row stores; '{}' is {}", t.name,
               t.layout == Layout::RowScalar ? "a per-row tensor"
               : t.map.subLength != Len(0)   ? "one vector per heads() part"
                                             : "shared by all rows"));
  if (t.map.gather >= 0 || (t.map.group != Len(1) && t.map.subLength == Len(0)))
    s.fail(loc, op,
           fmt::format("a row of '{}' is seen by several row programs ({}); "
                       "such tensors can only be read",
                       t.name, t.map.gather >= 0 ? "gathered" : "grouped"));
  if (!n.isRow)
    s.fail(loc, op,
           "a per-row scalar cannot be written over a row; combine "
           "it with a row value first");
  if (n.dtype != t.dtype)
    s.fail(loc, op,
           fmt::format("the value is {} but '{}' holds {}; write "
                       "value.to(DType::{}) to convert explicitly",
                       dtypeStr(n.dtype), t.name, dtypeStr(t.dtype),
                       dtypeStr(t.dtype)));
  if (stride < 1)
    s.fail(loc, op, fmt::format("the stride must be >= 1 but is {}", stride));
  Len last;
  try {
    last = start + (s.k.domain - 1) * stride + 1;
  } catch (const LenOverflow &) {
    s.fail(loc, op,
           fmt::format("the last element written, {} + ({} - 1) * {}, is "
                       "past int64",
                       s.lenStr(start), s.lenStr(s.k.domain), stride));
  }
  if (!Len(0).provablyLE(start, s.k.dimMax) ||
      !last.provablyLE(viewLength(t), s.k.dimMax))
    s.fail(loc, op,
           fmt::format("elements up to {} are written but a row of '{}' has "
                       "{}",
                       s.lenStr(last), t.name, s.lenStr(viewLength(t))));
  for (const Store &st : s.k.stores)
    if (st.tensor == dst.index &&
        !provablyDisjoint(st.start, st.stride, start, stride, s.k.domain))
      s.fail(loc, op,
             fmt::format("'{}' is already written by the store at {} and the "
                         "two may write the same elements; write each "
                         "element once",
                         t.name, st.loc.str()));
  markAccess(s, dst.index, true);
  s.k.stores.push_back(
      Store{dst.index, id, start, stride, SourceLoc::from(loc)});
}

void Builder::storeConcat(const Tensor &dst, Len start,
                          const std::vector<Operand> &parts,
                          std::source_location loc) {
  if (parts.empty())
    state->fail(loc, "storeConcat()", "give at least one part to write");
  Len at = start;
  for (const Operand &p : parts) {
    storeSlice(dst, at, 1, p, loc);
    at = at + state->k.domain;
  }
}

Kernel Builder::build(std::source_location loc) {
  state->checkUsable(loc, "build()");
  if (state->k.stores.empty())
    state->fail(loc, "build()",
                "the kernel writes nothing; add an output() or a store()");
  state->built = true;
  return state->k;
}

Expr operator+(Operand a, Operand b) { return binary(BinaryOp::Add, a, b); }
Expr operator-(Operand a, Operand b) { return binary(BinaryOp::Sub, a, b); }
Expr operator*(Operand a, Operand b) { return binary(BinaryOp::Mul, a, b); }
Expr operator/(Operand a, Operand b) { return binary(BinaryOp::Div, a, b); }
Expr operator-(Operand a) { return unary(UnaryOp::Neg, a); }
Expr operator<(Operand a, Operand b) { return binary(BinaryOp::Lt, a, b); }
Expr operator<=(Operand a, Operand b) { return binary(BinaryOp::Le, a, b); }
Expr operator>(Operand a, Operand b) { return binary(BinaryOp::Gt, a, b); }
Expr operator>=(Operand a, Operand b) { return binary(BinaryOp::Ge, a, b); }
Expr operator==(Operand a, Operand b) { return binary(BinaryOp::Eq, a, b); }
Expr operator!=(Operand a, Operand b) { return binary(BinaryOp::Ne, a, b); }
Expr max(Operand a, Operand b) { return binary(BinaryOp::Max, a, b); }
Expr min(Operand a, Operand b) { return binary(BinaryOp::Min, a, b); }
Expr abs(Operand a) { return unary(UnaryOp::Abs, a); }
Expr exp(Operand a) { return unary(UnaryOp::Exp, a); }
Expr log(Operand a) { return unary(UnaryOp::Log, a); }
Expr sqrt(Operand a) { return unary(UnaryOp::Sqrt, a); }
Expr rsqrt(Operand a) { return unary(UnaryOp::Rsqrt, a); }
Expr tanh(Operand a) { return unary(UnaryOp::Tanh, a); }
Expr erf(Operand a) { return unary(UnaryOp::Erf, a); }
Expr sigmoid(Operand a) { return unary(UnaryOp::Sigmoid, a); }
Expr round(Operand a) { return unary(UnaryOp::Round, a); }
Expr ceilPow2(Operand a) { return unary(UnaryOp::CeilPow2, a); }
Expr sum(Operand a) { return reduction(ReduceOp::Sum, a); }
Expr mean(Operand a) { return reduction(ReduceOp::Mean, a); }
Expr amax(Operand a) { return reduction(ReduceOp::Max, a); }
Expr amin(Operand a) { return reduction(ReduceOp::Min, a); }
Expr sum(Operand a, Groups g) { return reduction(ReduceOp::Sum, a, g.length); }
Expr mean(Operand a, Groups g) {
  return reduction(ReduceOp::Mean, a, g.length);
}
Expr amax(Operand a, Groups g) { return reduction(ReduceOp::Max, a, g.length); }
Expr amin(Operand a, Groups g) { return reduction(ReduceOp::Min, a, g.length); }

Expr select(Operand cond, Operand a, Operand b) {
  std::string op = "select()";
  BuilderState &s = stateOf({&cond, &a, &b}, op);
  if (cond.isNumber || operandType(s, cond) != DType::Bool)
    s.fail(cond.loc, op, "the condition must be a comparison such as (x > 0)");
  DType t = promote(s, a, b, op);
  int ic = resolve(s, cond, DType::Bool, op);
  int ia = operandFor(s, a, t, op), ib = operandFor(s, b, t, op);
  Node n{};
  n.kind = NodeKind::Select;
  n.dtype = t;
  n.operands = {ic, ia, ib};
  n.isRow = s.node(ic).isRow || s.node(ia).isRow || s.node(ib).isRow;
  n.isWeak = s.node(ia).isWeak && s.node(ib).isWeak && s.node(ic).isWeak;
  n.loc = SourceLoc::from(cond.loc);
  return Expr(sharedOf(cond), s.add(n, op));
}

} // namespace kgen
