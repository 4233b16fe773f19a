//===- JsonTest.cpp - The runtime's JSON reader ---------------------------===//

#include "runtime/Json.h"

#include <chrono>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using kgen::rt::json::parse;
using kgen::rt::json::Value;
using ::testing::HasSubstr;

namespace {

std::string parseError(const std::string &text) {
  Value v;
  std::string err;
  EXPECT_FALSE(parse(text, v, err)) << text;
  return err;
}

TEST(Json, ParsesAllKinds) {
  Value v;
  std::string err;
  ASSERT_TRUE(parse(R"( {"a": [1, -2.5, 3e2, true, false, null],
                        "s": "q\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00",
                        "big": 12345678901234567890, "o": {}} )",
                    v, err))
      << err;
  ASSERT_EQ(v.kind, Value::Kind::Object);
  const Value *a = v.find("a");
  ASSERT_TRUE(a);
  ASSERT_EQ(a->array.size(), 6u);
  EXPECT_TRUE(a->array[0].isInteger);
  EXPECT_EQ(a->array[0].integer, 1);
  EXPECT_FALSE(a->array[1].isInteger);
  EXPECT_DOUBLE_EQ(a->array[1].number, -2.5);
  EXPECT_FALSE(a->array[2].isInteger);
  EXPECT_DOUBLE_EQ(a->array[2].number, 300);
  EXPECT_TRUE(a->array[3].boolean);
  EXPECT_EQ(a->array[5].kind, Value::Kind::Null);
  EXPECT_EQ(v.find("s")->string, "q\"\\/\b\f\n\r\t\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_FALSE(v.find("big")->isInteger); // does not fit in int64
  EXPECT_EQ(v.find("o")->kind, Value::Kind::Object);
  EXPECT_EQ(v.find("missing"), nullptr);
}

TEST(Json, ReportsPositions) {
  EXPECT_THAT(parseError("{\"a\": 1,\n \"b\" 2}"),
              HasSubstr("line 2, column 6 (offset 14): expected ':'"));
  EXPECT_THAT(parseError("[1, 2,]"), HasSubstr("column 7"));
  EXPECT_THAT(parseError("{\"a\": 1} x"),
              HasSubstr("unexpected text after the JSON value"));
}

TEST(Json, RejectsMalformedInput) {
  EXPECT_THAT(parseError(""), HasSubstr("end of input"));
  EXPECT_THAT(parseError("{\"a\": 1, \"a\": 2}"), HasSubstr("duplicate key"));
  EXPECT_THAT(parseError("[01]"), HasSubstr("leading zeros"));
  EXPECT_THAT(parseError("[1.]"), HasSubstr("digit after '.'"));
  EXPECT_THAT(parseError("[-]"), HasSubstr("expected a digit"));
  EXPECT_THAT(parseError("[1e]"), HasSubstr("exponent"));
  EXPECT_THAT(parseError("[1e999]"), HasSubstr("out of range"));
  EXPECT_THAT(parseError("\"abc"), HasSubstr("unterminated string"));
  EXPECT_THAT(parseError("\"a\nb\""), HasSubstr("control character"));
  EXPECT_THAT(parseError("\"\\x\""), HasSubstr("invalid escape"));
  EXPECT_THAT(parseError("\"\\u12\""), HasSubstr("4 hex digits"));
  EXPECT_THAT(parseError("\"\\ud800\""), HasSubstr("surrogate"));
  EXPECT_THAT(parseError("[tru]"), HasSubstr("expected 'true'"));
  EXPECT_THAT(parseError("{a: 1}"), HasSubstr("expected a string key"));
  EXPECT_THAT(parseError("[1 2]"), HasSubstr("expected ',' or ']'"));
  EXPECT_THAT(parseError("// c\n{}"), HasSubstr("expected a JSON value"));
  EXPECT_THAT(parseError(std::string(100, '[') + std::string(100, ']')),
              HasSubstr("nesting deeper than"));
}

// Issue 39's audit of the reader: each of these failed before.
TEST(Json, DepthLimitIsExact) {
  Value v;
  std::string err;
  EXPECT_TRUE(parse(std::string(64, '[') + std::string(64, ']'), v, err))
      << err;
  EXPECT_THAT(parseError(std::string(65, '[') + std::string(65, ']')),
              HasSubstr("nesting deeper than 64"));
}

TEST(Json, RefusesInvalidUtf8) {
  Value v;
  std::string err;
  ASSERT_TRUE(parse("\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"", v, err))
      << err;
  EXPECT_EQ(v.string, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
  for (const char *bad :
       {"\"\xff\"", "\"\xc0\x80\"", "\"\xc3\"", "\"\xed\xa0\x80\"",
        "\"\xf4\x90\x80\x80\"", "\"\x80\""})
    EXPECT_THAT(parseError(bad), HasSubstr("invalid UTF-8")) << bad;
}

TEST(Json, CapsTheInputSize) {
  std::string big = "[" + std::string(size_t(4) << 20, ' ') + "]";
  EXPECT_THAT(parseError(big), HasSubstr("-byte limit of a spec"));
}

TEST(Json, DuplicateKeysInLinearTime) {
  // 200000 keys: the quadratic check took minutes; this takes milliseconds.
  std::string text = "{";
  for (int i = 0; i < 200000; ++i)
    text += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":0";
  text += "}";
  Value v;
  std::string err;
  auto t0 = std::chrono::steady_clock::now();
  ASSERT_TRUE(parse(text, v, err)) << err;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_EQ(v.object.size(), 200000u);
  EXPECT_THAT(parseError(text.substr(0, text.size() - 1) + ",\"k7\":1}"),
              HasSubstr("duplicate key \"k7\""));
}

} // namespace
