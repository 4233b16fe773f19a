//===- Builder.h - The kgen embedded DSL ------------------------*- C++ -*-===//
//
// Ops are written as PyTorch-like formulas over the row being processed:
//
//   Builder b("rmsnorm");
//   Len hidden = b.dim("hidden");
//   Tensor x = b.input("x", dt, hidden);       // [rows, hidden]
//   Tensor w = b.vector("weight", dt, hidden); // [hidden], shared by all rows
//   Expr eps = b.scalar("eps", DType::F32);
//   Expr xf = x.to(DType::F32);
//   b.output("y", w * (xf * rsqrt(mean(xf * xf) + eps)).to(dt));
//   Kernel k = b.build();
//
// Every call records the caller's source line; misuse throws a UserError that
// points at it. Types follow PyTorch: bf16/f16 math is done in f32 and
// rounded to the operand dtype; a scalar parameter or literal does not widen
// a tensor's dtype; mixed float dtypes promote (bf16 + f16 -> f32).
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_DSL_BUILDER_H
#define KGEN_DSL_BUILDER_H

#include "dsl/Graph.h"

#include <memory>
#include <source_location>

namespace kgen {

/// The most operations deep an expression may be. Codegen recurses through a
/// row value's operands (kilobytes of stack a level) and its time grows faster
/// than the depth; bundled ops are at most 16 deep.
inline constexpr int kMaxExpressionDepth = 256;
/// The longest run a group reduction takes (Groups): a run lies within one
/// warp's chunks when the kernel is lowered.
inline constexpr int64_t kMaxGroupLength = 1 << 16;
/// The most nodes (operations, loads, literals) a kernel may have: compile
/// time and PTX size grow with them; bundled ops have at most 20.
inline constexpr int kMaxKernelNodes = 1 << 14;

namespace detail {
struct BuilderState;
} // namespace detail

class Tensor;

/// A value of the row program: a row (one value per domain element) or a
/// per-row scalar.
class Expr {
public:
  Expr() = default;
  DType dtype() const;
  bool isRow() const;
  /// Converts with round-to-nearest-even (PyTorch's .to(dtype)).
  Expr to(DType t,
          std::source_location loc = std::source_location::current()) const;

  // Internal.
  Expr(std::shared_ptr<detail::BuilderState> s, int id)
      : state(std::move(s)), id(id) {}
  std::shared_ptr<detail::BuilderState> state;
  int id = -1;
};

/// A declared tensor. Used as an Expr it reads the whole row (or the whole
/// vector); slice() reads a strided view of it.
class Tensor {
public:
  Tensor() = default;
  /// Elements start, start+stride, ... (length of them) of the row.
  Expr slice(Len start, Len length, int64_t stride = 1,
             std::source_location loc = std::source_location::current()) const;
  Expr to(DType t,
          std::source_location loc = std::source_location::current()) const;
  const std::string &name() const;

  // Internal.
  Tensor(std::shared_ptr<detail::BuilderState> s, int index)
      : state(std::move(s)), index(index) {}
  std::shared_ptr<detail::BuilderState> state;
  int index = -1;
};

/// An operand of a DSL function: an Expr, a whole Tensor or a number, with the
/// line it was written on.
struct Operand {
  Operand(const Expr &e,
          std::source_location l = std::source_location::current())
      : expr(e), loc(l) {}
  Operand(const Tensor &t,
          std::source_location l = std::source_location::current())
      : tensor(t), isTensor(true), loc(l) {}
  Operand(double v, std::source_location l = std::source_location::current())
      : number(v), isNumber(true), loc(l) {}
  Operand(int v, std::source_location l = std::source_location::current())
      : number(v), isNumber(true), loc(l) {}

