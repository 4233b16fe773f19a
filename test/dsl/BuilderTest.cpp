//===- BuilderTest.cpp - DSL construction and every user error ------------===//
// Each error test captures __LINE__ on the line of the call it checks;
// reflowing would separate them.
// clang-format off
//
// Each error test captures __LINE__ on the line of the offending call and
// checks that the message starts with "THIS_FILE:LINE: error: " and states
// the rule.
//
//===----------------------------------------------------------------------===//
#include "dsl/Builder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

using namespace kgen;
using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace {

struct Caught {
  bool thrown = false;
  std::string what;
  SourceLoc loc;
};

Caught catchUserError(const std::function<void()> &f) {
  Caught c;
  try {
    f();
  } catch (const UserError &e) {
    c.thrown = true;
    c.what = e.what();
    c.loc = e.loc();
  }
  return c;
}

std::string prefix(int line) {
  return std::string(__FILE__) + ":" + std::to_string(line) + ": error: ";
}

/// The error was thrown, points at `line` of this file and states `rule`.
void expectUserError(const Caught &c, int line, const std::string &rule) {
  ASSERT_TRUE(c.thrown) << "no UserError; expected: " << rule;
  EXPECT_THAT(c.what, StartsWith(prefix(line)));
  EXPECT_THAT(c.what, HasSubstr(rule));
  EXPECT_EQ(c.loc.file, __FILE__);
  EXPECT_EQ(c.loc.line, (unsigned)line);
}

/// A kernel with the usual declarations, to misuse.
struct Fixture {
  Builder b{"k"};
  Len h = b.dim("h");
  Tensor x = b.input("x", DType::F32, h);
  Tensor xb = b.input("xb", DType::BF16, h);
  Tensor xh = b.input("xh", DType::F16, h);
  Tensor i = b.input("i", DType::I32, h);
  Tensor q = b.input("q", DType::F8E4M3, h);
  Tensor x2 = b.input("x2", DType::F32, h * 2);
  Tensor w = b.vector("w", DType::F32, h);
  Expr eps = b.scalar("eps", DType::F32);
};

const Node &nodeOf(const Expr &e, const Kernel &k) { return k.nodes.at(e.id); }

} // namespace

//===----------------------------------------------------------------------===//
// Construction
//===----------------------------------------------------------------------===//

TEST(Builder, RmsnormGraph) {
  Builder b("rmsnorm");
  Len h = b.dim("hidden");
  Tensor x = b.input("x", DType::BF16, h);
  Tensor w = b.vector("weight", DType::BF16, h);
  Expr eps = b.scalar("eps", DType::F32);
  Expr xf = x.to(DType::F32);
  Tensor y = b.output("y", w * (xf * rsqrt(mean(xf * xf) + eps)).to(DType::BF16));
  Kernel k = b.build();

  EXPECT_EQ(k.name, "rmsnorm");
  EXPECT_EQ(k.dims, std::vector<std::string>{"hidden"});
  EXPECT_EQ(k.domain, h);
  ASSERT_EQ(k.tensors.size(), 3u);
  EXPECT_EQ(k.tensors[0].name, "x");
  EXPECT_EQ(k.tensors[0].layout, Layout::Rows);
  EXPECT_TRUE(k.tensors[0].isInput);
  EXPECT_TRUE(k.tensors[0].isRead);
  EXPECT_FALSE(k.tensors[0].isWritten);
  EXPECT_EQ(k.tensors[1].layout, Layout::Vector);
  EXPECT_EQ(k.tensors[1].dtype, DType::BF16);
  EXPECT_EQ(k.tensors[2].name, "y");
  EXPECT_EQ(y.name(), "y");
  EXPECT_EQ(k.tensors[2].dtype, DType::BF16);
  EXPECT_EQ(k.tensors[2].layout, Layout::Rows);
  EXPECT_EQ(k.tensors[2].rowLength, h);
  EXPECT_FALSE(k.tensors[2].isInput);
  EXPECT_TRUE(k.tensors[2].isWritten);
  ASSERT_EQ(k.params.size(), 1u);
  EXPECT_EQ(k.params[0].name, "eps");

  // Load x, Param eps, Cast f32, Mul, Reduce mean, Add, Rsqrt, Mul, Cast bf16,
  // Load w, Mul. (The order of w's load follows the evaluation of operator*'s
  // operands, so only the multiset and the final structure are checked.)
  int loads = 0, casts = 0, reduces = 0, rsqrts = 0, muls = 0, adds = 0;
  for (const Node &n : k.nodes) {
    loads += n.kind == NodeKind::Load;
    casts += n.kind == NodeKind::Cast;
    reduces += n.kind == NodeKind::Reduce;
    rsqrts += n.kind == NodeKind::Unary && n.unary == UnaryOp::Rsqrt;
    muls += n.kind == NodeKind::Binary && n.binary == BinaryOp::Mul;
    adds += n.kind == NodeKind::Binary && n.binary == BinaryOp::Add;
  }
  EXPECT_EQ(loads, 2);
  EXPECT_EQ(casts, 2);
  EXPECT_EQ(reduces, 1);
  EXPECT_EQ(rsqrts, 1);
  EXPECT_EQ(muls, 3);
  EXPECT_EQ(adds, 1);
  // Operands come first.
  for (size_t n = 0; n < k.nodes.size(); ++n)
    for (int o : k.nodes[n].operands)
      EXPECT_LT(o, (int)n);
  ASSERT_EQ(k.stores.size(), 1u);
  const Node &out = k.nodes[k.stores[0].value];
  EXPECT_EQ(k.stores[0].tensor, 2);
  EXPECT_EQ(out.kind, NodeKind::Binary);
  EXPECT_EQ(out.binary, BinaryOp::Mul);
  EXPECT_EQ(out.dtype, DType::BF16);
  EXPECT_TRUE(out.isRow);
  // The mean is a per-row f32 scalar; eps + mean is f32.
  for (const Node &n : k.nodes)
    if (n.kind == NodeKind::Reduce) {
      EXPECT_EQ(n.reduce, ReduceOp::Mean);
      EXPECT_EQ(n.dtype, DType::F32);
      EXPECT_FALSE(n.isRow);
    }
}

