//===- FuzzJson.cpp - libFuzzer target: the runtime's JSON reader ---------===//
//
// Fuzz bytes are a JSON text for kgen::rt::json::parse. Besides the
// sanitizers' checks, a document it accepts must print back (below) to a
// text it accepts again as the same value, and a refusal must say where.
//
//===----------------------------------------------------------------------===//

#include "JsonPrint.h"

#include "runtime/Json.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

using kgen::rt::json::Value;

namespace {

[[noreturn]] void violated(const char *what, std::string_view text) {
  std::fprintf(stderr, "kgen-libfuzzer-json: %s\n  text: %.*s\n", what,
               static_cast<int>(text.size() > 400 ? 400 : text.size()),
               text.data());
  std::abort();
}

bool same(const Value &a, const Value &b) {
  if (a.kind != b.kind)
    return false;
  switch (a.kind) {
  case Value::Kind::Null:
    return true;
  case Value::Kind::Bool:
    return a.boolean == b.boolean;
  case Value::Kind::Number:
    return a.number == b.number && a.isInteger == b.isInteger &&
           (!a.isInteger || a.integer == b.integer);
  case Value::Kind::String:
    return a.string == b.string;
  case Value::Kind::Array:
    if (a.array.size() != b.array.size())
      return false;
    for (size_t i = 0; i < a.array.size(); ++i)
      if (!same(a.array[i], b.array[i]))
        return false;
    return true;
  case Value::Kind::Object:
    if (a.object.size() != b.object.size())
      return false;
    for (size_t i = 0; i < a.object.size(); ++i)
      if (a.object[i].first != b.object[i].first ||
          !same(a.object[i].second, b.object[i].second))
        return false;
    return true;
  }
  return false;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  Value v;
  std::string err;
  if (!kgen::rt::json::parse(text, v, err)) {
    if (err.rfind("line ", 0) != 0 && err.find("-byte limit") == err.npos)
      violated(("a refusal that says no place: " + err).c_str(), text);
    return 0;
  }
  std::string printed;
  kgen::fuzz::printJson(v, printed);
  Value again;
  if (!kgen::rt::json::parse(printed, again, err))
    violated(("its printed value is refused: " + err +
              "\n  printed: " + printed.substr(0, 400))
                 .c_str(),
             text);
  if (!same(v, again))
    violated(("its printed value reads back differently\n  printed: " +
              printed.substr(0, 400))
                 .c_str(),
             text);
  // Every member is found by its first occurrence (keys are unique).
  if (v.kind == Value::Kind::Object)
    for (const auto &m : v.object)
      if (v.find(m.first) != &m.second)
        violated("find() does not return a member's value", text);
  return 0;
}
