#include "core/text/json_locate.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "core/text/json_pointer.h"
#include "core/text/utf8.h"
#include "gtest/gtest.h"
#include "tests/support/draws.h"

namespace shardplan {

void PrintTo(const TextPosition& at, std::ostream* os) { *os << at.line << ":" << at.column; }

namespace {

using Positions = std::vector<std::optional<TextPosition>>;

std::optional<TextPosition> At(size_t line, size_t column) { return TextPosition{line, column}; }

std::optional<TextPosition> Locate(std::string_view json, std::string_view pointer) {
  return LocatePointers(json, {pointer})[0];
}

// Pretty-printed, as documents are.
constexpr std::string_view kModel = R"({
  "model": {
    "layers": [
      {"name": "l0", "dims": [4, 8]},
      {"name": "l1"}
    ],
    "tp": 2
  }
})";

TEST(JsonLocateTest, HeaderExample) {
  EXPECT_EQ(LocatePointers("{\n  \"a\": [1, 2]\n}", {"/a/1", "/b", ""}),
            (Positions{At(2, 12), std::nullopt, At(1, 1)}));
}

TEST(JsonLocateTest, NestedObjectsAndArrays) {
  EXPECT_EQ(Locate(kModel, ""), At(1, 1));
  EXPECT_EQ(Locate(kModel, "/model"), At(2, 3));
  EXPECT_EQ(Locate(kModel, "/model/layers"), At(3, 5));
  EXPECT_EQ(Locate(kModel, "/model/layers/0"), At(4, 7));
  EXPECT_EQ(Locate(kModel, "/model/layers/0/name"), At(4, 8));
  EXPECT_EQ(Locate(kModel, "/model/layers/0/dims"), At(4, 22));
  EXPECT_EQ(Locate(kModel, "/model/layers/0/dims/0"), At(4, 31));
  EXPECT_EQ(Locate(kModel, "/model/layers/0/dims/1"), At(4, 34));
  EXPECT_EQ(Locate(kModel, "/model/layers/1"), At(5, 7));
  EXPECT_EQ(Locate(kModel, "/model/layers/1/name"), At(5, 8));
  EXPECT_EQ(Locate(kModel, "/model/tp"), At(7, 5));
}

TEST(JsonLocateTest, ManyPointersInAnyOrderWithDuplicatesAndPrefixes) {
  const std::vector<std::string_view> pointers = {
      "/model/tp",       "/model",        "",          "/model/layers/0/dims/1", "/model/nope", "/model",
      "/model/layers/0", "/model/layers", "/model/tp", "/model/layers/1/name",   "x",           "/model/layers/0/dims"};
  EXPECT_EQ(LocatePointers(kModel, pointers),
            (Positions{At(7, 5), At(2, 3), At(1, 1), At(4, 34), std::nullopt, At(2, 3), At(4, 7), At(3, 5), At(7, 5),
                       At(5, 8), std::nullopt, At(4, 22)}));
}

TEST(JsonLocateTest, NoPointersNoPositions) { EXPECT_EQ(LocatePointers(kModel, {}), Positions{}); }

TEST(JsonLocateTest, KeysAreComparedDecoded) {
  // Each key at column 2 of its own line.
  const std::string text =
      "{\n"
      " \"a/b\": 1,\n"
      " \"m~n\": 2,\n"
      " \"\\u0063\\u00E9\": 3,\n"      // "cé"
      " \"\\ud83d\\ude00\": 4,\n"      // U+1F600, a surrogate pair
      " \"q\\\"u\\\\o\\/t\\n\": 5,\n"  // q"u\o/t and a newline
      " \"~1\": 6,\n"
      " \"\\ud83d\": 7,\n"  // a lone surrogate
      " \"\": 8\n"
      "}";
  EXPECT_EQ(LocatePointers(text, {"/a~1b", "/m~0n", "/c\xc3\xa9", "/\xf0\x9f\x98\x80", "/q\"u\\o~1t\n", "/~01", "/"}),
            (Positions{At(2, 2), At(3, 2), At(4, 2), At(5, 2), At(6, 2), At(7, 2), At(9, 2)}));
  EXPECT_EQ(Locate(R"({"\b\f\r\t\"\\\/": 1})", "/\b\f\r\t\"\\~1"), At(1, 2));
  // Undecoded forms name nothing.
  EXPECT_EQ(LocatePointers(text, {"/a/b", "/m~n", "/\\u0063\\u00E9", "/~1", "/\xed\xa0\xbd"}), Positions(5));
}