TEST(Builder, PromotionFollowsPyTorch) {
  Fixture f;
  Tensor y32 = f.b.input("y32", DType::F32, f.h);
  Tensor i64 = f.b.input("i64", DType::I64, f.h);
  Expr s = f.b.scalar("s", DType::F32);

  // bf16 * f32 tensor -> f32, bf16 operand cast up.
  Expr a = f.xb * y32;
  EXPECT_EQ(a.dtype(), DType::F32);
  // bf16 * f32 scalar parameter -> bf16 (a parameter does not widen).
  Expr b = f.xb * s;
  EXPECT_EQ(b.dtype(), DType::BF16);
  // bf16 + f16 -> f32.
  Expr c = f.xb + f.xh;
  EXPECT_EQ(c.dtype(), DType::F32);
  // A literal does not promote.
  Expr d = f.xb * 2.5;
  EXPECT_EQ(d.dtype(), DType::BF16);
  Expr d2 = 2 * f.xh;
  EXPECT_EQ(d2.dtype(), DType::F16);
  // Integers.
  EXPECT_EQ((f.i + i64).dtype(), DType::I64);
  EXPECT_EQ((f.i * 3).dtype(), DType::I32);
  // Parameters with literals stay weak f32.
  Expr e = f.eps * 2.0;
  EXPECT_EQ(e.dtype(), DType::F32);
  EXPECT_FALSE(e.isRow());
  // Comparisons give bool; select takes the promoted branch type.
  Expr cmp = f.xb > 0;
  EXPECT_EQ(cmp.dtype(), DType::Bool);
  EXPECT_EQ(select(cmp, f.xb, 0.0).dtype(), DType::BF16);
  EXPECT_EQ(select(cmp, f.xb, y32).dtype(), DType::F32);
  // Reductions keep the dtype and give a per-row scalar.
  Expr m = mean(f.xb);
  EXPECT_EQ(m.dtype(), DType::BF16);
  EXPECT_FALSE(m.isRow());
  EXPECT_TRUE((f.xb + m).isRow());
  // Unary math keeps the dtype.
  EXPECT_EQ(exp(f.xh).dtype(), DType::F16);

  f.b.output("out", a + c);
  Kernel k = f.b.build();
  const Node &na = nodeOf(a, k);
  ASSERT_EQ(na.operands.size(), 2u);
  const Node &castX = k.nodes[na.operands[0]];
  EXPECT_EQ(castX.kind, NodeKind::Cast);
  EXPECT_EQ(castX.dtype, DType::F32);
  EXPECT_EQ(k.nodes[castX.operands[0]].kind, NodeKind::Load);
  EXPECT_EQ(k.nodes[castX.operands[0]].dtype, DType::BF16);
  EXPECT_EQ(k.nodes[na.operands[1]].kind, NodeKind::Load);
  // The literal is a weak f32 constant: with a bf16 tensor the op keeps it
  // in f32 (PyTorch's opmath for Python scalars), and the result is bf16.
  const Node &nd = nodeOf(d, k);
  EXPECT_EQ(nd.dtype, DType::BF16);
  const Node &lit = k.nodes[nd.operands[1]];
  EXPECT_EQ(lit.kind, NodeKind::Const);
  EXPECT_EQ(lit.dtype, DType::F32);
  EXPECT_TRUE(lit.isWeak);
  EXPECT_EQ(lit.constant, 2.5);
  EXPECT_TRUE(nodeOf(e, k).isWeak);
  EXPECT_FALSE(nodeOf(b, k).isWeak);
}

TEST(Builder, SlicesAndStores) {
  Builder b("swiglu_inplace");
  Len d = b.dim("d");
  Tensor x = b.input("x", DType::F32, d * 2);
  Expr a = x.slice(0, d);
  Expr g = x.slice(d, d);
  Expr even = x.slice(1, d, 2);
  b.storeSlice(x, d, 1, a * sigmoid(a) * g + even);
  Tensor s = b.output("s", sum(a));
  Kernel k = b.build();
  EXPECT_EQ(k.domain, d);
  const Node &la = nodeOf(a, k), &lg = nodeOf(g, k), &le = nodeOf(even, k);
  EXPECT_EQ(la.kind, NodeKind::Load);
  EXPECT_EQ(la.start, Len(0));
  EXPECT_EQ(lg.start, d);
  EXPECT_EQ(lg.stride, 1);
  EXPECT_EQ(le.start, Len(1));
  EXPECT_EQ(le.stride, 2);
  ASSERT_EQ(k.stores.size(), 2u);
  EXPECT_EQ(k.stores[0].tensor, 0);
  EXPECT_EQ(k.stores[0].start, d);
  EXPECT_TRUE(k.tensors[0].isRead);
  EXPECT_TRUE(k.tensors[0].isWritten);
  EXPECT_EQ(k.tensors[s.index].layout, Layout::RowScalar);
  EXPECT_EQ(k.tensors[s.index].rowLength, Len(1));
  EXPECT_EQ(k.tensors[s.index].dtype, DType::F32);
}

