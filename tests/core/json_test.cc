#include "core/model/json.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/core/json_text_generator.h"
#include "rapidjson/error/en.h"
#include "rapidjson/reader.h"

namespace shardplan::json {
namespace {

// A canonical spelling of a value: what the two readers must agree on.
std::string Canonical(const Value& v) {
  switch (v.type()) {
    case Value::Type::kNull:
      return "n";
    case Value::Type::kBool:
      return v.GetBool() ? "t" : "f";
    case Value::Type::kNumber:
      return v.IsInt64() ? "i" + std::to_string(v.GetInt64()) : "d";
    case Value::Type::kString:
      return "s" + std::to_string(v.str().size()) + ":" + std::string(v.str());
    case Value::Type::kArray: {
      std::string out = "[";
      for (size_t i = 0; i < v.Size(); ++i) out += Canonical(v[i]) + ",";
      return out + "]";
    }
    case Value::Type::kObject: {
      std::string out = "{";
      for (const Member* m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
        out += Canonical(m->name) + ":" + Canonical(m->value) + ",";
      }
      return out + "}";
    }
  }
  return "?";
}

// The same spelling, from RapidJSON's events.
struct CanonicalHandler : rapidjson::BaseReaderHandler<rapidjson::UTF8<>, CanonicalHandler> {
  bool Null() { return Add("n"); }
  bool Bool(bool b) { return Add(b ? "t" : "f"); }
  bool Int(int i) { return Add("i" + std::to_string(i)); }
  bool Uint(unsigned u) { return Add("i" + std::to_string(u)); }
  bool Int64(int64_t i) { return Add("i" + std::to_string(i)); }
  bool Uint64(uint64_t u) { return Add(u <= INT64_MAX ? "i" + std::to_string(u) : "d"); }
  bool Double(double) { return Add("d"); }
  bool String(const char* s, rapidjson::SizeType n, bool) { return Add(Spelled(s, n)); }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    out += Spelled(s, n) + ":";
    return true;
  }
  bool StartObject() { return Open("{"); }
  bool EndObject(rapidjson::SizeType) { return Close("}"); }
  bool StartArray() { return Open("["); }
  bool EndArray(rapidjson::SizeType) { return Close("]"); }

