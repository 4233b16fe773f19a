//===- SourceLocation.h - std::source_location for clang 14 -----*- C++ -*-===//
//
// Force-included (-include) into the fuzz build. clang 14 with libstdc++ 12
// has no std::source_location (it needs clang 15's __builtin_source_location),
// which the DSL's headers use: this stand-in gives them the same members.
//
//===----------------------------------------------------------------------===//

#ifndef KGEN_TEST_FUZZ_SOURCELOCATION_H
#define KGEN_TEST_FUZZ_SOURCELOCATION_H

#if defined(__cplusplus) && __cplusplus > 201703L
#include <source_location>
#ifndef __cpp_lib_source_location
#include <cstdint>

namespace std {
// Adding to std is the point of the stand-in; it only exists where the
// library lacks the type.
struct source_location {
  static constexpr source_location
  current(const char *file = __builtin_FILE(),
          const char *function = __builtin_FUNCTION(),
          uint_least32_t line = __builtin_LINE(),
          uint_least32_t column = __builtin_COLUMN()) noexcept {
    source_location l;
    l.file_ = file;
    l.function_ = function;
    l.line_ = line;
    l.column_ = column;
    return l;
  }
  constexpr source_location() noexcept = default;
  constexpr uint_least32_t line() const noexcept { return line_; }
  constexpr uint_least32_t column() const noexcept { return column_; }
  constexpr const char *file_name() const noexcept { return file_; }
  constexpr const char *function_name() const noexcept { return function_; }

private:
  const char *file_ = "";
  const char *function_ = "";
  uint_least32_t line_ = 0;
  uint_least32_t column_ = 0;
};
} // namespace std

#endif // __cpp_lib_source_location
#endif // C++20
#endif // KGEN_TEST_FUZZ_SOURCELOCATION_H