//===----------------------------------------------------------------------===//
// User errors
//===----------------------------------------------------------------------===//

TEST(BuilderError, RowLengthMismatch) {
  Fixture f;
  int line = 0;
  Caught c = catchUserError([&] { line = __LINE__; (void)(f.x * f.x2); });
  expectUserError(c, line, "a row of length 2*h meets rows of length h");
  EXPECT_THAT(c.what, HasSubstr("kernel 'k', slice() of 'x2'"));
}

TEST(BuilderError, SliceOutOfRange) {
  Fixture f;
  int line = 0;
  Caught c = catchUserError([&] { line = __LINE__; (void)f.x.slice(1, f.h); });
  expectUserError(c, line, "elements up to h+1 are read but a row of 'x' has h");
  c = catchUserError([&] { line = __LINE__; (void)f.x2.slice(2, f.h, 2); });
  expectUserError(c, line, "elements up to 2*h+1 are read but a row of 'x2' has 2*h");
  EXPECT_NO_THROW((void)f.x2.slice(1, f.h, 2)); // ends exactly at the row end
  c = catchUserError([&] { line = __LINE__; (void)f.x.slice(Len(-1), 1); });
  expectUserError(c, line, "the start -1 may be negative");
  c = catchUserError([&] { line = __LINE__; (void)f.x.slice(0, 0); });
  expectUserError(c, line, "the length 0 may be below 1");
  c = catchUserError([&] { line = __LINE__; (void)f.x.slice(0, f.h - 1); });
  expectUserError(c, line, "the length h-1 may be below 1");
}

// A bounded dim lets a slice of a run-time length lie inside a fixed row
// (rope's rotary_pairs <= head_dim / 2); an unbounded one does not.
TEST(Builder, BoundedDimSlices) {
  Builder b("k");
  Len pairs = b.dim("pairs", 32);
  Tensor x = b.input("x", DType::F32, 64);
  Tensor t = b.input("t", DType::F32, pairs * 2);
  EXPECT_NO_THROW((void)x.slice(pairs, pairs));
  EXPECT_NO_THROW((void)x.slice(1, pairs, 2));
  b.storeSlice(x, 0, 1, x.slice(0, pairs) * t.slice(pairs, pairs));
  b.storeSlice(x, pairs, 1, x.slice(pairs, pairs) * t.slice(0, pairs));
  Kernel k = b.build();
  EXPECT_EQ(k.dimMax, (std::vector<int64_t>{32}));

  Builder u("u");
  Len n = u.dim("n");
  Tensor y = u.input("y", DType::F32, 64);
  int line = 0;
  Caught c = catchUserError([&] { line = __LINE__; (void)y.slice(n, n); });
  expectUserError(c, line, "elements up to 2*n are read but a row of 'y' has 64");
  Builder v("v");
  Len m = v.dim("m", 33);
  Tensor z = v.input("z", DType::F32, 64);
  c = catchUserError([&] { line = __LINE__; (void)z.slice(m, m); });
  expectUserError(c, line, "elements up to 2*m are read but a row of 'z' has 64");
  c = catchUserError([&] { line = __LINE__; (void)v.dim("w", 0); });
  expectUserError(c, line, "dim 'w' has the bound 0; a bound must be >= 1");
}

TEST(Builder, ScalarLeastValueIsTheLeastF32AtOrAboveIt) {
  Builder b("k");
  Tensor x = b.input("x", DType::F32, 8);
  Expr eps = b.scalar("eps", DType::F32, 1e-30);
  Expr plain = b.scalar("p", DType::F32);
  b.output("y", x / max(amax(x), eps) + plain);
  Kernel k = b.build();
  EXPECT_EQ(k.params[0].min, double(1e-30f)); // 1e-30f is above 1e-30
  EXPECT_GE(k.params[0].min, 1e-30);
  EXPECT_FALSE(std::isfinite(k.params[1].min));

  Builder u("u");
  int line = 0;
  Caught c = catchUserError(
      [&] { line = __LINE__; (void)u.scalar("n", DType::I32, 1); });
  expectUserError(c, line, "only f32 scalars take a least value, not i32");
  c = catchUserError(
      [&] { line = __LINE__; (void)u.scalar("e", DType::F32, 1e39); });
  expectUserError(c, line, "the least value 1e+39 is not a finite f32");
}

TEST(BuilderError, LengthsThatWouldWrap) {
  // Issue 39: start + (length - 1) * stride wrapped int64 and passed the
  // range check, and a row length of INT64_MIN passed "at least 1".
  Builder b("k");
  Tensor x = b.input("x", DType::F32, 8);
  int line = 0;
  Caught c = catchUserError([&] { line = __LINE__; (void)x.slice(0, 3, INT64_MAX); });
  expectUserError(c, line, "the view's last element, 0 + (3 - 1) * 9223372036854775807, is past int64");
  c = catchUserError([&] { line = __LINE__; (void)b.input("y", DType::F32, Len(INT64_MIN)); });
  expectUserError(c, line, "the row length -9223372036854775808 may be below 1");
}