TEST(JsonLocateTest, WholeDocumentStartsAfterSpace) {
  EXPECT_EQ(Locate(" \r\n\t [1]", ""), At(2, 3));
  EXPECT_EQ(Locate("7", ""), At(1, 1));
  EXPECT_EQ(Locate("", ""), std::nullopt);
  EXPECT_EQ(Locate(" \n ", ""), std::nullopt);
  EXPECT_EQ(Locate("\xef\xbb\xbf{}", ""), std::nullopt);  // a byte order mark is not JSON
}

TEST(JsonLocateTest, MissingMembersNameNothing) {
  for (std::string_view pointer : {"/nope", "/model/nope", "/model/layers/0/nope", "/model/layers/name", "/model/tp/x",
                                   "/model/layers/0/name/0", "/model/tp/0", "/nope/model"}) {
    EXPECT_EQ(Locate(kModel, pointer), std::nullopt) << pointer;
  }
  // Below a scalar of the document itself.
  EXPECT_EQ(Locate("\"text\"", "/0"), std::nullopt);
}

TEST(JsonLocateTest, IndexesAreDecimalWithoutLeadingZeros) {
  for (std::string_view pointer : {"/model/layers/2", "/model/layers/01", "/model/layers/00", "/model/layers/-",
                                   "/model/layers/+1", "/model/layers/1e0", "/model/layers/ 1", "/model/layers/",
                                   "/model/layers/18446744073709551616", "/model/layers/99999999999999999999999"}) {
    EXPECT_EQ(Locate(kModel, pointer), std::nullopt) << pointer;
  }
  // In an object the same tokens are keys.
  EXPECT_EQ(LocatePointers(R"({"0": 1, "01": 2, "-": 3})", {"/0", "/01", "/-"}),
            (Positions{At(1, 2), At(1, 10), At(1, 19)}));
  EXPECT_EQ(Locate("[]", "/0"), std::nullopt);
  EXPECT_EQ(Locate("[ [], [[] , 5 ] ]", "/1/1"), At(1, 13));
}

TEST(JsonLocateTest, InvalidPointersNameNothing) {
  const std::vector<std::string_view> pointers = {"model", "#/model",  "/model~2", "/model~",
                                                  "~0",    "/~/model", " /model",  "/model"};
  EXPECT_EQ(LocatePointers(kModel, pointers), (Positions{std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                                                         std::nullopt, std::nullopt, std::nullopt, At(2, 3)}));
}

TEST(JsonLocateTest, ColumnsCountCodePoints) {
  // é is two bytes, € three, 😀 four: one column each.
  EXPECT_EQ(Locate("{\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\": 1, \"b\": 2}", "/b"), At(1, 12));
  EXPECT_EQ(Locate("[\"\xf0\x9f\x98\x80\", \"x\"]", "/1"), At(1, 7));
  // The column restarts on the next line.
  EXPECT_EQ(Locate("[\"\xf0\x9f\x98\x80\",\n\"x\"]", "/1"), At(2, 1));
}

TEST(JsonLocateTest, CrLfIsOneLineEnd) {
  const std::string_view text = "{\r\n  \"a\": 1,\r\n  \"b\": [\r\n    true\r\n  ]\r\n}\r\n";
  EXPECT_EQ(LocatePointers(text, {"/a", "/b", "/b/0"}), (Positions{At(2, 3), At(3, 3), At(4, 5)}));
}

TEST(JsonLocateTest, FirstOfDuplicateKeysWins) {
  const std::string_view text = R"({"a": {"x": 1}, "a": {"y": 2}, "b": 3, "b": 4})";
  EXPECT_EQ(LocatePointers(text, {"/a", "/a/x", "/a/y", "/b"}),
            (Positions{At(1, 2), At(1, 8), std::nullopt, At(1, 32)}));
}

