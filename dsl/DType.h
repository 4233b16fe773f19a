//===- DType.h - Element types of kgen tensors and values -------*- C++ -*-===//
//
// The dtypes a kgen value can have. Bool is internal: comparisons produce it
// and select consumes it; no tensor has it.
//
//===----------------------------------------------------------------------===//
#ifndef KGEN_DSL_DTYPE_H
#define KGEN_DSL_DTYPE_H

#include <cstdint>
#include <optional>
#include <string_view>

namespace kgen {

enum class DType : uint8_t {
  F32,
  F16,
  BF16,
  F8E4M3,
  F8E5M2,
  I32,
  I64,
  I8,
  Bool
};

/// Short name as used on the CLI and in specs: "f32", "bf16", "f8e4m3", ...
std::string_view name(DType t);
/// Parses a short name; std::nullopt when unknown.
std::optional<DType> parseDType(std::string_view s);
/// Storage size in bytes (Bool: 1).
int64_t sizeInBytes(DType t);
bool isFloat(DType t);
bool isInt(DType t);
/// The float types that arithmetic is done in after widening to f32.
bool isNarrowFloat(DType t);

} // namespace kgen

#endif // KGEN_DSL_DTYPE_H
