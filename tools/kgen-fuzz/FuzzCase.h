//===- FuzzCase.h - One reproducible kgen-fuzz case -----------*- C++ -*-===//
//
// A case is everything one launch needs besides the kernels: op, dtype, row
// length, rows, layout and values. makeCase() derives it from (op, seed)
// alone, so a seed reproduces it; its text form ("op=rmsnorm dtype=bf16
// rows=7 ...") is what `kgen-fuzz run --case` takes and minimize prints.
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_TOOLS_KGEN_FUZZ_FUZZCASE_H
#define KGEN_TOOLS_KGEN_FUZZ_FUZZCASE_H

#include "dsl/DType.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kgen::fuzz {

/// How input values are drawn.
enum class Values {
  Normal,   ///< uniform in [-3, 3] (layernorm-like ops: centred on 32)
  Specials, ///< Normal with NaN, +-Inf, +-0 and subnormals sprinkled in
  Scaled,   ///< Normal times 2^exponent: huge or tiny magnitudes
  Constant, ///< each row one value (variance 0)
};
const char *valuesName(Values v);

struct FuzzCase {
  std::string op;
  DType dtype = DType::F32;
  int64_t length = 1;
  int64_t rows = 1;
  bool specialized = false; ///< the bundle's kernel for `length`, not dyn
  int64_t misalign = 0;     ///< elements added to every tensor's base
  int64_t pad = 0;          ///< elements between rows past the row
  Values values = Values::Normal;
  int exponent = 0; ///< Scaled: magnitudes near 2^exponent
  uint64_t valueSeed = 0;
};

/// What the bundle offers for an op: its dtypes and specialized lengths.
struct OpOffer {
  std::string op;
  std::vector<DType> dtypes;
  std::vector<int64_t> lengths; ///< specialized kernels
  bool dynamic = false;         ///< has a dynamic kernel
  bool centred = false;         ///< subtracts the row mean: values near 32
};

/// The case of `seed` for `offer`. Sizes stay within `maxBytes` moved.
FuzzCase makeCase(const OpOffer &offer, uint64_t seed, int64_t maxBytes,
                  int64_t bytesPerRowElem);

std::string format(const FuzzCase &c);
/// Parses format()'s text; nullopt with `err` naming the bad field.
std::optional<FuzzCase> parseCase(const std::string &text, std::string &err);

} // namespace kgen::fuzz

#endif // KGEN_TOOLS_KGEN_FUZZ_FUZZCASE_H
