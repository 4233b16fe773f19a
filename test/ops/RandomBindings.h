//===- RandomBindings.h - Any registered op bound to random values -*- C++
//-*-===//
//
// Binds every tensor of a kernel to a buffer of its own, sized for `rows`
// row programs whatever the tensor's row map (vectors, tables and heads
// views included), so interpret() runs any op without a shape of its own.
// Integer tensors hold indices into a table of kTableRows rows.
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_TEST_OPS_RANDOMBINDINGS_H
#define KGEN_TEST_OPS_RANDOMBINDINGS_H

#include "dsl/Interpreter.h"
#include "dsl/Registry.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kgen::test {

inline constexpr int64_t kTableRows = 8;

struct RandomBindings {
  Bindings bindings;
  std::vector<std::vector<uint8_t>> bytes; ///< by tensor
};

/// Dims: `mainLength` for the op's main dim (unless `fixedDims` has it), a
/// head's length for a head pitch, 1 for an element pitch, 8 for every
/// other. Params take the op's scalars. A share `special` (0 to 1) of the
/// float values are NaN, Inf, +-0, subnormal or near the dtype's range; the
/// rest are uniform in [-3, 3).
RandomBindings bindRandom(const OpDef &op, const Kernel &k,
                          const std::map<std::string, int64_t> &fixedDims,
                          int64_t mainLength, int64_t rows, uint64_t seed,
                          double special = 0.4);

} // namespace kgen::test

#endif // KGEN_TEST_OPS_RANDOMBINDINGS_H
