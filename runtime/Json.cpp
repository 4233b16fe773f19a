//===- Json.cpp - A small strict JSON reader ------------------------------===//

#include "runtime/Json.h"

#include <charconv>
#include <unordered_set>

namespace kgen::rt::json {
namespace {

// Bounds the recursion so hostile input cannot overflow the stack: values
// nest at most MaxDepth deep (a bare scalar is depth 0).
constexpr int MaxDepth = 64;
// Specs are kilobytes; the cap bounds the memory a hostile one takes.
constexpr size_t MaxBytes = size_t(4) << 20;

/// The length of the well-formed UTF-8 sequence at s[i] (a byte >= 0x80),
/// or 0: no overlong forms, no surrogates, nothing past U+10FFFF.
size_t utf8Length(std::string_view s, size_t i) {
  auto at = [&](size_t k) -> unsigned {
    return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0;
  };
  auto cont = [&](size_t k) { return (at(k) & 0xC0) == 0x80; };
  unsigned c = at(0);
  if (c >= 0xC2 && c <= 0xDF)
    return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return at(1) >= lo && at(1) <= hi && cont(2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return at(1) >= lo && at(1) <= hi && cont(2) && cont(3) ? 4 : 0;
  }
  return 0;
}

class Parser {
public:
  explicit Parser(std::string_view text) : text(text) {}

  bool parseDocument(Value &out) {
    skipSpace();
    if (!parseValue(out, 0))
      return false;
    skipSpace();
    if (pos != text.size())
      return fail("unexpected text after the JSON value");
    return true;
  }

  std::string error;

private:
  std::string_view text;
  size_t pos = 0;

  bool fail(const std::string &what) { return failAt(pos, what); }

