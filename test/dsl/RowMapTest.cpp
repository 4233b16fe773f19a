//===- RowMapTest.cpp - Grouped rows, heads and gathers -------------------===//
// Builder rules (each user error points at the offending line) and the
// interpreter's semantics of row maps, checked by hand on small tensors.
// clang-format off
//===----------------------------------------------------------------------===//
#include "dsl/Builder.h"
#include "dsl/Float.h"
#include "dsl/Interpreter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

using namespace kgen;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using ::testing::ThrowsMessage;

namespace {

std::string userError(const std::function<void()> &f) {
  try {
    f();
  } catch (const UserError &e) {
    return e.what();
  }
  return "<no UserError>";
}

std::string at(int line) {
  return std::string(__FILE__) + ":" + std::to_string(line) + ": error: ";
}

template <typename T> HostTensor host(std::vector<T> &v, int64_t stride = 0) {
  return {v.data(), stride};
}

// --- Builder rules ---------------------------------------------------------

TEST(RowMapBuilder, HeadsNeedAnAffineRowLength) {
  int line = 0;
  std::string e = userError([&] {
    Builder b("k");
    Len h = b.dim("heads"), d = b.dim("head_dim");
    line = __LINE__; b.heads({{"q", h}}, DType::F32, d);
  });
  EXPECT_THAT(e, StartsWith(at(line)));
  EXPECT_THAT(e, HasSubstr("a product of two dims; make the sub-row length"));
}

TEST(RowMapBuilder, HeadsAreAllOrNothing) {
  // Issue 39: a refused part left the parts before it declared, their maps
  // pointing at whatever tensor came next.
  Builder b("k");
  Len h = b.dim("heads"), d = b.dim("head_dim");
  EXPECT_THROW(b.heads({{"q", 2}, {"k", h}}, DType::F32, d), UserError);
  Tensor q = b.input("q", DType::F32, d); // the name is free again
  EXPECT_EQ(q.index, 0);
  Tensor x = b.heads({{"k", 2}, {"v", 2}}, DType::F32, d);
  EXPECT_EQ(x.index, 1);
}

TEST(RowMapBuilder, GatherIndexMustBeAnIntegerPerRowInput) {
  int line = 0;
  std::string e = userError([&] {
    Builder b("k");
    Tensor pos = b.perRow("pos", DType::F32);
    line = __LINE__; b.gather("cache", DType::F32, 8, pos, 16);
  });
  EXPECT_THAT(e, StartsWith(at(line)));
  EXPECT_THAT(e, HasSubstr("must be an i32 or i64 perRow() input"));
}

TEST(RowMapBuilder, GatheredTablesHoldFloats) {
  int line = 0;
  std::string e = userError([&] {
    Builder b("k");
    Tensor pos = b.perRow("pos", DType::I32);
    line = __LINE__; b.gather("cache", DType::I32, 8, pos, 16);
  });
  EXPECT_THAT(e, StartsWith(at(line)));
  EXPECT_THAT(e, HasSubstr("a gathered table holds floats"));
}

TEST(RowMapBuilder, SharedRowsCannotBeWritten) {
  int line = 0;
  std::string e = userError([&] {
    Builder b("k");
    Len n = b.dim("n");
    Tensor s = b.grouped("s", DType::F32, 8, n);
    line = __LINE__; b.store(s, s * 2.0);
  });
  EXPECT_THAT(e, StartsWith(at(line)));
  EXPECT_THAT(e, HasSubstr("seen by several row programs (grouped)"));
}

TEST(RowMapBuilder, OverlappingStoresAreRejectedDisjointOnesAccepted) {
  int line = 0;
  std::string e = userError([&] {
    Builder b("k");
    Tensor x = b.input("x", DType::F32, 8);
    b.storeSlice(x, 0, 2, x.slice(0, 4, 2) * 2.0);
    b.storeSlice(x, 1, 2, x.slice(1, 4, 2) * 3.0); // odd elements: disjoint
    line = __LINE__; b.storeSlice(x, 4, 1, x.slice(0, 4) * 4.0);
  });
  EXPECT_THAT(e, StartsWith(at(line)));
  EXPECT_THAT(e, HasSubstr("the two may write the same elements"));
}

TEST(RowMapBuilder, PerRowTensorsAreNotSliced) {
  int line = 0;
  std::string e = userError([&] {
    Builder b("k");
    Tensor p = b.perRow("p", DType::F32);
    line = __LINE__; p.slice(0, 1);
  });
  EXPECT_THAT(e, StartsWith(at(line)));
  EXPECT_THAT(e, HasSubstr("a per-row tensor has no row to slice"));
}

// --- Interpreter -----------------------------------------------------------

/// y = x * (1 + scale[r / n]) + bias[r] with x [rows, 2], scale [rows/n, 2]
/// and a per-row bias.
TEST(RowMapInterpreter, GroupedRowsAndPerRowInputs) {
  Builder b("grouped");
  Len n = b.dim("n");
  Tensor x = b.input("x", DType::F32, 2);
  Tensor scale = b.grouped("scale", DType::F32, 2, n);
  Tensor bias = b.perRow("bias", DType::F32);
  b.output("y", x * (1.0 + scale) + bias);
  Kernel k = b.build();

  std::vector<float> xv = {1, 2, 3, 4, 5, 6}, sv = {1, 2, 10, 20},
                     bv = {100, 200, 300}, yv(6, NAN);
  Bindings bind;
  bind.dims = {2}; // rows 0, 1 use scale row 0; row 2 uses row 1
  bind.rows = 3;
  bind.tensors = {host(xv), host(sv), host(bv), host(yv)};
  interpret(k, bind);
  EXPECT_EQ(yv, (std::vector<float>{102, 106, 206, 212, 355, 426}));
}

/// In place on q (2 heads) and k (1 head) of 4 elements each, rotated by
/// pairs of a table gathered by per-token positions. Token 1's position is
/// outside the table: its heads read NaN and are written NaN.
TEST(RowMapInterpreter, HeadsAcrossTensorsWithAGatheredTable) {
  Builder b("rot");
  Len hq = b.dim("hq"), hk = b.dim("hk"), rows = b.dim("table_rows");
  Tensor qk = b.heads({{"q", hq}, {"k", hk}}, DType::F32, 4);
  Tensor pos = b.perRow("pos", DType::I64, hq + hk);
  Tensor table = b.gather("table", DType::F32, 2, pos, rows);
  Expr c = table.slice(0, 2);
  b.storeSlice(qk, 0, 2, qk.slice(0, 2, 2) * c);
  b.storeSlice(qk, 1, 2, qk.slice(1, 2, 2) + c);
  Kernel k = b.build();

  // q rows have a pitch of 10 (8 used), k rows of 5 (4 used).
  std::vector<float> q(20), kk(10);
  for (int i = 0; i < 20; ++i)
    q[i] = float(i + 1);
  for (int i = 0; i < 10; ++i)
    kk[i] = float(-(i + 1));
  std::vector<float> q0 = q, k0 = kk;
  std::vector<int64_t> positions = {1, 7};
  std::vector<float> tab = {0.5f, 2.0f, 3.0f, 4.0f}; // 2 rows of 2
  Bindings bind;
  bind.dims = {2, 1, 2};
  bind.rows = 2 * 3; // 2 tokens x (2 + 1) heads
  bind.tensors = {host(q, 10), host(kk, 5), host(positions), host(tab)};
  interpret(k, bind);

  // Token 0, table row 1 = {3, 4}: even elements * {3, 4}, odd + {3, 4}.
  for (int h = 0; h < 2; ++h) {
    const float *x = &q0[h * 4];
    EXPECT_EQ(q[h * 4 + 0], x[0] * 3) << h;
    EXPECT_EQ(q[h * 4 + 1], x[1] + 3) << h;
    EXPECT_EQ(q[h * 4 + 2], x[2] * 4) << h;
    EXPECT_EQ(q[h * 4 + 3], x[3] + 4) << h;
  }
  EXPECT_EQ(kk[0], k0[0] * 3);
  EXPECT_EQ(kk[3], k0[3] + 4);
  EXPECT_EQ(q[8], q0[8]); // the pitch's padding is untouched
  EXPECT_EQ(kk[4], k0[4]);
  // Token 1: position 7 is outside the 2-row table.
  for (int i = 10; i < 18; ++i)
    EXPECT_TRUE(std::isnan(q[i])) << i;
  for (int i = 5; i < 9; ++i)
    EXPECT_TRUE(std::isnan(kk[i])) << i;
  EXPECT_EQ(q[18], q0[18]);
  EXPECT_EQ(kk[9], k0[9]);
}

/// q's 2 heads of 3 elements lie `p` apart (heads padded inside a row);
/// k's 1 head is dense. The padding is neither read nor written, and a
/// pitch below the head length or a row stride below heads * pitch is a
/// binding error.
TEST(RowMapInterpreter, PaddedHeads) {
  Builder b("pad");
  Len hq = b.dim("hq"), p = b.dim("p");
  Tensor qk = b.heads({{"q", hq, p}, {"k", 1}}, DType::F32, 3);
  b.store(qk, qk * 10.0);
  Kernel k = b.build();

  // 2 tokens; q heads 5 apart, rows 11 apart.
  std::vector<float> q(22), kk = {1, 2, 3, 4, 5, 6};
  for (int i = 0; i < 22; ++i)
    q[i] = float(i);
  std::vector<float> q0 = q;
  Bindings bind;
  bind.dims = {2, 5};
  bind.rows = 2 * 3;
  bind.tensors = {host(q, 11), host(kk)};
  interpret(k, bind);
  for (int i = 0; i < 22; ++i) {
    bool head = i % 11 < 10 && i % 11 % 5 < 3;
    EXPECT_EQ(q[i], head ? q0[i] * 10 : q0[i]) << i;
  }
  EXPECT_EQ(kk, (std::vector<float>{10, 20, 30, 40, 50, 60}));

  bind.dims = {2, 2};
  EXPECT_THAT([&] { interpret(k, bind); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("has heads 2 elements apart but 3 long")));
  bind.dims = {2, 6};
  EXPECT_THAT([&] { interpret(k, bind); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("has rowStride 11 but its rows have 12 elements")));
}

/// q's heads (2 per token) read q_weight and k's (1) read k_weight, at
/// each element and with a slice.
TEST(RowMapInterpreter, PartVectors) {
  Builder b("qkw");
  Len hq = b.dim("hq");
  Tensor qk = b.heads({{"q", hq}, {"k", 1}}, DType::F32, 3);
  Tensor w = b.partVectors(qk, {"wq", "wk"}, DType::F32);
  b.storeSlice(qk, 0, 1, qk.slice(0, 2) * w.slice(1, 2));
  Kernel k = b.build();

  std::vector<float> q = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  std::vector<float> kk = {1, 2, 3, 4, 5, 6};
  std::vector<float> wq = {100, 10, 20}, wk = {100, -1, -2};
  Bindings bind;
  bind.dims = {2};
  bind.rows = 2 * 3;
  bind.tensors = {host(q), host(kk), host(wq), host(wk)};
  interpret(k, bind);
  EXPECT_EQ(q, (std::vector<float>{10, 40, 3, 40, 100, 6, 70, 160, 9, 100,
                                   220, 12}));
  EXPECT_EQ(kk, (std::vector<float>{-1, -4, 3, -4, -10, 6}));
}

TEST(RowMapBuilder, PartVectorsNeedAHeadsViewAndANamePerPart) {
  Builder b("qkw");
  Tensor x = b.input("x", DType::F32, 4);
  int line = __LINE__ + 1;
  std::string e = userError([&] { b.partVectors(x, {"w"}, DType::F32); });
  EXPECT_THAT(e, StartsWith(at(line)));
  EXPECT_THAT(e, HasSubstr("'x' is not a heads() view (the first part"));
  Tensor qk = b.heads({{"q", b.dim("hq")}, {"k", 1}}, DType::F32, 3);
  EXPECT_THAT(userError([&] { b.partVectors(qk, {"w"}, DType::F32); }),
              HasSubstr("'q' has 2 parts but 1 names were given"));
  EXPECT_THAT(userError([&] { b.partVectors(qk, {"w", "x"}, DType::F32); }),
              HasSubstr("'x'"));
  // Refused calls declared nothing: the names are free.
  Tensor w = b.partVectors(qk, {"w", "wk"}, DType::F32);
  EXPECT_THAT(userError([&] { b.store(w, qk); }),
              HasSubstr("'w' is one vector per heads() part"));
}

/// One sum per head of 2 elements, 3 heads a token, written as a [T, 3]
/// scale: row-major (stride 3, pitch 1), padded (stride 8, pitch 2) and
/// column-major (stride 1, pitch 5 >= T = 2). Layouts whose tokens or heads
/// would overlap are binding errors.
TEST(RowMapInterpreter, PerHeadScalars) {
  Builder b("hs");
  Len h = b.dim("h"), p = b.dim("p");
  Tensor x = b.heads({{"x", h}}, DType::F32, 2);
  b.outputPerHead({"s", h, p}, sum(x), x);
  Kernel k = b.build();

  std::vector<float> xv = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  auto run = [&](int64_t pitch, int64_t stride, size_t size) {
    std::vector<float> s(size, -1);
    Bindings bind;
    bind.dims = {3, pitch};
    bind.rows = 2 * 3;
    bind.tensors = {host(xv), host(s, stride)};
    interpret(k, bind);
    return s;
  };
  EXPECT_EQ(run(1, 0, 6), (std::vector<float>{3, 7, 11, 15, 19, 23}));
  EXPECT_EQ(run(2, 8, 14), (std::vector<float>{3, -1, 7, -1, 11, -1, -1, -1, 15,
                                               -1, 19, -1, 23, -1}));
  EXPECT_EQ(run(5, 1, 12), (std::vector<float>{3, 15, -1, -1, -1, 7, 19, -1, -1,
                                               -1, 11, 23}));
  EXPECT_THAT([&] { run(1, 1, 6); },
              ThrowsMessage<std::invalid_argument>(HasSubstr(
                  "has rowStride 1 but its rows have 3 elements; the row "
                  "stride must be >= the row length (or <= 0 for "
                  "contiguous), or its tokens fit one head pitch")));
  EXPECT_THAT([&] { run(1, 2, 6); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("has rowStride 2 but its rows have 3")));
}

TEST(RowMapBuilder, PerHeadScalarsNeedAHeadsViewAndAScalar) {
  Builder b("hs");
  Len h = b.dim("h");
  Tensor y = b.input("y", DType::F32, 2);
  Tensor x = b.heads({{"x", h}, {"x2", 1}}, DType::F32, 2);
  int line = __LINE__ + 1;
  std::string e = userError([&] { b.outputPerHead({"s", h}, sum(y), y); });
  EXPECT_THAT(e, StartsWith(at(line)));
  EXPECT_THAT(e, HasSubstr("'y' is not a heads() view"));
  EXPECT_THAT(userError([&] { b.outputPerHead({"s", h}, sum(x), x); }),
              HasSubstr("the output has h heads a token but 'x''s view has "
                        "h+1; give the view's total"));
  EXPECT_THAT(userError([&] { b.outputPerHead({"s", h + 1}, x * 2.0, x); }),
              HasSubstr("the value is a row value"));
  EXPECT_THAT(
      userError([&] { b.outputPerHead({"s", h + 1, h + 1}, sum(x), x); }),
      HasSubstr("a pitch is a constant, a dim or a multiple of one"));
  Tensor s = b.outputPerHead({"s", h + 1}, sum(x), x); // the name is free
  EXPECT_EQ(s.name(), "s");
}

/// Group maxima of a row of 2 groups of 2, written [T, 2] with the groups p
/// apart: row-major (stride 2, pitch 1), padded (stride 5, pitch 2) and
/// transposed (stride 1, pitch 4 >= T = 3). Overlapping layouts are binding
/// errors.
TEST(RowMapInterpreter, PitchedGroupOutput) {
  Builder b("pg");
  Len g = b.dim("g");
  Tensor x = b.input("x", DType::F32, g * 2);
  b.output("s", amax(x, Groups{2}), Groups{2}, b.dim("p"));
  Kernel k = b.build();
  ASSERT_EQ(k.tensors[1].pitch, Len::dim(1));

  std::vector<float> xv = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  auto run = [&](int64_t pitch, int64_t stride, size_t size) {
    std::vector<float> s(size, -1);
    Bindings bind;
    bind.dims = {2, pitch};
    bind.rows = 3;
    bind.tensors = {host(xv), host(s, stride)};
    interpret(k, bind);
    return s;
  };
  EXPECT_EQ(run(1, 0, 6), (std::vector<float>{2, 4, 6, 8, 10, 12}));
  EXPECT_EQ(run(2, 5, 14), (std::vector<float>{2, -1, 4, -1, -1, 6, -1, 8,
                                               -1, -1, 10, -1, 12, -1}));
  EXPECT_EQ(run(4, 1, 8), (std::vector<float>{2, 6, 10, -1, 4, 8, 12, -1}));
  EXPECT_THAT([&] { run(2, 1, 8); },
              ThrowsMessage<std::invalid_argument>(HasSubstr(
                  "has rowStride 1 but its rows have 4 elements; the row "
                  "stride must be >= the row length (or <= 0 for "
                  "contiguous), or its rows fit one pitch")));
  EXPECT_THAT([&] { run(2, 3, 12); },
              ThrowsMessage<std::invalid_argument>(
                  HasSubstr("has rowStride 3 but its rows have 4")));
}

TEST(RowMapBuilder, APitchIsADimOrAConstantOfAtLeastOne) {
  Builder b("pg");
  Len g = b.dim("g");
  Tensor x = b.input("x", DType::F32, g * 2);
  int line = __LINE__ + 1;
  std::string e = userError([&] { b.output("s", amax(x, Groups{2}), Groups{2}, 0); });
  EXPECT_THAT(e, StartsWith(at(line)));
  EXPECT_THAT(e, HasSubstr("output('s'): a pitch is at least 1"));
  EXPECT_THAT(userError([&] {
                b.output("s", amax(x, Groups{2}), Groups{2}, g + 1);
              }),
              HasSubstr("output 's' has the pitch g+1; a pitch is a "
                        "constant, a dim or a multiple of one"));
  EXPECT_THAT(userError([&] {
                b.output("s", amax(x, Groups{2}), Groups{2}, g - 1);
              }),
              HasSubstr("the pitch g-1 may be below 1"));
  Tensor s = b.output("s", amax(x, Groups{2}), Groups{2}, 3); // name is free
  EXPECT_EQ(s.name(), "s");
}

TEST(RowMapInterpreter, NegativeIndicesReadNaN) {
  Builder b("g");
  Tensor pos = b.perRow("pos", DType::I32);
  Tensor table = b.gather("table", DType::F32, 1, pos, b.dim("rows"));
  b.output("y", table * 1.0);
  Kernel k = b.build();
  std::vector<int32_t> p = {-1, 0, 1, 2};
  std::vector<float> tab = {5, 6}, y(4, 0);
  Bindings bind;
  bind.dims = {2};
  bind.rows = 4;
  bind.tensors = {host(p), host(tab), host(y)};
  interpret(k, bind);
  EXPECT_TRUE(std::isnan(y[0]));
  EXPECT_EQ(y[1], 5);
  EXPECT_EQ(y[2], 6);
  EXPECT_TRUE(std::isnan(y[3]));
}

} // namespace

