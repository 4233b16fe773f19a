//===- JsonPrint.h - Print a JSON value for the fuzz targets ----*- C++ -*-===//
//
// Compact JSON text of a kgen::rt::json::Value that the reader reads back as
// the same value (integers as integers, other numbers with an exponent).
//
//===----------------------------------------------------------------------===//

#ifndef KGEN_TEST_FUZZ_JSONPRINT_H
#define KGEN_TEST_FUZZ_JSONPRINT_H

#include "runtime/Json.h"

#include <cstdio>
#include <string>

namespace kgen::fuzz {

using kgen::rt::json::Value;

inline void printJson(const Value &v, std::string &out) {
  switch (v.kind) {
  case Value::Kind::Null:
    out += "null";
    return;
  case Value::Kind::Bool:
    out += v.boolean ? "true" : "false";
    return;
  case Value::Kind::Number: {
    char buf[64];
    if (v.isInteger) {
      std::snprintf(buf, sizeof(buf), "%lld",
                    static_cast<long long>(v.integer));
    } else {
      // %.17e round-trips a double; its exponent keeps it a non-integer.
      std::snprintf(buf, sizeof(buf), "%.17e", v.number);
    }
    out += buf;
    return;
  }
  case Value::Kind::String:
    out += '"';
    for (char c : v.string) {
      auto u = static_cast<unsigned char>(c);
      if (c == '"' || c == '\\') {
        out += '\\';
        out += c;
      } else if (u < 0x20) {
        char esc[8];
        std::snprintf(esc, sizeof(esc), "\\u%04x", u);
        out += esc;
      } else {
        out += c; // the reader checked that it is UTF-8
      }
    }
    out += '"';
    return;
  case Value::Kind::Array:
    out += '[';
    for (size_t i = 0; i < v.array.size(); ++i) {
      if (i)
        out += ',';
      printJson(v.array[i], out);
    }
    out += ']';
    return;
  case Value::Kind::Object:
    out += '{';
    for (size_t i = 0; i < v.object.size(); ++i) {
      if (i)
        out += ',';
      Value key;
      key.kind = Value::Kind::String;
      key.string = v.object[i].first;
      printJson(key, out);
      out += ':';
      printJson(v.object[i].second, out);
    }
    out += '}';
    return;
  }
}

} // namespace kgen::fuzz

#endif // KGEN_TEST_FUZZ_JSONPRINT_H
