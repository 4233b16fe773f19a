//===- FloatPathTest.cpp - The interpreter's float path against double ----===//
//
// interpret() computes + - * / sqrt neg abs and casts of float operands in
// float (its fast path) and the rest in double. With the fast path off, every
// node is computed in double, as the spec is written. On every registered
// op and dtype, on values that include NaN, Inf, +-0, subnormals and
// magnitudes near the dtype's range, both must write the same bytes (a NaN
// may be any NaN).
//
//===----------------------------------------------------------------------===//
#include "test/ops/RandomBindings.h"

#include "dsl/Float.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

using namespace kgen;
using namespace kgen::test;

namespace {

/// The same bytes, but that a NaN may be any NaN: which operand's NaN an
/// add passes on is the compiler's choice (it may commute it), and the spec
/// says NaN only.
bool sameValues(DType t, const std::vector<uint8_t> &a,
                const std::vector<uint8_t> &b) {
  const size_t size = size_t(sizeInBytes(t));
  for (size_t i = 0; i + size <= a.size(); i += size) {
    if (std::memcmp(a.data() + i, b.data() + i, size) == 0)
      continue;
    if (!std::isnan(decode(t, a.data() + i)) ||
        !std::isnan(decode(t, b.data() + i)))
      return false;
  }
  return a.size() == b.size();
}

TEST(FloatPath, EqualsDoubleOnEveryOp) {
  int kernels = 0;
  for (const OpDef &op : registeredOps()) {
    for (DType dt : op.dtypes) {
      int64_t length = op.lengths.empty() ? 0 : op.lengths.front();
      std::map<std::string, int64_t> fixed;
      Kernel k = op.instantiate(dt, length, fixed);
      SCOPED_TRACE(op.name + " " + std::string(name(dt)));
      for (uint64_t seed = 1; seed <= 3; ++seed) {
        RandomBindings fast = bindRandom(op, k, fixed, 136, 6, seed);
        RandomBindings slow = bindRandom(op, k, fixed, 136, 6, seed);
        InterpretOptions o;
        ASSERT_NO_THROW(interpret(k, fast.bindings, o));
        o.floatFastPath = false;
        ASSERT_NO_THROW(interpret(k, slow.bindings, o));
        for (size_t t = 0; t < k.tensors.size(); ++t)
          ASSERT_TRUE(
              sameValues(k.tensors[t].dtype, fast.bytes[t], slow.bytes[t]))
              << k.tensors[t].name;
      }
      ++kernels;
    }
  }
  EXPECT_GT(kernels, 100);
}

} // namespace