TEST(BuilderError, HeadsCountThatWouldWrap) {
  Builder b("k");
  int line = 0;
  Caught c = catchUserError([&] { line = __LINE__; (void)b.heads({{"q", Len(INT64_MAX)}, {"k", 1}}, DType::BF16, 8); });
  expectUserError(c, line, "the total head count, 9223372036854775807 + 1, is past int64");
}

TEST(BuilderError, HeadsCloserThanTheirLength) {
  Builder b("k");
  int line = 0;
  Caught c = catchUserError([&] { line = __LINE__; (void)b.heads({{"q", 2, 3}}, DType::BF16, 4); });
  expectUserError(c, line, "part 'q' has heads 3 elements apart but 4 long; they would overlap");
  c = catchUserError([&] { line = __LINE__; (void)b.heads({{"k", 2, -1}}, DType::BF16, 4); });
  expectUserError(c, line, "the head pitch -1 may be below 1");
  Len d = b.dim("d");
  c = catchUserError([&] { line = __LINE__; (void)b.heads({{"v", 2, d + 64}}, DType::BF16, 4); });
  expectUserError(c, line, "part 'v' has the head pitch d+64; a pitch is a constant, a dim or a multiple of one");
}

TEST(BuilderError, HeadsRowLengthThatWouldWrap) {
  // count * length past int64 in the second part: a user error at the call,
  // and the first part is not left declared.
  Builder b("k");
  int line = 0;
  Caught c = catchUserError([&] { line = __LINE__; (void)b.outputHeads({{"a", 1}, {"q", Len(INT64_MAX / 4)}}, DType::BF16, 8); });
  expectUserError(c, line, "'q' would have rows of 2305843009213693951 x 8 elements, past int64");
  Tensor a = b.input("a", DType::BF16, 8); // the name is free again
  EXPECT_EQ(a.name(), "a");
}

TEST(BuilderError, StoreSliceLengthsThatWouldWrap) {
  Builder b("k");
  Tensor x = b.input("x", DType::F32, 8);
  Tensor y = b.output("y", DType::F32, 8);
  int line = 0;
  Caught c = catchUserError([&] { line = __LINE__; b.storeSlice(y, Len(INT64_MAX), 1, x * 2.0); });
  expectUserError(c, line, "the last element written, 9223372036854775807 + (8 - 1) * 1, is past int64");
}

TEST(Len, ArithmeticIsChecked) {
  EXPECT_THROW((void)(Len(INT64_MAX) + 1), LenOverflow);
  EXPECT_THROW((void)(Len(INT64_MIN) - 1), LenOverflow);
  EXPECT_THROW((void)(Len::dim(0) * INT64_MAX * 2), LenOverflow);
  EXPECT_EQ(Len::dim(0).eval({INT64_MAX}), INT64_MAX);
  EXPECT_EQ((Len::dim(0) * 2 + 1).eval({3}), 7);
  EXPECT_EQ((Len::dim(0) * 6 + 4).exactDiv(2), Len::dim(0) * 3 + 2);
  EXPECT_EQ((Len::dim(0) * 6 + 3).exactDiv(2), std::nullopt);
  EXPECT_EQ(Len::dim(0).exactDiv(0), std::nullopt);
  EXPECT_THROW((void)(Len::dim(0) * 2).eval({INT64_MAX}), LenOverflow);
  // Ordering never wraps: INT64_MIN is below 1, INT64_MAX above INT64_MIN.
  EXPECT_FALSE(Len(1).provablyLE(Len(INT64_MIN)));
  EXPECT_TRUE(Len(INT64_MIN).provablyLE(Len(INT64_MAX)));
  EXPECT_FALSE(Len(INT64_MAX).provablyLE(Len(INT64_MIN)));
  // With bounds: d0 <= 4 proves 2*d0 <= 8; d1 unbounded proves nothing,
  // and a bound too large to multiply proves nothing either.
  Len d0 = Len::dim(0), d1 = Len::dim(1);
  EXPECT_TRUE((d0 * 2).provablyLE(Len(8), {4}));
  EXPECT_FALSE((d0 * 2).provablyLE(Len(7), {4}));
  EXPECT_FALSE((d1 * 2).provablyLE(Len(8), {4}));
  EXPECT_TRUE((d0 + d1).provablyLE(d1 + 4, {4, INT64_MAX}));
  EXPECT_FALSE((d0 * INT64_MAX).provablyLE(Len(INT64_MAX), {INT64_MAX - 1}));
}

TEST(BuilderError, SliceStride) {
  Fixture f;
  int line = 0;
  Caught c = catchUserError([&] { line = __LINE__; (void)f.x.slice(0, 1, 0); });
  expectUserError(c, line, "the stride must be >= 1 but is 0");
  c = catchUserError([&] { line = __LINE__; (void)f.x.slice(0, 1, -2); });
  expectUserError(c, line, "the stride must be >= 1 but is -2");
}