TEST(JsonLocateTest, StringsWithBracketsAndEscapesAreSkipped) {
  const std::string_view text = R"({"s": "[{\"}]\\", "t": ["]", "\"[", {"k": "}\\\""}], "u": "\u005d\"", "v": 1})";
  EXPECT_EQ(LocatePointers(text, {"/t/2/k", "/u", "/v", "/t/3"}),
            (Positions{At(1, 38), At(1, 54), At(1, 71), std::nullopt}));
}

TEST(JsonLocateTest, ErrorsBeforeAValueHideIt) {
  // Each text is broken before the value "/b" (or "/1") names starts.
  for (std::string_view text : {
           R"({"a": 1 "b": 2})",
           R"({"a": 1,, "b": 2})",
           R"({"a": tru, "b": 2})",
           R"({"a": nul, "b": 2})",
           R"({"a": "x\q", "b": 2})",
           "{\"a\": \"x\ny\", \"b\": 2}",
           R"({"a": "\u12G4", "b": 2})",
           R"({"a": "\u12", "b": 2})",
           R"({"a": 01, "b": 2})",
           R"({"a": -, "b": 2})",
           R"({"a": 1., "b": 2})",
           R"({"a": 1e, "b": 2})",
           R"({"a": .5, "b": 2})",
           R"({"a": +1, "b": 2})",
           R"({"a": [1}, "b": 2})",
           R"({"a": {1: 2}, "b": 2})",
           R"({a: 1, "b": 2})",
           R"({'a': 1, "b": 2})",
           R"({"a": [1, 2,], "b": 2})",
           R"({"a": {"c": 1,}, "b": 2})",
           R"({"a": 1, "b" 2})",
           R"({"a": 1, "b": x})",
           R"({"a": 1, "b":)",
           R"({"a": 1, "b")",
           R"({"a": 1, "b)",
           R"({"a": 1, )",
           R"({"a": [[[)",
           R"({"a": 1, "b": })",
           "{\"a\": 1\x01, \"b\": 2}",
           R"({"a": 1 / "b": 2})",
           R"({"a": {"c": [1 2]}, "b": 2})",
           R"({"a": [{"c" 1}], "b": 2})",
           R"({"a": [[[]]]]], "b": 2})",
       }) {
    EXPECT_EQ(Locate(text, "/b"), std::nullopt) << text;
  }
  for (std::string_view text : {"[1 2]", "[1,,2]", "[,1]", "[1,", "[1", "[[1, 2]", "[1] 2", "[\"x, 1]"}) {
    EXPECT_EQ(Locate(text, "/1"), std::nullopt) << text;
  }
  for (std::string_view text : {"", "x", "}", "]", ",", ":", "True", "'a'"}) {
    EXPECT_EQ(Locate(text, ""), std::nullopt) << text;
  }
}

TEST(JsonLocateTest, ValuesStartedBeforeAnErrorAreFound) {
  EXPECT_EQ(LocatePointers(R"({"a": [1, 2], "b": [3 4], "c": 5})", {"/a/1", "/b", "/b/0", "/b/1", "/c"}),
            (Positions{At(1, 11), At(1, 15), At(1, 21), std::nullopt, std::nullopt}));
  EXPECT_EQ(Locate(R"({"a": tru)", "/a"), At(1, 2));
}

TEST(JsonLocateTest, DeepNestingNeedsNoDeepStack) {
  constexpr size_t kDepth = 100000;
  const std::string open(kDepth, '[');
  const std::string closed = open + std::string(kDepth, ']');
  for (const std::string& text : {open, closed}) {
    EXPECT_EQ(LocatePointers(text, {"/0/0/0", "/0/0/1", "/1"}), (Positions{At(1, 4), std::nullopt, std::nullopt}));
  }
  // Skipped, after the value a pointer goes into.
  EXPECT_EQ(LocatePointers("[" + closed + ", 1]", {"/0/0", "/1"}), (Positions{At(1, 3), At(1, 2 * kDepth + 4)}));
  // Pointers as deep as the text, and one deeper.
  std::string deep;
  for (size_t i = 0; i < kDepth - 1; ++i) deep += "/0";
  const std::string deeper = deep + "/0";
  EXPECT_EQ(LocatePointers(closed, {deep, deeper}), (Positions{At(1, kDepth), std::nullopt}));
  // Objects.
  std::string members;
  for (size_t i = 0; i < kDepth; ++i) members += "{\"a\":";
  members += "1" + std::string(kDepth, '}');
  EXPECT_EQ(LocatePointers(members, {"/a/a/a", "/a/a/b"}), (Positions{At(1, 12), std::nullopt}));
}

