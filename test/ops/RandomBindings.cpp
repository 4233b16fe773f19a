//===- RandomBindings.cpp - Any registered op bound to random values ------===//
#include "test/ops/RandomBindings.h"

#include "dsl/Float.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

namespace kgen::test {
namespace {

double sample(std::mt19937_64 &rng, DType t, double special) {
  if (!isFloat(t))
    return double(rng() % kTableRows);
  std::uniform_real_distribution<double> u(-3, 3), unit(0, 1);
  if (unit(rng) >= special)
    return u(rng);
  switch (rng() % 5) {
  case 0:
    return std::numeric_limits<double>::quiet_NaN();
  case 1:
    return rng() % 2 ? std::numeric_limits<double>::infinity()
                     : -std::numeric_limits<double>::infinity();
  case 2:
    return rng() % 2 ? 0.0 : -0.0;
  case 3:
    return ulp(t, 0) * double(rng() % 4); // subnormal, or 0
  default:
    return u(rng) * std::ldexp(1.0, t == DType::F32 ? 120 : 14);
  }
}

} // namespace

RandomBindings bindRandom(const OpDef &op, const Kernel &k,
                          const std::map<std::string, int64_t> &fixedDims,
                          int64_t mainLength, int64_t rows, uint64_t seed,
                          double special) {
  RandomBindings out;
  Bindings &b = out.bindings;
  for (const std::string &d : k.dims) {
    auto it = fixedDims.find(d);
    b.dims.push_back(it != fixedDims.end() ? it->second
                     : d == op.mainDim     ? mainLength
                                           : 8);
  }
  // A head pitch that is a dim of its own: dense heads, as long as a head;
  // an element pitch likewise: 1.
  auto dense = [&](const Len &p, int64_t value) {
    if (p.constant == 0 && p.terms.size() == 1 && p.terms.begin()->second == 1)
      b.dims[p.terms.begin()->first] = value;
  };
  for (const TensorDecl &t : k.tensors) {
    dense(t.map.subPitch, t.map.subLength.eval(b.dims));
    dense(t.pitch, 1);
  }
  b.rows = rows;
  std::mt19937_64 rng(seed);
  for (const TensorDecl &t : k.tensors) {
    // Enough rows for any map: a group's rows, or a table's.
    int64_t n = t.rowLength.eval(b.dims) * std::max(rows, kTableRows) *
                std::max<int64_t>(1, t.map.group.eval(b.dims));
    std::vector<uint8_t> buf(size_t(n) * sizeInBytes(t.dtype));
    for (int64_t i = 0; i < n; ++i)
      encode(t.dtype, sample(rng, t.dtype, special),
             buf.data() + i * sizeInBytes(t.dtype));
    out.bytes.push_back(std::move(buf));
  }
  for (auto &buf : out.bytes)
    b.tensors.push_back({buf.data(), 0});
  for (const ParamDecl &pd : k.params) {
    auto it = op.scalars.find(pd.name);
    b.params.push_back(it == op.scalars.end() ? 0.5 : it->second);
  }
  return out;
}

} // namespace kgen::test