TEST(BuilderError, OutputDependsOnNoInput) {
  Fixture f;
  int line = 0;
  Caught c = catchUserError([&] { line = __LINE__; f.b.output("y", f.eps * 2.0); });
  expectUserError(c, line, "the value written depends on no input");
  c = catchUserError([&] { line = __LINE__; f.b.store(f.x, f.eps + 1.0); });
  expectUserError(c, line, "the value written depends on no input");
  c = catchUserError([&] { line = __LINE__; f.b.output("y", 1.0); });
  expectUserError(c, line, "at least one operand must be a kgen value");
  // A DAG of 2^64 paths and 65 nodes: each node is checked once (issue 39).
  Expr e = f.eps;
  for (int i = 0; i < 64; ++i)
    e = e + e;
  c = catchUserError([&] { line = __LINE__; f.b.output("z", e); });
  expectUserError(c, line, "the value written depends on no input");
}

TEST(BuilderError, OnlyNumbers) {
  int line = 0;
  Caught c = catchUserError([&] { line = __LINE__; (void)kgen::max(1.0, 2.0); });
  expectUserError(c, line, "at least one operand must be a kgen value, not only numbers");
  c = catchUserError([&] { line = __LINE__; (void)kgen::exp(1.0); });
  expectUserError(c, line, "at least one operand must be a kgen value");
}

TEST(BuilderError, Fp8Arithmetic) {
  Fixture f;
  int line = 0;
  Caught c = catchUserError([&] { line = __LINE__; (void)(f.q + f.q); });
  expectUserError(c, line, "f8e4m3 values are for storage only and take part in no arithmetic");
  c = catchUserError([&] { line = __LINE__; (void)(f.q * f.eps); });
  expectUserError(c, line, "f8e4m3 values are for storage only");
  c = catchUserError([&] { line = __LINE__; (void)abs(f.q); });
  expectUserError(c, line, "f8e4m3 values are for storage only");
  c = catchUserError([&] { line = __LINE__; (void)sum(f.q); });
  expectUserError(c, line, "needs an f32, f16 or bf16 row but got f8e4m3");
  // Casting fp8 up is the way out.
  EXPECT_EQ((f.q.to(DType::F32) * 2.0).dtype(), DType::F32);
}

// Disabled: fails today. promote() returns the fp8 type before its fp8 check
// when the other operand is a literal, so `q * 2.0` builds an fp8 multiply.
// Enable once promote() checks fp8 first (see the report).
TEST(BuilderError, Fp8ArithmeticWithALiteral) {
  Fixture f;
  int line = 0;
  Caught c = catchUserError([&] { line = __LINE__; (void)(f.q * 2.0); });
  expectUserError(c, line, "f8e4m3 values are for storage only");
  c = catchUserError([&] { line = __LINE__; (void)max(f.q, 0.0); });
  expectUserError(c, line, "f8e4m3 values are for storage only");
}

TEST(BuilderError, IntWithFloat) {
  Fixture f;
  int line = 0;
  Caught c = catchUserError([&] { line = __LINE__; (void)(f.i + f.x); });
  expectUserError(c, line, "cannot combine i32 with f32: integer values are indices");
  c = catchUserError([&] { line = __LINE__; (void)(f.i * f.eps); });
  expectUserError(c, line, "cannot combine i32 with f32");
  c = catchUserError([&] { line = __LINE__; (void)(f.i + 0.5); });
  expectUserError(c, line, "the literal 0.5 is not an integer but is combined with an integer value");
  // Past int64, NaN or an infinity: refused, never cast (that is undefined).
  for (double v : {0x1p63, -0x1p64, std::nan(""), double(INFINITY)}) {
    c = catchUserError([&] { line = __LINE__; (void)(f.i + v); });
    expectUserError(c, line, "is not an integer but is combined with an integer value");
  }
  EXPECT_NO_THROW((void)(f.i + -0x1p63)); // INT64_MIN is an integer
  c = catchUserError([&] { line = __LINE__; (void)exp(f.i); });
  expectUserError(c, line, "exp() needs a float operand but got i32");
  c = catchUserError([&] { line = __LINE__; (void)ceilPow2(f.xb); });
  expectUserError(c, line, "ceilPow2() works on f32 bits but got bf16");
}

TEST(BuilderError, ComparisonResults) {
  Fixture f;
  int line = 0;
  Caught c = catchUserError([&] { line = __LINE__; (void)((f.x > 0) + f.x); });
  expectUserError(c, line, "a comparison result (bool) is combined with a number");
  c = catchUserError([&] { line = __LINE__; (void)((f.x > 0) * 2.0); });
  expectUserError(c, line, "arithmetic on comparison results is not supported");
  c = catchUserError([&] { line = __LINE__; (void)(-(f.x > 0)); });
  expectUserError(c, line, "neg() needs a float operand but got bool");
  c = catchUserError([&] { line = __LINE__; (void)(f.x > 0).to(DType::F32); });
  expectUserError(c, line, "a comparison result cannot be cast");
  c = catchUserError([&] { line = __LINE__; f.b.output("y", f.x > 0); });
  expectUserError(c, line, "a comparison result cannot be stored");
  c = catchUserError([&] { line = __LINE__; (void)select(f.x, 1.0, 0.0); });
  expectUserError(c, line, "the condition must be a comparison");
  c = catchUserError([&] { line = __LINE__; (void)select(1.0, f.x, f.x); });
  expectUserError(c, line, "the condition must be a comparison");
  c = catchUserError([&] { line = __LINE__; (void)f.x.to(DType::Bool); });
  expectUserError(c, line, "bool is not a dtype values can be cast to");
}

