#include "core/model/json_reader.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/exec/parallel.h"
#include "gtest/gtest.h"
#include "tests/core/json_text_generator.h"
#include "rapidjson/error/en.h"
#include "rapidjson/memorystream.h"
#include "rapidjson/reader.h"

namespace shardplan::json {
namespace {

std::string Spelled(std::string_view s) { return "s" + std::to_string(s.size()) + ":" + std::string(s); }

// A canonical spelling of a value: what the reader and RapidJSON reading the
// whole text must agree on.
std::string Canonical(const Value& v) {
  switch (v.type()) {
    case Value::Type::kNull:
      return "n";
    case Value::Type::kBool:
      return v.GetBool() ? "t" : "f";
    case Value::Type::kNumber:
      return v.IsInt64() ? "i" + std::to_string(v.GetInt64()) : "d";
    case Value::Type::kString:
      return Spelled(v.str());
    case Value::Type::kArray: {
      std::string out = "[";
      for (size_t i = 0; i < v.Size(); ++i) out += Canonical(v[i]) + ",";
      return out + "]";
    }
    case Value::Type::kObject: {
      std::string out = "{";
      for (const Member* m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
        out += Spelled(m->name.str()) + ":" + Canonical(m->value) + ",";
      }
      return out + "}";
    }
  }
  return "?";
}

// The same spelling from RapidJSON's events, reading the whole text. A
// number whose spelling strtod makes infinite stops it, as the reader
// refuses one.
struct CanonicalHandler : rapidjson::BaseReaderHandler<rapidjson::UTF8<>, CanonicalHandler> {
  CanonicalHandler(const std::string& text, const rapidjson::MemoryStream& stream) : text(text), stream(stream) {}
  bool Null() { return Add("n"); }
  bool Bool(bool b) { return Add(b ? "t" : "f"); }
  bool Int(int i) { return Add("i" + std::to_string(i)); }
  bool Uint(unsigned u) { return Add("i" + std::to_string(u)); }
  bool Int64(int64_t i) { return Add("i" + std::to_string(i)); }
  bool Uint64(uint64_t u) { return Add(u <= INT64_MAX ? "i" + std::to_string(u) : "d"); }
  bool Double(double) {
    // The number ends at the cursor (the stream is not copied while read).
    size_t start = stream.Tell();
    while (start > 0 && std::strchr("0123456789+-.eE", text[start - 1]) != nullptr) --start;
    too_big = std::isinf(std::strtod(text.substr(start, stream.Tell() - start).c_str(), nullptr));
    return !too_big && Add("d");
  }
  bool String(const char* s, rapidjson::SizeType n, bool) { return Add(Spelled({s, n})); }
  bool Key(const char* s, rapidjson::SizeType n, bool) {
    out += Spelled({s, n}) + ":";
    return true;
  }
  bool StartObject() { return Open("{"); }
  bool EndObject(rapidjson::SizeType) { return Close("}"); }
  bool StartArray() { return Open("["); }
  bool EndArray(rapidjson::SizeType) { return Close("]"); }

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
  const std::string& text;
  const rapidjson::MemoryStream& stream;
  std::string out;
  int depth = 0;
  bool too_big = false;
};

struct Outcome {
  std::string canonical;  // when there is no error
  std::string error;      // RapidJSON's message, or "" for none
  size_t offset = 0;
};

// RapidJSON on the whole text.
Outcome ViaRapidJson(const std::string& text) {
  rapidjson::MemoryStream stream(text.data(), text.size());
  rapidjson::Reader reader;
  CanonicalHandler handler(text, stream);
  const rapidjson::ParseResult result = reader.Parse(stream, handler);
  if (!result.IsError()) return {handler.out, "", 0};
  const rapidjson::ParseErrorCode code =
      handler.too_big ? rapidjson::kParseErrorNumberTooBig : result.Code();
  return {"", rapidjson::GetParseError_En(code), result.Offset()};
}

// What the sink took, per section: the members' canonical spellings.
struct Taken {
  std::array<std::string, 4> members;
  std::array<std::string, 4> last_value;
  size_t count = 0;
};

bool Take(Taken& taken, Section section, absl::Span<const Item> items) {
  const size_t s = static_cast<size_t>(section);
  for (const Item& item : items) {
    const std::string value = item.unread ? taken.last_value[s] : Canonical(item.value);
    taken.members[s] += Spelled(item.key) + ":" + value + ",";
    taken.last_value[s] = value;
    ++taken.count;
  }
  return true;
}

// The skeleton's spelling with the streamed maps' members put back where
// they stood (each map appears once at most in the texts tested).
std::string Reassembled(const Value& skeleton, const Taken& taken) {
  if (!skeleton.IsObject()) return Canonical(skeleton);
  auto map = [&](Section s) { return "{" + taken.members[static_cast<size_t>(s)] + "}"; };
  std::string out = "{";
  for (const Member* m = skeleton.MemberBegin(); m != skeleton.MemberEnd(); ++m) {
    const std::string_view name = m->name.str();
    std::string value;
    if ((name == "parameters" || name == "modules") && m->value.IsObject()) {
      value = map(name == "parameters" ? Section::kParameters : Section::kModules);
    } else if ((name == "providers" || name == "plan") && m->value.IsObject()) {
      value = "{";
      for (const Member* i = m->value.MemberBegin(); i != m->value.MemberEnd(); ++i) {
        const bool streamed = i->name.str() == (name == "plan" ? "modules" : "sharding") && i->value.IsObject();
        value += Spelled(i->name.str()) + ":" +
                 (streamed ? map(name == "plan" ? Section::kPlan : Section::kProviders) : Canonical(i->value)) + ",";
      }
      value += "}";
    } else {
      value = Canonical(m->value);
    }
    out += Spelled(name) + ":" + value + ",";
  }
  return out + "}";
}

Outcome ViaReader(const std::string& text, int max_depth = 64) {
  DocumentReader reader(text, max_depth);
  Taken taken;
  Value skeleton;
  if (!reader.Read([&](Section s, absl::Span<const Item> items) { return Take(taken, s, items); }, skeleton)) {
    EXPECT_TRUE(reader.error().has_value());
    if (!reader.error()) return {};
    return {"", reader.error()->too_deep ? "too deep" : std::string(reader.error()->message), reader.error()->offset};
  }
  return {Reassembled(skeleton, taken), "", 0};
}

// Random JSON-like documents: objects with the streamed maps among other
// members, or other values; escapes, numbers at the edges of int64 and of
// double, whitespace, layouts repeated byte for byte; then sometimes broken
// by a mutation.
class Generator : public JsonTextGenerator {
 public:
  explicit Generator(uint32_t seed) : JsonTextGenerator(seed, /*double_edges=*/true) {}