  Expr expr;
  Tensor tensor;
  double number = 0;
  bool isTensor = false;
  bool isNumber = false;
  std::source_location loc;
};

/// One tensor of a heads() view: `count` sub-rows (heads) per row, each
/// `pitch` elements after the last (a run-time dim for heads padded inside a
/// row, checked at launch to be >= the sub-row length); 0: no padding.
struct HeadsPart {
  std::string name;
  Len count;
  Len pitch = 0;
};

/// Runs of `length` consecutive elements of a row, for group reductions and
/// per-group outputs (vLLM's per-token-group quantization, groups of 128).
struct Groups {
  int64_t length;
};

class Builder {
public:
  explicit Builder(std::string name,
                   std::source_location loc = std::source_location::current());

  /// A symbolic size. Kernels are specialized on its value when it is known
  /// at compile time, and take it as an argument otherwise.
  Len dim(const std::string &name,
          std::source_location loc = std::source_location::current());
  /// A dim no larger than `max` (>= 1). Slices may rely on the bound; a
  /// launch or a specialization past it is an error.
  Len dim(const std::string &name, int64_t max,
          std::source_location loc = std::source_location::current());
  /// A [rows, rowLength] input; row r of it is visible to row program r.
  Tensor input(const std::string &name, DType dtype, Len rowLength,
               std::source_location loc = std::source_location::current());
  /// A [length] input shared by every row (a weight or a bias).
  Tensor vector(const std::string &name, DType dtype, Len length,
                std::source_location loc = std::source_location::current());
  /// A [rows / group, rowLength] input: row program r reads row r / group
  /// (AdaLN's per-batch scale and shift, with group = tokens per batch).
  Tensor grouped(const std::string &name, DType dtype, Len rowLength, Len group,
                 std::source_location loc = std::source_location::current());
  /// A [rows / group] input of one value per row program (positions, with
  /// group = heads per token). Used as an operand it is a per-row scalar.
  Tensor perRow(const std::string &name, DType dtype, Len group = 1,
                std::source_location loc = std::source_location::current());
  /// Rows of the table `name` [tableRows, rowLength] picked by the integer
  /// per-row tensor `index`: row program r reads row index[r]. An index
  /// outside [0, tableRows) reads a row of NaN (and no memory outside the
  /// table).
  Tensor gather(const std::string &name, DType dtype, Len rowLength,
                const Tensor &index, Len tableRows,
                std::source_location loc = std::source_location::current());
  /// Tensors whose rows hold sub-rows (heads) of `length` elements, seen as
  /// one row program per head: part i is [T, count_i * length], and the
  /// row programs of token t are its heads in part order (q's, then k's), so
  /// rows = T * sum(count_i). Reads and in-place stores go to the right part.
  Tensor heads(const std::vector<HeadsPart> &parts, DType dtype, Len length,
               std::source_location loc = std::source_location::current());
  /// One [length] vector per part of the heads() view `heads`, where length
  /// is the view's sub-row length: row programs of part i read `names[i]`
  /// (QK-norm's separate q and k weights).
  Tensor
  partVectors(const Tensor &heads, const std::vector<std::string> &names,
              DType dtype,
              std::source_location loc = std::source_location::current());
  /// heads() for new outputs, written with storeSlice().
  Tensor
  outputHeads(const std::vector<HeadsPart> &parts, DType dtype, Len length,
              std::source_location loc = std::source_location::current());
  /// A new [T, count] output of the per-row scalar `value` in a kernel of
  /// the heads() view `heads` (count: its heads a token, all parts): row
  /// program (t, h) writes element t * rowStride + h * pitch, the row stride
  /// given at launch, `layout.pitch` a run-time dim (0: 1). Row stride 1 and
  /// pitch >= T make it column-major (vLLM's column-major group scales).
  Tensor
  outputPerHead(const HeadsPart &layout, Operand value, const Tensor &heads,
                std::source_location loc = std::source_location::current());
  /// A new [rows, rowLength] output written with storeSlice(); elements no
  /// store writes keep their contents.
  Tensor output(const std::string &name, DType dtype, Len rowLength,
                std::source_location loc = std::source_location::current());
  /// A scalar kernel parameter (eps, a quantization scale).
  Expr scalar(const std::string &name, DType dtype,
              std::source_location loc = std::source_location::current());
  /// An f32 scalar no less than `min` (finite): the kernel may rely on the
  /// bound (a divisor it bounds below needs no subnormal guard); a launch
  /// past it, or NaN, is an error.
  Expr scalar(const std::string &name, DType dtype, double min,
              std::source_location loc = std::source_location::current());
  /// A new output holding `value` for each row: [rows, domain] for a row
  /// value, [rows] for a per-row scalar. Its dtype is the value's.
  Tensor output(const std::string &name, Operand value,
                std::source_location loc = std::source_location::current());
  /// A new [rows, domain / groups.length] output whose element g is element
  /// g * groups.length of the row value `value`: one value per group, such
  /// as a group reduction's result.
  Tensor output(const std::string &name, Operand value, Groups groups,
                std::source_location loc = std::source_location::current());
  /// output(name, value, groups) whose element g lies g * pitch elements
  /// after the row's first: `pitch` is a run-time dim (or a constant) >= 1.
  /// Row stride 1 and pitch >= rows make it column-major (vLLM's transposed
  /// group scales).
  Tensor output(const std::string &name, Operand value, Groups groups,
                Len pitch,
                std::source_location loc = std::source_location::current());
  /// Writes `value` over the whole row of the input `dst` (in place). The
  /// row is read before it is written.
  void store(const Tensor &dst, Operand value,
             std::source_location loc = std::source_location::current());
  /// Writes `value` into a strided view of row r of `dst`. Several stores may
  /// write one tensor if they provably touch disjoint elements.
  void storeSlice(const Tensor &dst, Len start, int64_t stride, Operand value,
                  std::source_location loc = std::source_location::current());

