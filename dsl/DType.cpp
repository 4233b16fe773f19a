//===- DType.cpp ----------------------------------------------------------===//
#include "dsl/DType.h"

namespace kgen {

std::string_view name(DType t) {
  switch (t) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::F8E4M3:
    return "f8e4m3";
  case DType::F8E5M2:
    return "f8e5m2";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  case DType::I8:
    return "i8";
  case DType::Bool:
    return "bool";
  }
  return "?";
}

std::optional<DType> parseDType(std::string_view s) {
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F8E4M3,
                  DType::F8E5M2, DType::I32, DType::I64, DType::I8})
    if (name(t) == s)
      return t;
  return std::nullopt;
}

int64_t sizeInBytes(DType t) {
  switch (t) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::I64:
    return 8;
  case DType::F8E4M3:
  case DType::F8E5M2:
  case DType::I8:
  case DType::Bool:
    return 1;
  }
  return 1;
}

bool isFloat(DType t) { return t <= DType::F8E5M2; }
bool isInt(DType t) {
  return t == DType::I32 || t == DType::I64 || t == DType::I8;
}
bool isNarrowFloat(DType t) { return isFloat(t) && t != DType::F32; }

} // namespace kgen
