//===- Graph.h - The built form of a kgen kernel ----------------*- C++ -*-===//
//
// A Kernel is the validated expression graph a Builder produces: the input of
// both the interpreter (the spec) and the code generator. It is plain data.
//
// The model (docs/design.md): a kernel runs one "row program" per row index r
// in [0, rows). Row values are vectors over one domain [0, domain); per-row
// scalars are single values. Loads read a strided view of a tensor's row r
// (or of a vector shared by all rows); stores write a row value or a per-row
// scalar back.
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_DSL_GRAPH_H
#define KGEN_DSL_GRAPH_H

#include "dsl/DType.h"
#include "dsl/Error.h"
#include "dsl/Len.h"

#include <limits>
#include <string>
#include <vector>

namespace kgen {

/// How a tensor is indexed by the row program.
enum class Layout : uint8_t {
  Rows,      ///< [rows, rowLength]: row r is read/written; a row pitch is a
             ///< run-time argument.
  Vector,    ///< [rowLength]: the same vector for every row (weights, biases).
  RowScalar, ///< [rows]: one element per row (per-row scales).
};

/// Which row of a Rows or RowScalar tensor row program p sees. The default
/// (every field at its default) is row p.
///
///  - group G: the row programs come in groups of G and program p sees
///    tensor row p / G (per-batch vectors: row / N).
///  - subLength L > 0: a tensor row holds sub-rows of L elements (heads) and
///    program p sees sub-row (p % G) - subFirst of row p / G. The tensor holds
///    sub-rows [subFirst, subFirst + subCount) of each group; `next` names the
///    tensor holding those after it (q's heads, then k's), so one row program
///    spans several tensors. Loads and stores name the first tensor (`head`).
///    subPitch > 0 spaces a tensor's sub-rows subPitch elements apart (heads
///    padded inside a row): the row stride must then be >= subCount *
///    subPitch, and subPitch >= subLength. 0: they are subLength apart.
///    A Vector tensor with sub-rows is one vector per part (partVectors()):
///    program p reads the vector of the part holding sub-row p % G.
///  - gather >= 0: the tensor row is the value, for program p, of that
///    integer RowScalar input (an index into a table such as a cos/sin
///    cache). An index outside [0, tableRows) reads a row of NaN and never
///    touches memory outside the table.
struct RowMap {
  Len group = 1;
  Len subLength = 0;
  Len subFirst = 0;
  Len subCount = 0;
  Len subPitch = 0;
  int head = -1; ///< sub-rows: the tensor holding sub-row 0 (may be itself)
  int next = -1; ///< sub-rows: the tensor holding the following sub-rows
  int gather = -1;
  Len tableRows = 0;

  bool isIdentity() const {
    return group == Len(1) && subLength == Len(0) && gather < 0;
  }
};

struct TensorDecl {
  std::string name;
  DType dtype;
  Layout layout;
  Len rowLength; ///< Elements in one row (RowScalar: 1).
  bool isInput;  ///< Declared by input()/vector(); else by output().
  bool isRead = false;
  bool isWritten = false;
  SourceLoc loc;
  RowMap map = {}; ///< Rows, RowScalar; Vector: partVectors() only.
  /// Rows written by a group store only: element i of a row lies i * pitch
  /// elements after its first (a run-time dim; 0: adjacent), so that the
  /// row stride may be 1 and the pitch >= rows (column-major scales).
  Len pitch = 0;
};

/// Whether a launch passes the tensor a row stride: rows tensors, and
/// per-row scalars spread over heads (Builder::outputPerHead), whose tokens
/// lie a stride apart as rows do.
inline bool hasRowStride(const TensorDecl &t) {
  return t.layout == Layout::Rows ||
         (t.layout == Layout::RowScalar && t.map.subLength != Len(0));
}

struct ParamDecl {
  std::string name;
  DType dtype;
  SourceLoc loc;
  /// f32 only: the least value a launch may pass (the kernel relies on it).
  double min = -std::numeric_limits<double>::infinity();
};

enum class NodeKind : uint8_t {
  Load,   ///< tensor view -> row value (or per-row scalar for RowScalar)
  Param,  ///< kernel scalar parameter
  Const,  ///< literal
  Unary,  ///< elementwise math
  Binary, ///< elementwise arithmetic / comparison
  Select, ///< cond ? a : b
  Cast,   ///< dtype conversion with round-to-nearest-even
  Reduce, ///< row value -> per-row scalar (or per run of `group` elements)
};

enum class UnaryOp : uint8_t {
  Neg,
  Abs,
  Exp,
  Log,
  Sqrt,
  Rsqrt,
  Tanh,
  Erf,
  Sigmoid,
  Round,   ///< to the nearest integer, ties to even (torch.round)
  CeilPow2 ///< the least power of two >= |x| (f32; see ceilPow2())
};
enum class BinaryOp : uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  Max,
  Min,
  Lt,
  Le,
  Gt,
  Ge,
  Eq,
  Ne
};
enum class ReduceOp : uint8_t { Sum, Mean, Max, Min };

const char *name(UnaryOp op);
const char *name(BinaryOp op);
const char *name(ReduceOp op);
bool isComparison(BinaryOp op);

struct Node {
  NodeKind kind;
  DType dtype;
  bool isRow;  ///< A value per domain element; else one per row.
  bool isWeak; ///< A parameter or literal: does not promote a tensor's dtype.
  std::vector<int> operands;
  UnaryOp unary = UnaryOp::Neg;
  BinaryOp binary = BinaryOp::Add;
  ReduceOp reduce = ReduceOp::Sum;
  double constant = 0; ///< Const
  int index = -1;      ///< Load: tensor index; Param: param index
  Len start;           ///< Load: first element of the view in the row
  int64_t stride = 1;  ///< Load: element step of the view
  /// Reduce: 0 reduces the whole row to a per-row scalar; G > 0 reduces each
  /// run of G consecutive elements, a row value whose elements are their
  /// run's result (per-group quantization scales).
  int64_t group = 0;
  SourceLoc loc;
};

/// Writes node `value` into tensor `tensor`: row values to elements
/// start + i*stride of row r, per-row scalars to element r of a RowScalar
/// (row r as the tensor's RowMap picks it). A tensor may take several stores
/// when they write disjoint elements (the two halves of a rotation).
/// A group store (group G > 0) writes element g * G of a row value to
/// element g of the row: one value per run of G, written whole.
struct Store {
  int tensor;
  int value;
  Len start;
  int64_t stride = 1;
  SourceLoc loc;
  int64_t group = 0;
};

struct Kernel {
  std::string name;
  std::vector<std::string> dims;
  /// The largest value of each dim, by dim index (INT64_MAX: no bound).
  std::vector<int64_t> dimMax;
  std::vector<TensorDecl> tensors;
  std::vector<ParamDecl> params;
  std::vector<Node> nodes; ///< Topologically ordered: operands come first.
  std::vector<Store> stores;
  Len domain; ///< Length of every row value.
  SourceLoc loc;
};

} // namespace kgen

#endif // KGEN_DSL_GRAPH_H