  bool failAt(size_t at, const std::string &what) {
    size_t line = 1, column = 1;
    for (size_t i = 0; i < at && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    error = "line " + std::to_string(line) + ", column " +
            std::to_string(column) + " (offset " + std::to_string(at) +
            "): " + what;
    return false;
  }

  bool atEnd() const { return pos >= text.size(); }
  char peek() const { return atEnd() ? '\0' : text[pos]; }

  std::string describeHere() const {
    if (atEnd())
      return "end of input";
    unsigned char c = static_cast<unsigned char>(text[pos]);
    if (c < 0x20 || c >= 0x7f) {
      static const char *hex = "0123456789abcdef";
      return std::string("byte 0x") + hex[c >> 4] + hex[c & 15];
    }
    return std::string("'") + text[pos] + "'";
  }

  void skipSpace() {
    while (!atEnd() && (text[pos] == ' ' || text[pos] == '\t' ||
                        text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }

  bool expectLiteral(std::string_view word) {
    if (text.substr(pos, word.size()) != word)
      return fail("invalid literal, expected '" + std::string(word) + "'");
    pos += word.size();
    return true;
  }

  bool parseValue(Value &out, int depth) {
    if (depth >= MaxDepth)
      return fail("nesting deeper than " + std::to_string(MaxDepth));
    switch (peek()) {
    case '{':
      return parseObject(out, depth);
    case '[':
      return parseArray(out, depth);
    case '"':
      out.kind = Value::Kind::String;
      return parseString(out.string);
    case 't':
      out.kind = Value::Kind::Bool;
      out.boolean = true;
      return expectLiteral("true");
    case 'f':
      out.kind = Value::Kind::Bool;
      out.boolean = false;
      return expectLiteral("false");
    case 'n':
      out.kind = Value::Kind::Null;
      return expectLiteral("null");
    default:
      if (peek() == '-' || (peek() >= '0' && peek() <= '9'))
        return parseNumber(out);
      return fail("expected a JSON value, found " + describeHere());
    }
  }

  bool parseObject(Value &out, int depth) {
    out.kind = Value::Kind::Object;
    ++pos; // '{'
    skipSpace();
    if (peek() == '}') {
      ++pos;
      return true;
    }
    // The keys seen, so that duplicates are found in linear time.
    std::unordered_set<std::string> keys;
    while (true) {
      skipSpace();
      if (peek() != '"')
        return fail("expected a string key, found " + describeHere());
      size_t keyPos = pos;
      std::string key;
      if (!parseString(key))
        return false;
      if (!keys.insert(key).second)
        return failAt(keyPos, "duplicate key \"" + key + "\"");
      skipSpace();
      if (peek() != ':')
        return fail("expected ':' after a key, found " + describeHere());
      ++pos;
      skipSpace();
      out.object.emplace_back(std::move(key), Value());
      if (!parseValue(out.object.back().second, depth + 1))
        return false;
      skipSpace();
      if (peek() == ',') {
        ++pos;
        continue;
      }
      if (peek() == '}') {
        ++pos;
        return true;
      }
      return fail("expected ',' or '}' in an object, found " + describeHere());
    }
  }

  bool parseArray(Value &out, int depth) {
    out.kind = Value::Kind::Array;
    ++pos; // '['
    skipSpace();
    if (peek() == ']') {
      ++pos;
      return true;
    }
    while (true) {
      skipSpace();
      out.array.emplace_back();
      if (!parseValue(out.array.back(), depth + 1))
        return false;
      skipSpace();
      if (peek() == ',') {
        ++pos;
        continue;
      }
      if (peek() == ']') {
        ++pos;
        return true;
      }
      return fail("expected ',' or ']' in an array, found " + describeHere());
    }
  }

  static int hexDigit(char c) {
    if (c >= '0' && c <= '9')
      return c - '0';
    if (c >= 'a' && c <= 'f')
      return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
      return c - 'A' + 10;
    return -1;
  }

  bool parseHex4(unsigned &out) {
    out = 0;
    for (int i = 0; i < 4; ++i, ++pos) {
      int d = atEnd() ? -1 : hexDigit(text[pos]);
      if (d < 0)
        return fail("invalid \\u escape: expected 4 hex digits");
      out = out * 16 + static_cast<unsigned>(d);
    }
    return true;
  }

  static void appendUtf8(std::string &s, unsigned cp) {
    if (cp < 0x80) {
      s += static_cast<char>(cp);
    } else if (cp < 0x800) {
      s += static_cast<char>(0xC0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      s += static_cast<char>(0xE0 | (cp >> 12));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      s += static_cast<char>(0xF0 | (cp >> 18));
      s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  bool parseString(std::string &out) {
    size_t start = pos;
    ++pos; // opening quote
    while (true) {
      if (atEnd())
        return failAt(start, "unterminated string");
      char c = text[pos];
      if (c == '"') {
        ++pos;
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("control character in a string (escape it)");
      if (static_cast<unsigned char>(c) >= 0x80) {
        size_t n = utf8Length(text, pos);
        if (!n)
          return fail("invalid UTF-8 in a string");
        out.append(text.substr(pos, n));
        pos += n;
        continue;
      }
      if (c != '\\') {
        out += c;
        ++pos;
        continue;
      }
      ++pos;
      if (atEnd())
        return failAt(start, "unterminated string");
      char e = text[pos];
      switch (e) {
      case '"':
      case '\\':
      case '/':
        out += e;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        ++pos;
        unsigned cp;
        if (!parseHex4(cp))
          return false;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          unsigned low;
          if (text.substr(pos, 2) != "\\u")
            return fail("lone high surrogate in \\u escape");
          pos += 2;
          if (!parseHex4(low))
            return false;
          if (low < 0xDC00 || low > 0xDFFF)
            return fail("invalid low surrogate in \\u escape");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          return fail("lone low surrogate in \\u escape");
        }
        appendUtf8(out, cp);
        continue; // pos already past the escape
      }
      default:
        return fail("invalid escape '\\" + std::string(1, e) + "'");
      }
      ++pos;
    }
  }

  static bool isDigit(char c) { return c >= '0' && c <= '9'; }

  bool parseNumber(Value &out) {
    size_t start = pos;
    bool integral = true;
    if (peek() == '-')
      ++pos;
    if (peek() == '0') {
      ++pos;
      if (isDigit(peek()))
        return fail("leading zeros are not allowed in numbers");
    } else if (isDigit(peek())) {
      while (isDigit(peek()))
        ++pos;
    } else {
      return fail("expected a digit, found " + describeHere());
    }
    if (peek() == '.') {
      integral = false;
      ++pos;
      if (!isDigit(peek()))
        return fail("expected a digit after '.', found " + describeHere());
      while (isDigit(peek()))
        ++pos;
    }
    if (peek() == 'e' || peek() == 'E') {
      integral = false;
      ++pos;
      if (peek() == '+' || peek() == '-')
        ++pos;
      if (!isDigit(peek()))
        return fail("expected a digit in the exponent, found " +
                    describeHere());
      while (isDigit(peek()))
        ++pos;
    }
    // from_chars is locale-independent, unlike strtod.
    const char *first = text.data() + start;
    const char *last = text.data() + pos;
    out.kind = Value::Kind::Number;
    if (integral) {
      auto [ptr, ec] = std::from_chars(first, last, out.integer);
      out.isInteger = ec == std::errc() && ptr == last;
    }
    auto [ptr, ec] = std::from_chars(first, last, out.number);
    if (ec == std::errc::result_out_of_range)
      return failAt(start, "number out of range");
    if (ec != std::errc() || ptr != last)
      return failAt(start, "invalid number");
    return true;
  }
};

} // namespace

const Value *Value::find(std::string_view key) const {
  for (const auto &member : object)
    if (member.first == key)
      return &member.second;
  return nullptr;
}

const char *kindName(Value::Kind kind) {
  switch (kind) {
  case Value::Kind::Null:
    return "null";
  case Value::Kind::Bool:
    return "boolean";
  case Value::Kind::Number:
    return "number";
  case Value::Kind::String:
    return "string";
  case Value::Kind::Array:
    return "array";
  case Value::Kind::Object:
    return "object";
  }
  return "value";
}

bool parse(std::string_view text, Value &out, std::string &err) {
  out = Value();
  if (text.size() > MaxBytes) {
    err = std::to_string(text.size()) + " bytes is past the " +
          std::to_string(MaxBytes) + "-byte limit of a spec";
    return false;
  }
  Parser parser(text);
  if (!parser.parseDocument(out)) {
    err = parser.error;
    return false;
  }
  return true;
}

} // namespace kgen::rt::json