namespace {

/// torch.cat((a * 2, a + 1), dim=-1) of a row of 3 into a row of 6.
TEST(RowMapInterpreter, ConcatenationWritesConsecutiveSlices) {
  Builder b("cat");
  Tensor x = b.input("x", DType::F32, 3);
  Tensor y = b.output("y", DType::F32, 6);
  b.storeConcat(y, 0, {x * 2.0, x + 1.0});
  Kernel k = b.build();
  std::vector<float> xv = {1, 2, 3, 4, 5, 6}, yv(12, NAN);
  Bindings bind;
  bind.rows = 2;
  bind.tensors = {host(xv), host(yv)};
  interpret(k, bind);
  EXPECT_EQ(yv, (std::vector<float>{2, 4, 6, 2, 3, 4, 8, 10, 12, 5, 6, 7}));
}

TEST(RowMapBuilder, ConcatenationMustFitTheRow) {
  int line = 0;
  std::string e = userError([&] {
    Builder b("k");
    Tensor x = b.input("x", DType::F32, 4);
    Tensor y = b.output("y", DType::F32, 6);
    line = __LINE__; b.storeConcat(y, 0, {x * 2.0, x + 1.0});
  });
  EXPECT_THAT(e, StartsWith(at(line)));
  EXPECT_THAT(e, HasSubstr("elements up to 8 are written but a row of 'y' has 6"));
}

} // namespace