  std::string Text() { return Mutated(Pick(8) == 0 ? Value(0) : Document()); }

 private:
  std::string Document() {
    std::vector<std::string> keys = {"schema", "parameters", "modules", "providers", "plan", "root"};
    std::shuffle(keys.begin(), keys.end(), rng_);
    keys.resize(static_cast<size_t>(Pick(7)));
    std::string s = "{" + Space();
    for (size_t i = 0; i < keys.size(); ++i) {
      if (i > 0) s += "," + Space();
      std::string value;
      if (keys[i] == "parameters" || keys[i] == "modules") {
        value = Map(false);
      } else if (keys[i] == "providers" || keys[i] == "plan") {
        value = "{" + Space() + "\"" + (keys[i] == "plan" ? "modules" : "sharding") + "\"" + Space() + ":" + Space() +
                Map(true) + (Pick(2) ? ", \"native\": " + Value(1) : "") + Space() + "}";
      } else {
        value = Value(1);
      }
      s += "\"" + keys[i] + "\"" + Space() + ":" + Space() + value;
    }
    return s + Space() + "}";
  }
  // A streamed map: a few members, or many (more than a batch), whose
  // values repeat the one before them now and then.
  std::string Map(bool layouts) {
    const int n = Pick(10) == 0 ? 300 + Pick(300) : Pick(6);
    std::string s = "{" + Space(), previous;
    for (int i = 0; i < n; ++i) {
      if (i > 0) s += "," + Space();
      std::string value = !previous.empty() && Pick(3) == 0 ? previous : layouts ? Object(2) : Value(2);
      s += String() + Space() + ":" + Space() + value;
      previous = value;
    }
    return s + Space() + "}";
  }
};

// RapidJSON reading the whole text is the oracle: the same values, or the
// same error at the same offset, on valid and broken texts, on one thread
// and on several.
TEST(JsonReaderTest, AgreesWithRapidJsonOnRandomDocuments) {
  for (int threads : {1, 2}) {
    WithThreads(threads, [&] {
      Generator gen(20261130 + threads);
      int errors = 0;
      for (int i = 0; i < 6000; ++i) {
        const std::string text = gen.Text();
        const Outcome expected = ViaRapidJson(text);
        const Outcome got = ViaReader(text);
        ASSERT_EQ(got.error, expected.error) << "text: " << text;
        ASSERT_EQ(got.offset, expected.offset) << "text: " << text << "\n" << got.error;
        ASSERT_EQ(got.canonical, expected.canonical) << "text: " << text;
        errors += !got.error.empty();
      }
      // Both kinds of text were tried.
      EXPECT_GT(errors, 1000);
      EXPECT_LT(errors, 5000);
    });
  }
}

// A string with an escape, a control character, UTF-8 or its closing quote
// at each position, as a value and as a member name in a streamed map.
TEST(JsonReaderTest, AgreesWithRapidJsonOnEveryStringLengthAndSpecialPosition) {
  for (const std::string special : {"\\n", "\\\"", "\x01", "\x1f", "\xc3\xa9", "\xe2\x82\xac", " ", "\x7f"}) {
    for (size_t length = 0; length < 24; ++length) {
      for (size_t at = 0; at <= length; ++at) {
        std::string body(length, 'a');
        body.insert(at, special);
        for (const std::string& text :
             {"\"" + body + "\"", "[\"" + body + "\", 1]", "\"" + body, "{\"modules\": {\"" + body + "\": 1}}",
              "{\"modules\": {\"m\": \"" + body + "\"}}", "{\"modules\": {\"" + body}) {
          const Outcome expected = ViaRapidJson(text);
          const Outcome got = ViaReader(text);
          ASSERT_EQ(got.error, expected.error) << text;
          ASSERT_EQ(got.offset, expected.offset) << text;
          ASSERT_EQ(got.canonical, expected.canonical) << text;
        }
      }
    }
  }
}

// Truncated at every offset, a document gives RapidJSON's error there.
TEST(JsonReaderTest, EveryTruncationGivesRapidJsonsError) {
  const std::string text =
      R"J({"schema": "shardplan.v1", "mesh": {"tp": 2}, "parameters": {"w": {"shape": [8, -4.5e1]}},)J"
      R"J( "modules": {"m\u00e9": {"params": {"weight": "w"}}, "n": {}}, "providers": {"sharding": {"a":)J"
      R"J( {"params": null}, "b": {"params": null}}, "native": []}, "plan": {"modules": {}}, "root": "m"})J";
  ASSERT_EQ(ViaReader(text).error, "");
  for (size_t size = 0; size < text.size(); ++size) {
    const std::string cut = text.substr(0, size);
    const Outcome expected = ViaRapidJson(cut);
    const Outcome got = ViaReader(cut);
    ASSERT_EQ(got.error, expected.error) << cut;
    ASSERT_EQ(got.offset, expected.offset) << cut;
  }
}

TEST(JsonReaderTest, StringsAreDecodedAndNeverNull) {
  const std::string text = R"J({"modules": {"plain": "tp", "esc\"aped": "a\nb", "x\\": "\u00e9\"", "": ""}})J";
  DocumentReader reader(text, 10);
  std::vector<std::pair<std::string, std::string>> taken;
  Value skeleton;
  ASSERT_TRUE(reader.Read(
      [&](Section, absl::Span<const Item> items) {
        for (const Item& item : items) {
          taken.emplace_back(item.key, item.value.str());
          // An empty string has a place too: a view with null data stands
          // for an array index in the parser's pointers.
          EXPECT_NE(item.key.data(), nullptr);
          EXPECT_NE(item.value.str().data(), nullptr);
        }
        return true;
      },
      skeleton));
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(taken, (std::vector<P>{P{"plain", "tp"}, P{"esc\"aped", "a\nb"}, P{"x\\", "\xc3\xa9\""}, P{"", ""}}));
}

