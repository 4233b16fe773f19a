//===- Json.h - A small strict JSON reader ----------------------*- C++ -*-===//
//
// Just enough JSON (RFC 8259) for kgen specs, so that the runtime needs no
// third-party library. Strict: no comments, no trailing commas, no duplicate
// keys, no trailing text; errors give line, column and offset.
//
//===----------------------------------------------------------------------===//

#ifndef KGEN_RUNTIME_JSON_H
#define KGEN_RUNTIME_JSON_H

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kgen::rt::json {

class Value {
public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  Kind kind = Kind::Null;
  bool boolean = false;
  double number = 0;
  /// True when the number was written without fraction or exponent and fits
  /// in int64; then `integer` holds it exactly.
  bool isInteger = false;
  int64_t integer = 0;
  std::string string;
  std::vector<Value> array;
  /// Members in document order.
  std::vector<std::pair<std::string, Value>> object;

  /// The member named `key` of an object, or nullptr.
  const Value *find(std::string_view key) const;
};

/// "null", "boolean", "number", "string", "array" or "object".
const char *kindName(Value::Kind kind);

/// Parses `text` into `out`. On failure returns false and sets `err` to
/// "line L, column C (offset O): <what>".
bool parse(std::string_view text, Value &out, std::string &err);

} // namespace kgen::rt::json

#endif // KGEN_RUNTIME_JSON_H