TEST(BuilderError, ReductionOfAPerRowScalar) {
  Fixture f;
  int line = 0;
  Caught c = catchUserError([&] { line = __LINE__; (void)sum(mean(f.x)); });
  expectUserError(c, line, "sum() reduces a row, but its operand is already one value per row");
  c = catchUserError([&] { line = __LINE__; (void)amax(f.eps); });
  expectUserError(c, line, "amax() reduces a row");
  c = catchUserError([&] { line = __LINE__; (void)mean(f.i); });
  expectUserError(c, line, "mean() needs an f32, f16 or bf16 row but got i32");
}

TEST(BuilderError, Groups) {
  Fixture f;
  int line = 0;
  Caught c = catchUserError([&] { line = __LINE__; (void)amax(f.x, Groups{2}); });
  expectUserError(c, line, "rows of h elements are not a whole number of groups of 2");
  c = catchUserError([&] { line = __LINE__; (void)sum(f.x, Groups{0}); });
  expectUserError(c, line, "a group is 0 elements; groups are 1 to 65536");
  c = catchUserError([&] { line = __LINE__; (void)f.b.output("g", f.x.to(DType::F32), Groups{2}); });
  expectUserError(c, line, "rows of h elements are not a whole number of groups of 2");
  c = catchUserError([&] { line = __LINE__; (void)f.b.output("s", mean(f.x), Groups{1}); });
  expectUserError(c, line, "a per-group output takes a row value");
  Builder b("g");
  Len g = b.dim("groups");
  Tensor x = b.input("x", DType::F32, g * 4 + 8);
  EXPECT_TRUE(amax(x, Groups{4}).isRow());
  b.output("top", amax(x, Groups{4}), Groups{4});
  Kernel k = b.build();
  EXPECT_EQ(k.tensors[1].rowLength, g + 2);
  EXPECT_EQ(k.stores[0].group, 4);
}

TEST(BuilderError, Names) {
  Fixture f;
  int line = 0;
  Caught c = catchUserError([&] { line = __LINE__; (void)f.b.input("x", DType::F32, f.h); });
  expectUserError(c, line, "the name 'x' is already declared in this kernel");
  c = catchUserError([&] { line = __LINE__; (void)f.b.dim("h"); });
  expectUserError(c, line, "the name 'h' is already declared");
  c = catchUserError([&] { line = __LINE__; (void)f.b.scalar("w", DType::F32); });
  expectUserError(c, line, "the name 'w' is already declared");
  c = catchUserError([&] { line = __LINE__; (void)f.b.vector("eps", DType::F32, f.h); });
  expectUserError(c, line, "the name 'eps' is already declared");
  c = catchUserError([&] { line = __LINE__; (void)f.b.output("x", f.x * 2.0); });
  expectUserError(c, line, "the name 'x' is already declared");
  c = catchUserError([&] { line = __LINE__; (void)f.b.input("", DType::F32, f.h); });
  expectUserError(c, line, "names must not be empty");
  c = catchUserError([&] { line = __LINE__; Builder b(""); });
  expectUserError(c, line, "a kernel needs a non-empty name");
}

TEST(BuilderError, Declarations) {
  Fixture f;
  int line = 0;
  Caught c = catchUserError([&] { line = __LINE__; (void)f.b.input("b", DType::Bool, f.h); });
  expectUserError(c, line, "tensors cannot hold bool");
  c = catchUserError([&] { line = __LINE__; (void)f.b.input("z0", DType::F32, 0); });
  expectUserError(c, line, "the row length 0 may be below 1");
  c = catchUserError([&] { line = __LINE__; (void)f.b.vector("z1", DType::F32, f.h - 1); });
  expectUserError(c, line, "the row length h-1 may be below 1");
  c = catchUserError([&] { line = __LINE__; (void)f.b.scalar("s", DType::BF16); });
  expectUserError(c, line, "scalar parameters are f32, i32 or i64, not bf16");
}

TEST(BuilderError, DimOfAnotherBuilder) {
  Builder a("a");
  Len ha = a.dim("h");
  Len ha2 = a.dim("h2");
  Builder b("b");
  Len hb = b.dim("hb");
  Tensor x = b.input("x", DType::F32, hb);
  int line = 0;
  Caught c = catchUserError([&] { line = __LINE__; (void)b.input("y", DType::F32, ha2); });
  expectUserError(c, line, "a length uses a dim of another kernel");
  EXPECT_THAT(c.what, HasSubstr("kernel 'b', input('y')"));
  c = catchUserError([&] { line = __LINE__; (void)x.slice(0, ha2); });
  expectUserError(c, line, "a length uses a dim of another kernel");
  c = catchUserError([&] { line = __LINE__; b.storeSlice(x, ha2, 1, x * 2.0); });
  expectUserError(c, line, "a length uses a dim of another kernel");
  (void)ha; // ha has index 0, the same as hb: it cannot be told apart (see the report).
}

TEST(BuilderError, ValuesOfTwoKernels) {
  Fixture f;
  Builder other("other");
  Len h2 = other.dim("h");
  Tensor y = other.input("y", DType::F32, h2);
  int line = 0;
  Caught c = catchUserError([&] { line = __LINE__; (void)(f.x + y); });
  expectUserError(c, line, "an operand belongs to kernel 'other'; values of different kernels cannot be combined");
  c = catchUserError([&] { line = __LINE__; f.b.output("z", y * 2.0); });
  expectUserError(c, line, "the value belongs to another kernel");
  c = catchUserError([&] { line = __LINE__; f.b.store(f.x, y * 2.0); });
  expectUserError(c, line, "the destination or value belongs to another kernel");
  c = catchUserError([&] { line = __LINE__; f.b.store(y, f.x * 2.0); });
  expectUserError(c, line, "the destination or value belongs to another kernel");
}