// A small random document, and where each of its members and elements
// starts as it writes them.
class RandomDocument {
 public:
  struct Declaration {
    std::string pointer;
    TextPosition position;
    size_t value_offset;  // where its value starts
  };

  explicit RandomDocument(uint64_t seed) : draw_(seed) {
    Space();
    Value("", Here(), 0, true);
    Space();
  }

  const std::string& text() const { return text_; }
  const std::vector<Declaration>& declarations() const { return declarations_; }
  // Pointers that name nothing: a missing key or index in each container.
  const std::vector<std::string>& missing() const { return missing_; }

 private:
  // A piece of a key or string: its decoded text and how it is written.
  struct Piece {
    std::string_view decoded;
    std::string_view written;
  };
  static constexpr Piece kPieces[] = {
      {"a", "a"},
      {"b", "b"},
      {"0", "0"},
      {"1", "1"},
      {"/", "/"},
      {"/", "\\/"},
      {"~", "~"},
      {"\xc3\xa9", "\xc3\xa9"},
      {"\xc3\xa9", "\\u00e9"},
      {"\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"},
      {"\xf0\x9f\x98\x80", "\\ud83d\\ude00"},
      {"\"", "\\\""},
      {"\\", "\\\\"},
      {"\n", "\\n"},
      {"[", "["},
      {"}", "}"},
      {"A", "\\u0041"},
      {":", ":"},
      {",", ","},
  };

  TextPosition Here() const {
    const size_t line_start = text_.rfind('\n') == std::string::npos ? 0 : text_.rfind('\n') + 1;
    const std::string_view line = std::string_view(text_).substr(line_start);
    TextPosition at{static_cast<size_t>(std::count(text_.begin(), text_.end(), '\n')) + 1, 1};
    for (size_t i = 0; i < line.size(); ++at.column) utf8::Decode(line, i);
    return at;
  }

  void Space() {
    static constexpr std::string_view kSpaces[] = {"", "", " ", "\n", "\r\n", "\t", "  \n    "};
    text_ += kSpaces[draw_(7)];
  }

  // Writes a string of random pieces; returns its decoded text.
  std::string String() {
    std::string decoded;
    text_ += '"';
    for (size_t n = draw_(4); n > 0; --n) {
      const Piece& piece = kPieces[draw_(std::size(kPieces))];
      decoded += piece.decoded;
      text_ += piece.written;
    }
    text_ += '"';
    return decoded;
  }

  // Writes a value declared at `declared`; records it under `pointer` where
  // `counted` (not below the second of duplicate keys).
  void Value(const std::string& pointer, TextPosition declared, int depth, bool counted) {
    if (counted) declarations_.push_back({pointer, declared, text_.size()});
    // Kinds 0-1 strings, 2 other scalars, 3-4 arrays, 5-7 objects: the
    // document is a container, and only scalars are at depth 4.
    const size_t kind = depth == 0 ? 3 + draw_(5) : draw_(depth < 4 ? 8 : 3);
    if (kind <= 1) {
      String();
    } else if (kind == 2) {
      static constexpr std::string_view kScalars[] = {"0", "-12", "3.5e-7", "1E+2", "true", "false", "null"};
      text_ += kScalars[draw_(std::size(kScalars))];
    } else if (kind <= 4) {
      text_ += '[';
      Space();
      const size_t n = draw_(5);
      for (size_t i = 0; i < n; ++i) {
        if (i > 0) {
          text_ += ',';
          Space();
        }
        Value(pointer + "/" + std::to_string(i), Here(), depth + 1, counted);
        Space();
      }
      text_ += ']';
      if (counted) missing_.push_back(pointer + "/" + std::to_string(n));
    } else {
      text_ += '{';
      Space();
      std::vector<std::string> keys;
      for (size_t n = draw_(5), i = 0; i < n; ++i) {
        if (i > 0) {
          text_ += ',';
          Space();
        }
        const TextPosition key_at = Here();
        const std::string key = String();
        const bool first = std::find(keys.begin(), keys.end(), key) == keys.end();
        keys.push_back(key);
        Space();
        text_ += ':';
        Space();
        Value(pointer + "/" + JsonPointerToken(key), key_at, depth + 1, counted && first);
        Space();
      }
      text_ += '}';
      if (counted) missing_.push_back(pointer + "/zz");
    }
  }