TEST(JsonReaderTest, NestingBeyondTheLimitIsRefusedAfterItsBracket) {
  EXPECT_EQ(ViaReader("[[[]]]", 3).error, "");
  Outcome deep = ViaReader("[[[[]]]]", 3);
  EXPECT_EQ(deep.error, "too deep");
  EXPECT_EQ(deep.offset, 4u);
  // The document and its streamed maps count: parameters is 2 deep, a
  // provider's layout 4.
  EXPECT_EQ(ViaReader(R"({"parameters": {"w": {}}})", 3).error, "");
  deep = ViaReader(R"({"parameters": {"w": {"a": []}}})", 3);
  EXPECT_EQ(deep.error, "too deep");
  EXPECT_EQ(deep.offset, 28u);
  deep = ViaReader(R"({"providers": {"sharding": {"": {}}}})", 3);
  EXPECT_EQ(deep.error, "too deep");
  EXPECT_EQ(deep.offset, 33u);
  deep = ViaReader(R"({"modules": {}})", 1);
  EXPECT_EQ(deep.error, "too deep");
  EXPECT_EQ(deep.offset, 13u);
}

TEST(JsonReaderTest, NumbersThatRoundToInfinityAreTooBig) {
  for (const char* text : {"[1, 2e400]", "[1, 2e308]", "[1, -1.7976931348623159e308]", "[1, 1000e306]"}) {
    const Outcome got = ViaReader(text);
    EXPECT_EQ(got.error, "Number too big to be stored in double.") << text;
    EXPECT_EQ(got.offset, 4u) << text;
  }
  for (const char* text : {"1e-400", "1.7976931348623157e308", "-1e308", "0.1e309"}) {
    EXPECT_EQ(ViaReader(text).canonical, "d") << text;
  }
}

// Members come in document order across batches; after a refusal none is
// read, and the reading fails without a syntax error.
TEST(JsonReaderTest, TheSinkTakesMembersInOrderAndCanStopTheReading) {
  std::string text = "{\"modules\": {";
  for (int i = 0; i < 2000; ++i) text += (i ? ", \"m" : "\"m") + std::to_string(i) + "\": {\"i\": " + std::to_string(i) + "}";
  text += "}}";
  for (int threads : {1, 2}) {
    WithThreads(threads, [&] {
      DocumentReader reader(text, 10);
      int next = 0;
      Value skeleton;
      EXPECT_FALSE(reader.Read(
          [&](Section section, absl::Span<const Item> items) {
            EXPECT_EQ(section, Section::kModules);
            for (const Item& item : items) {
              EXPECT_EQ(item.key, "m" + std::to_string(next));
              EXPECT_EQ(item.value.MemberBegin()->value.GetInt64(), next);
              if (++next == 1500) return false;
            }
            return true;
          },
          skeleton));
      EXPECT_FALSE(reader.error().has_value());
      EXPECT_EQ(next, 1500);
    });
  }
}

}  // namespace
}  // namespace shardplan::json
