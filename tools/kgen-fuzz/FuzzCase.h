//===- FuzzCase.h - One reproducible kgen-fuzz case -----------*- C++ -*-===//
//
// A case is everything one launch needs besides the kernels: op, dtype, row
// length, rows, layout and values, and for ops with row maps (Graph.h) the
// other dims, heads' layout and gather indices. makeCase() derives it from
// (op, seed) alone, so a seed reproduces it; its text form ("op=rmsnorm
// dtype=bf16 rows=7 ...") is what `kgen-fuzz run --case` takes and minimize
// prints.
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_TOOLS_KGEN_FUZZ_FUZZCASE_H
#define KGEN_TOOLS_KGEN_FUZZ_FUZZCASE_H

#include "dsl/DType.h"

#include <cstdint>
#include <functional>
#include <map>
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

/// How gather indices (rope's positions) are drawn; all lie in the table.
enum class Positions {
  Random,   ///< uniform in [0, tableRows)
  Repeated, ///< one random index for every row
  Zero,     ///< the table's first row
  Last,     ///< its last row
  Mixed,    ///< first, last, the previous row's again, or random
};
const char *positionsName(Positions p);

/// What a dim besides the row length counts, read from the row maps.
enum class DimRole {
  Heads,        ///< sub-rows of a heads() part (q_heads)
  Group,        ///< row programs sharing a tensor row (tokens_per_batch)
  Table,        ///< rows of a gathered table (max_pos)
  Bounded,      ///< a dim with an upper bound (rope's rotary_pairs)
  Pitch,        ///< elements between a heads() part's sub-rows (q_head_stride)
  Span,         ///< a factor of the row length (groups of a row's group scales)
  ElementPitch, ///< elements between a tensor's elements (scale_group_stride)
};

/// A dim the case draws besides the row length.
struct DimDraw {
  std::string name;
  DimRole role;
  /// Bounded: the dim's bound in the kernel of each length (0: dynamic),
  /// which may depend on it (rope's rotary_pairs <= head_dim / 2).
  std::map<int64_t, int64_t> maxByLength;
};

struct FuzzCase {
  std::string op;
  DType dtype = DType::F32;
  int64_t length = 1;
  /// Rows of the ops of plain rows; with row maps, groups of row programs
  /// that share rows (rope: tokens of q_heads + k_heads programs, adaln:
  /// batch items of tokens_per_batch).
  int64_t rows = 1;
  bool specialized = false; ///< the bundle's kernel for `length`, not dyn
  int64_t misalign = 0;     ///< elements added to every tensor's base
  int64_t pad = 0;          ///< elements between rows past the row
  Values values = Values::Normal;
  int exponent = 0; ///< Scaled: magnitudes near 2^exponent
  uint64_t valueSeed = 0;
  /// Row maps: each dim of the kernel besides the row length ("dim.NAME=").
  std::map<std::string, int64_t> dims;
  bool fused = false; ///< a heads() view's parts share rows (vLLM's qkv)
  Positions positions = Positions::Random;
};

/// What the bundle offers for an op: its dtypes and specialized lengths.
struct OpOffer {
  std::string op;
  std::vector<DType> dtypes;
  std::vector<int64_t> lengths; ///< specialized kernels
  bool dynamic = false;         ///< has a dynamic kernel
  bool centred = false;         ///< subtracts the row mean: values near 32
  std::vector<DimDraw> dims;    ///< besides the length
  bool heads = false;  ///< has heads() views (fused or not)
  bool gather = false; ///< gathers rows by an index tensor
};

/// The bytes a case allocates (Bundle::caseBytes).
using CaseBytes = std::function<int64_t(const FuzzCase &)>;

/// The case of `seed` for `offer`. Sizes stay within `maxBytes` allocated:
/// gathered tables within half of it, then one row, then the rows.
FuzzCase makeCase(const OpOffer &offer, uint64_t seed, int64_t maxBytes,
                  const CaseBytes &bytes);

std::string format(const FuzzCase &c);
/// Parses format()'s text; nullopt with `err` naming the bad field.
std::optional<FuzzCase> parseCase(const std::string &text, std::string &err);

} // namespace kgen::fuzz

#endif // KGEN_TOOLS_KGEN_FUZZ_FUZZCASE_H