TEST(BuilderError, UseAfterBuild) {
  Fixture f;
  Expr e = f.x * 2.0;
  f.b.output("y", e);
  Kernel k = f.b.build();
  const std::string rule = "the builder was already built; declare everything before calling build()";
  int line = 0;
  Caught c = catchUserError([&] { line = __LINE__; (void)(f.x + 1.0); });
  expectUserError(c, line, rule);
  c = catchUserError([&] { line = __LINE__; (void)(e * e); });
  expectUserError(c, line, rule);
  c = catchUserError([&] { line = __LINE__; (void)e.to(DType::BF16); });
  expectUserError(c, line, rule);
  c = catchUserError([&] { line = __LINE__; (void)f.x.slice(0, 1); });
  expectUserError(c, line, rule);
  c = catchUserError([&] { line = __LINE__; (void)f.b.dim("d"); });
  expectUserError(c, line, rule);
  c = catchUserError([&] { line = __LINE__; (void)f.b.input("z", DType::F32, f.h); });
  expectUserError(c, line, rule);
  c = catchUserError([&] { line = __LINE__; (void)f.b.scalar("z", DType::F32); });
  expectUserError(c, line, rule);
  c = catchUserError([&] { line = __LINE__; (void)f.b.output("z", e); });
  expectUserError(c, line, rule);
  c = catchUserError([&] { line = __LINE__; (void)f.b.build(); });
  expectUserError(c, line, rule);
  EXPECT_EQ(k.stores.size(), 1u);
}

TEST(BuilderError, BuildWithNoOutputs) {
  Fixture f;
  (void)(f.x * 2.0);
  int line = 0;
  Caught c = catchUserError([&] { line = __LINE__; (void)f.b.build(); });
  expectUserError(c, line, "the kernel writes nothing; add an output() or a store()");
}

TEST(BuilderError, InPlaceStores) {
  Fixture f;
  Tensor y = f.b.output("y", f.x * 2.0);
  int line = 0;
  Caught c = catchUserError([&] { line = __LINE__; f.b.store(f.xb, f.xb.to(DType::F32) * 2.0); });
  expectUserError(c, line, "the value is f32 but 'xb' holds bf16; write value.to(DType::bf16)");
  c = catchUserError([&] { line = __LINE__; f.b.store(y, f.x * 3.0); });
  expectUserError(c, line, "'y' is already written by the store at");
  c = catchUserError([&] { line = __LINE__; f.b.store(f.w, f.x * 3.0); });
  expectUserError(c, line, "'w' is shared by all rows");
  c = catchUserError([&] { line = __LINE__; f.b.store(f.x, sum(f.x)); });
  expectUserError(c, line, "a per-row scalar cannot be written over a row");
  c = catchUserError([&] { line = __LINE__; f.b.storeSlice(f.x2, 0, 0, f.x * 3.0); });
  expectUserError(c, line, "the stride must be >= 1 but is 0");
  c = catchUserError([&] { line = __LINE__; f.b.storeSlice(f.x2, f.h + 1, 1, f.x * 3.0); });
  expectUserError(c, line, "elements up to 2*h+1 are written but a row of 'x2' has 2*h");
  c = catchUserError([&] { line = __LINE__; f.b.storeSlice(f.x2, Len(-1), 1, f.x * 3.0); });
  expectUserError(c, line, "are written but a row of 'x2' has 2*h");
  c = catchUserError([&] { line = __LINE__; f.b.store(f.x, 1.0); });
  expectUserError(c, line, "at least one operand must be a kgen value");

  int first = __LINE__; f.b.store(f.x, f.x * 3.0);
  c = catchUserError([&] { line = __LINE__; f.b.store(f.x, f.x * 4.0); });
  expectUserError(c, line, "'x' is already written by the store at " + std::string(__FILE__) + ":" + std::to_string(first) + " and the two may write the same elements");
  // Strided stores into disjoint elements (even, odd) are fine; a third
  // overlapping one is not.
  c = catchUserError([&] { line = __LINE__; f.b.storeSlice(f.x2, 0, 2, f.x * 4.0); });
  EXPECT_FALSE(c.thrown) << c.what;
  c = catchUserError([&] { line = __LINE__; f.b.storeSlice(f.x2, 1, 2, f.x * 4.0); });
  EXPECT_FALSE(c.thrown) << c.what;
  c = catchUserError([&] { line = __LINE__; f.b.storeSlice(f.x2, 0, 1, f.x * 4.0); });
  expectUserError(c, line, "'x2' is already written by the store at");
}