  Draws draw_;
  std::string text_;
  std::vector<Declaration> declarations_;
  std::vector<std::string> missing_;
};

TEST(JsonLocateTest, RandomDocumentsLocateEveryDeclarationInOneCall) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    const RandomDocument document(seed);
    const std::string& text = document.text();
    std::vector<std::string_view> pointers;
    Positions expected;
    for (const auto& declaration : document.declarations()) {
      pointers.push_back(declaration.pointer);
      expected.push_back(declaration.position);
    }
    for (const std::string& pointer : document.missing()) {
      pointers.push_back(pointer);
      expected.push_back(std::nullopt);
    }
    ASSERT_EQ(LocatePointers(text, pointers), expected) << "seed " << seed << ":\n" << text;
    // Any order.
    std::reverse(pointers.begin(), pointers.end());
    std::reverse(expected.begin(), expected.end());
    ASSERT_EQ(LocatePointers(text, pointers), expected) << "seed " << seed << ":\n" << text;
  }
}

TEST(JsonLocateTest, TruncatedRandomDocumentsLocateTheValuesTheyStart) {
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    const RandomDocument document(seed);
    std::vector<std::string_view> pointers;
    for (const auto& declaration : document.declarations()) pointers.push_back(declaration.pointer);
    for (size_t size = 0; size < document.text().size(); ++size) {
      const std::string_view prefix = std::string_view(document.text()).substr(0, size);
      const Positions found = LocatePointers(prefix, pointers);
      for (size_t i = 0; i < pointers.size(); ++i) {
        const auto& declaration = document.declarations()[i];
        const std::optional<TextPosition> expected =
            declaration.value_offset < size ? std::optional(declaration.position) : std::nullopt;
        ASSERT_EQ(found[i], expected) << "seed " << seed << ", " << pointers[i] << " in:\n" << prefix;
      }
    }
  }
}

TEST(JsonLocateTest, ChangedRandomDocumentsKeepWhatPrecedesTheChange) {
  // A change (a byte replaced or inserted) at an offset leaves every value
  // that starts before it where it was, and may make any text: the others
  // are found or not, but nothing crashes.
  static constexpr std::string_view kBytes = "{}[]\",:\\ 0-e.\nu\x01\xc3";
  Draws draw(7);
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    const RandomDocument document(seed);
    std::vector<std::string_view> pointers;
    for (const auto& declaration : document.declarations()) pointers.push_back(declaration.pointer);
    for (const std::string& pointer : document.missing()) pointers.push_back(pointer);
    const Positions original = LocatePointers(document.text(), pointers);
    for (int change = 0; change < 20; ++change) {
      std::string text = document.text();
      const size_t at = draw(text.size() + 1);
      const char byte = kBytes[draw(kBytes.size())];
      if (at < text.size() && draw(2) == 0) {
        text[at] = byte;
      } else {
        text.insert(text.begin() + at, byte);
      }
      const Positions found = LocatePointers(text, pointers);
      for (size_t i = 0; i < document.declarations().size(); ++i) {
        if (document.declarations()[i].value_offset < at) {
          ASSERT_EQ(found[i], original[i]) << "seed " << seed << ", " << pointers[i] << " in:\n" << text;
        }
      }
    }
  }
}

}  // namespace
}  // namespace shardplan