  static std::string Spelled(const char* s, rapidjson::SizeType n) {
    return "s" + std::to_string(n) + ":" + std::string(s, n);
  }
  bool Open(const char* bracket) {
    out += bracket;
    ++depth;
    return true;
  }
  bool Close(const char* bracket) {
    --depth;
    return Add(bracket);
  }
  // A complete value: inside a container, a separator follows it.
  bool Add(const std::string& s) {
    out += s;
    if (depth > 0) out += ",";
    return true;
  }
  std::string out;
  int depth = 0;
};

std::string ViaRapidJson(const std::string& text, rapidjson::ParseErrorCode& code, size_t& offset) {
  rapidjson::StringStream stream(text.c_str());
  rapidjson::Reader reader;
  CanonicalHandler handler;
  rapidjson::ParseResult result = reader.Parse(stream, handler);
  code = result.Code();
  offset = result.Offset();
  return handler.out;
}

// A whole text as the document reader reads its values.
std::string ViaReader(const std::string& text, Error& error, size_t& offset) {
  Reader reader(text, 1000);
  Value v;
  std::string out;
  reader.SkipSpace();
  if (reader.Peek() == '\0') {
    reader.Fail(Error::kDocumentEmpty);
  } else if (reader.ReadValue(v, 0)) {
    out = Canonical(v);
    reader.SkipSpace();
    if (reader.Peek() != '\0') reader.Fail(Error::kRootNotSingular);
  }
  error = reader.error();
  offset = reader.error_offset();
  return out;
}

rapidjson::ParseErrorCode ToRapidJson(Error e) {
  switch (e) {
    case Error::kNone:
      return rapidjson::kParseErrorNone;
    case Error::kDocumentEmpty:
      return rapidjson::kParseErrorDocumentEmpty;
    case Error::kRootNotSingular:
      return rapidjson::kParseErrorDocumentRootNotSingular;
    case Error::kValueInvalid:
      return rapidjson::kParseErrorValueInvalid;
    case Error::kObjectMissName:
      return rapidjson::kParseErrorObjectMissName;
    case Error::kObjectMissColon:
      return rapidjson::kParseErrorObjectMissColon;
    case Error::kObjectMissCommaOrCurlyBracket:
      return rapidjson::kParseErrorObjectMissCommaOrCurlyBracket;
    case Error::kArrayMissCommaOrSquareBracket:
      return rapidjson::kParseErrorArrayMissCommaOrSquareBracket;
    case Error::kStringUnicodeEscapeInvalidHex:
      return rapidjson::kParseErrorStringUnicodeEscapeInvalidHex;
    case Error::kStringUnicodeSurrogateInvalid:
      return rapidjson::kParseErrorStringUnicodeSurrogateInvalid;
    case Error::kStringEscapeInvalid:
      return rapidjson::kParseErrorStringEscapeInvalid;
    case Error::kStringMissQuotationMark:
      return rapidjson::kParseErrorStringMissQuotationMark;
    case Error::kNumberTooBig:
      return rapidjson::kParseErrorNumberTooBig;
    case Error::kNumberMissFraction:
      return rapidjson::kParseErrorNumberMissFraction;
    case Error::kNumberMissExponent:
      return rapidjson::kParseErrorNumberMissExponent;
    case Error::kTooDeep:
      return rapidjson::kParseErrorTermination;
  }
  return rapidjson::kParseErrorTermination;
}

// RapidJSON is the oracle: the same values, or the same error at the same
// offset, on valid and broken texts.
TEST(JsonTest, AgreesWithRapidJsonOnRandomTexts) {
  JsonTextGenerator gen(20261130);
  int errors = 0;
  for (int i = 0; i < 30000; ++i) {
    const std::string text = gen.Text();
    rapidjson::ParseErrorCode expected_code;
    size_t expected_offset, offset;
    Error error;
    const std::string expected = ViaRapidJson(text, expected_code, expected_offset);
    const std::string got = ViaReader(text, error, offset);
    ASSERT_EQ(ToRapidJson(error), expected_code)
        << "text: " << text << "\nours: " << ErrorMessage(error) << "\nRapidJSON: "
        << rapidjson::GetParseError_En(expected_code);
    if (error == Error::kNone) {
      ASSERT_EQ(got, expected) << "text: " << text;
    } else {
      ASSERT_EQ(offset, expected_offset) << "text: " << text << "\n" << ErrorMessage(error);
      ++errors;
    }
  }
  // Both kinds of text were tried.
  EXPECT_GT(errors, 5000);
  EXPECT_LT(errors, 25000);
}

// Every length and position around the 16-byte scan: an escape,
// a control character, UTF-8 or the closing quote at each offset.
TEST(JsonTest, AgreesWithRapidJsonOnEveryStringLengthAndSpecialPosition) {
  for (const std::string special : {"\\n", "\x01", "\x1f", "\xc3\xa9", "\xe2\x82\xac", " ", "\x7f"}) {
    for (size_t length = 0; length < 40; ++length) {
      for (size_t at = 0; at <= length; ++at) {
        std::string body(length, 'a');
        body.insert(at, special);
        for (const std::string& text : {"\"" + body + "\"", "[\"" + body + "\", 1]", "\"" + body}) {
          rapidjson::ParseErrorCode expected_code;
          size_t expected_offset, offset;
          Error error;
          const std::string expected = ViaRapidJson(text, expected_code, expected_offset);
          const std::string got = ViaReader(text, error, offset);
          ASSERT_EQ(ToRapidJson(error), expected_code) << text;
          if (error == Error::kNone) {
            ASSERT_EQ(got, expected) << text;
          } else {
            ASSERT_EQ(offset, expected_offset) << text;
          }
        }
      }
    }
  }
}

TEST(JsonTest, StringsAreViewsOfTheTextUnlessEscaped) {
  const std::string text = R"J({"plain": "tp", "escaped": "a\nb"})J";
  Reader reader(text, 10);
  Value v;
  ASSERT_TRUE(reader.ReadValue(v, 0));
  ASSERT_EQ(v.MemberCount(), 2u);
  const std::string_view plain = v.MemberBegin()[0].value.str();
  EXPECT_EQ(plain, "tp");
  EXPECT_GE(plain.data(), text.data());
  EXPECT_LT(plain.data(), text.data() + text.size());
  EXPECT_EQ(v.MemberBegin()[1].value.str(), "a\nb");
}

TEST(JsonTest, NestingBeyondTheLimitIsRefusedAfterItsBracket) {
  Reader ok("[[[]]]", 3);
  Value v;
  EXPECT_TRUE(ok.ReadValue(v, 0));
  Reader deep("[[[[]]]]", 3);
  EXPECT_FALSE(deep.ReadValue(v, 0));
  EXPECT_EQ(deep.error(), Error::kTooDeep);
  EXPECT_EQ(deep.error_offset(), 4u);
  // Depth counts the containers the value is in.
  Reader inner("[[]]", 3);
  EXPECT_FALSE(inner.ReadValue(v, 2));
}

TEST(JsonTest, NumbersBeyondDoubleAreRefused) {
  Reader reader("[1, 2e400]", 10);
  Value v;
  EXPECT_FALSE(reader.ReadValue(v, 0));
  EXPECT_EQ(reader.error(), Error::kNumberTooBig);
  EXPECT_EQ(reader.error_offset(), 4u);
  Reader tiny("1e-400", 10);
  EXPECT_TRUE(tiny.ReadValue(v, 0));
  EXPECT_FALSE(v.IsInt64());
}

// Items read between a mark and its release reuse the same memory, and
// what was read before the mark stays intact.
TEST(JsonTest, ReleaseReusesTheArena) {
  const std::string item = R"J({"a": [1, 2, {"b": "c\u00e9"}], "d": null})J";
  std::string text = "[" + item;
  for (int i = 0; i < 1000; ++i) text += ", " + item;
  text += "]";
  Reader reader(text, 10);
  reader.Skip();  // '['
  Value kept;
  ASSERT_TRUE(reader.ReadValue(kept, 1));
  const std::string expected = Canonical(kept);
  const char* decoded = nullptr;
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(reader.Peek(), ',');
    reader.Skip();
    reader.SkipSpace();
    const Reader::Mark mark = reader.GetMark();
    Value v;
    ASSERT_TRUE(reader.ReadValue(v, 1));
    ASSERT_EQ(Canonical(v), expected);
    const char* at = v.MemberBegin()[0].value[2].MemberBegin()[0].value.str().data();
    if (decoded == nullptr) decoded = at;
    ASSERT_EQ(at, decoded) << "item " << i << " was not read into the released memory";
    reader.Release(mark);
  }
  EXPECT_EQ(Canonical(kept), expected);
  EXPECT_EQ(kept.MemberBegin()[0].value[2].MemberBegin()[0].value.str(), "c\xc3\xa9");
}

}  // namespace
}  // namespace shardplan::json