  /// Concatenation: writes `parts` (row values) one after another into row r
  /// of `dst`, from element `start` (torch.cat along the row). Each part is
  /// one storeSlice() of the kernel's row length.
  void storeConcat(const Tensor &dst, Len start,
                   const std::vector<Operand> &parts,
                   std::source_location loc = std::source_location::current());

  /// Validates and returns the kernel. The builder must not be used after.
  Kernel build(std::source_location loc = std::source_location::current());

private:
  std::shared_ptr<detail::BuilderState> state;
};

// Elementwise math. bf16/f16 operands are computed in f32 and rounded back.
Expr operator+(Operand a, Operand b);
Expr operator-(Operand a, Operand b);
Expr operator*(Operand a, Operand b);
Expr operator/(Operand a, Operand b);
Expr operator-(Operand a);
Expr operator<(Operand a, Operand b);
Expr operator<=(Operand a, Operand b);
Expr operator>(Operand a, Operand b);
Expr operator>=(Operand a, Operand b);
Expr operator==(Operand a, Operand b);
Expr operator!=(Operand a, Operand b);
Expr max(Operand a, Operand b);
Expr min(Operand a, Operand b);
Expr select(Operand cond, Operand a, Operand b);
Expr abs(Operand a);
Expr exp(Operand a);
Expr log(Operand a);
Expr sqrt(Operand a);
Expr rsqrt(Operand a);
Expr tanh(Operand a);
Expr erf(Operand a);
Expr sigmoid(Operand a);
/// Rounds to the nearest integer, ties to even (torch.round); the result
/// keeps the operand's float dtype.
Expr round(Operand a);
/// The least power of two >= |a| of an f32 `a` (DeepGEMM's UE8M0 scales):
/// 0, infinities and NaN stay as |a|; past the largest float, infinity;
/// below the least normal float (2^-126), 2^-126. Exact.
Expr ceilPow2(Operand a);

// Reductions over the row; the result is a per-row scalar of the operand's
// dtype that broadcasts back when combined with a row.
Expr sum(Operand a);
Expr mean(Operand a);
Expr amax(Operand a);
Expr amin(Operand a);
// Reductions over each run of groups.length consecutive elements (the row's
// length a multiple of it); the result is a row value: each element is its
// run's result.
Expr sum(Operand a, Groups groups);
Expr mean(Operand a, Groups groups);
Expr amax(Operand a, Groups groups);
Expr amin(Operand a, Groups groups);

} // namespace kgen

#endif // KGEN_DSL_BUILDER_H