TEST(BuilderError, ReadingAnOutput) {
  Fixture f;
  Tensor y = f.b.output("y", f.x * 2.0);
  int line = 0;
  Caught c = catchUserError([&] { line = __LINE__; (void)(y * 2.0); });
  expectUserError(c, line, "'y' is an output; outputs cannot be read");
  c = catchUserError([&] { line = __LINE__; (void)y.slice(0, 1); });
  expectUserError(c, line, "'y' is an output; outputs cannot be read");
  c = catchUserError([&] { line = __LINE__; (void)y.to(DType::BF16); });
  expectUserError(c, line, "'y' is an output");
  Tensor s = f.b.output("s", sum(f.x));
  c = catchUserError([&] { line = __LINE__; (void)(f.x + s); });
  expectUserError(c, line, "'s' is an output");
}

TEST(BuilderError, EmptyExprAndTensor) {
  Fixture f;
  Expr e;
  Tensor t;
  int line = 0;
  Caught c = catchUserError([&] { line = __LINE__; (void)(e + f.x); });
  expectUserError(c, line, "'+': an operand is an empty Expr (declared but never assigned)");
  c = catchUserError([&] { line = __LINE__; (void)(f.x * e); });
  expectUserError(c, line, "an operand is an empty Expr");
  c = catchUserError([&] { line = __LINE__; (void)exp(e); });
  expectUserError(c, line, "an operand is an empty Expr");
  c = catchUserError([&] { line = __LINE__; f.b.output("y", e); });
  expectUserError(c, line, "an operand is an empty Expr");
  c = catchUserError([&] { line = __LINE__; (void)e.to(DType::F32); });
  expectUserError(c, line, ".to() of an empty Expr (declared but never assigned)");
  c = catchUserError([&] { line = __LINE__; (void)t.slice(0, 1); });
  expectUserError(c, line, "slice() of an empty Tensor");
  c = catchUserError([&] { line = __LINE__; (void)t.to(DType::F32); });
  expectUserError(c, line, "of an empty Tensor");
  c = catchUserError([&] { line = __LINE__; f.b.store(t, f.x * 2.0); });
  expectUserError(c, line, "the destination is an empty Tensor");
  c = catchUserError([&] { line = __LINE__; (void)(e + t); });
  expectUserError(c, line, "an operand is an empty Expr");
  // These accessors take no source location, so their messages cannot name
  // the line (see the report); the rule is still stated.
  c = catchUserError([&] { (void)e.dtype(); });
  ASSERT_TRUE(c.thrown);
  EXPECT_THAT(c.what, HasSubstr("dtype() of an empty Expr"));
  c = catchUserError([&] { (void)e.isRow(); });
  ASSERT_TRUE(c.thrown);
  EXPECT_THAT(c.what, HasSubstr("isRow() of an empty Expr"));
  c = catchUserError([&] { (void)t.name(); });
  ASSERT_TRUE(c.thrown);
  EXPECT_THAT(c.what, HasSubstr("name() of an empty Tensor"));
}

TEST(BuilderError, ExpressionTooDeep) {
  // A chain of x = x + 1.0 as deep as the cap builds; one more operation is
  // refused at its own line. x * 1.0 is 2 deep (a load or a literal is 1).
  Fixture f;
  Expr e = f.x * 1.0;
  for (int i = 2; i < kMaxExpressionDepth; ++i)
    e = e + 1.0;
  int line = 0;
  Caught c = catchUserError([&] { line = __LINE__; (void)(e + 1.0); });
  expectUserError(c, line, "kernel 'k', '+': the expression is " + std::to_string(kMaxExpressionDepth + 1) + " operations deep, past " + std::to_string(kMaxExpressionDepth) + ", the deepest kgen compiles");
  c = catchUserError([&] { line = __LINE__; (void)exp(e); });
  expectUserError(c, line, "exp(): the expression is");
  c = catchUserError([&] { line = __LINE__; (void)e.to(DType::BF16); });
  expectUserError(c, line, ".to(): the expression is");
  c = catchUserError([&] { line = __LINE__; (void)(f.xb * e); });
  expectUserError(c, line, "'*': the expression is");
  c = catchUserError([&] { line = __LINE__; (void)select(f.x > 0, e, f.x); });
  expectUserError(c, line, "select(): the expression is");
  f.b.output("y", e);
  EXPECT_EQ(f.b.build().stores.size(), 1u);
}

TEST(BuilderError, SharedExpressionTooDeep) {
  // e = e + e doubles the paths, not the nodes: depth is what is capped.
  Fixture f;
  Expr e = f.x * 1.0;
  for (int i = 2; i < kMaxExpressionDepth; ++i)
    e = e + e;
  int line = 0;
  Caught c = catchUserError([&] { line = __LINE__; (void)(e * e); });
  expectUserError(c, line, "'*': the expression is " + std::to_string(kMaxExpressionDepth + 1) + " operations deep");
  f.b.output("y", e);
  EXPECT_EQ(f.b.build().nodes.size(), size_t(kMaxExpressionDepth + 2));
}

TEST(BuilderError, TooManyNodes) {
  // Operations each 2 deep: the node count is what is capped. A kernel of
  // kMaxKernelNodes nodes builds.
  Fixture f;
  Expr y = f.x * 2.0;
  int line = 0;
  Caught c = catchUserError([&] {
    for (int i = 0; i < kMaxKernelNodes; ++i) {
      line = __LINE__; (void)(f.eps * 2.0);
    }
  });
  expectUserError(c, line, "kernel 'k', '*': the kernel would have more than " + std::to_string(kMaxKernelNodes) + " operations, the most kgen compiles");
  f.b.output("y", y);
  EXPECT_EQ(f.b.build().nodes.size(), size_t(kMaxKernelNodes));
}
