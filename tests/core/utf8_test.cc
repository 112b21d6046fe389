#include "core/text/utf8.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "rapidjson/encodings.h"
#include "rapidjson/memorystream.h"

namespace shardplan::utf8 {
namespace {

std::string Bytes(std::initializer_list<int> bytes) {
  std::string s;
  for (int b : bytes) s += static_cast<char>(b);
  return s;
}

std::string Encoded(uint32_t cp) {
  std::string s;
  Append(s, cp);
  return s;
}

// RapidJSON's validation, sequence after sequence, as the C ABI checked its
// string arguments before utf8.h.
bool ValidForRapidJson(std::string_view text) {
  rapidjson::MemoryStream stream(text.data(), text.size());
  while (stream.Tell() < text.size()) {
    struct Sink {
      void Put(char) {}
    } sink;
    if (!rapidjson::UTF8<>::Validate(stream, sink)) return false;
  }
  return true;
}

TEST(Utf8Test, EveryBoundaryCodePointIsWellFormed) {
  for (uint32_t cp : {0x0u, 0x41u, 0x7Fu, 0x80u, 0x7FFu, 0x800u, 0xD7FFu, 0xE000u, 0xFFFDu, 0xFFFFu, 0x10000u,
                      0x10FFFFu}) {
    const std::string s = Encoded(cp);
    EXPECT_TRUE(IsValid(s)) << std::hex << cp;
    EXPECT_EQ(ValidPrefix("ab" + s + "cd"), s.size() + 4) << std::hex << cp;
  }
  EXPECT_EQ(Encoded(0x7F).size(), 1u);
  EXPECT_EQ(Encoded(0x7FF).size(), 2u);
  EXPECT_EQ(Encoded(0xFFFF).size(), 3u);
  EXPECT_EQ(Encoded(0x10FFFF).size(), 4u);
  EXPECT_TRUE(IsValid(""));
}

TEST(Utf8Test, NulIsWellFormed) {
  EXPECT_TRUE(IsValid(std::string("a\0b", 3)));
  EXPECT_EQ(ValidPrefix(std::string(1, '\0')), 1u);
}

TEST(Utf8Test, EveryOverlongFormIsRefused) {
  // Two bytes for U+0000..U+007F: C0 and C1 never lead.
  for (int lead : {0xC0, 0xC1}) {
    for (int b = 0x80; b <= 0xBF; ++b) EXPECT_EQ(ValidPrefix("x" + Bytes({lead, b})), 1u) << lead << " " << b;
  }
  // Three bytes for U+0000..U+07FF: E0 then 80..9F.
  for (int b = 0x80; b <= 0x9F; ++b) {
    for (int c : {0x80, 0xBF}) EXPECT_FALSE(IsValid(Bytes({0xE0, b, c}))) << b << " " << c;
  }
  // Four bytes for U+0000..U+FFFF: F0 then 80..8F.
  for (int b = 0x80; b <= 0x8F; ++b) {
    for (int c : {0x80, 0xBF}) EXPECT_FALSE(IsValid(Bytes({0xF0, b, c, 0x80}))) << b << " " << c;
  }
  // The shortest forms just above are fine.
  EXPECT_TRUE(IsValid(Bytes({0xC2, 0x80})));
  EXPECT_TRUE(IsValid(Bytes({0xE0, 0xA0, 0x80})));
  EXPECT_TRUE(IsValid(Bytes({0xF0, 0x90, 0x80, 0x80})));
}

TEST(Utf8Test, SurrogatesAreRefused) {
  for (int b = 0xA0; b <= 0xBF; ++b) {
    for (int c = 0x80; c <= 0xBF; ++c) EXPECT_EQ(ValidPrefix("ab" + Bytes({0xED, b, c})), 2u) << b << " " << c;
  }
  EXPECT_TRUE(IsValid(Bytes({0xED, 0x9F, 0xBF})));  // U+D7FF
  EXPECT_TRUE(IsValid(Bytes({0xEE, 0x80, 0x80})));  // U+E000
}

TEST(Utf8Test, CodePointsPastU10FFFFAreRefused) {
  for (int b = 0x90; b <= 0xBF; ++b) EXPECT_FALSE(IsValid(Bytes({0xF4, b, 0x80, 0x80}))) << b;
  for (int lead = 0xF5; lead <= 0xFF; ++lead) {
    EXPECT_FALSE(IsValid(Bytes({lead, 0x80, 0x80, 0x80}))) << lead;
    EXPECT_FALSE(IsValid(Bytes({lead}))) << lead;
  }
}

TEST(Utf8Test, TruncatedSequencesAndStrayContinuationsAreRefusedAtTheirStart) {
  for (uint32_t cp : {0xE9u, 0x20ACu, 0x1F600u, 0x10FFFFu}) {
    const std::string s = Encoded(cp);
    for (size_t cut = 1; cut < s.size(); ++cut) {
      const std::string truncated = s.substr(0, cut);
      EXPECT_EQ(ValidPrefix("abc" + truncated), 3u) << std::hex << cp << " " << cut;
      EXPECT_EQ(ValidPrefix("abc" + truncated + "def"), 3u) << std::hex << cp << " " << cut;
      EXPECT_EQ(ValidPrefix("abc" + truncated + s), 3u) << std::hex << cp << " " << cut;
    }
  }
  for (int b = 0x80; b <= 0xBF; ++b) EXPECT_EQ(ValidPrefix("a" + Bytes({b})), 1u) << b;
  // A continuation byte where a third or fourth one belongs is missing.
  EXPECT_FALSE(IsValid(Bytes({0xE2, 0x82, 0x41})));
  EXPECT_FALSE(IsValid(Bytes({0xF0, 0x9F, 0x98, 0xC3})));
}

// The scan takes ASCII a word at a time: the first bad byte is found at
// every offset within and across the words, after multi-byte characters
// too.
TEST(Utf8Test, TheFirstBadSequenceIsFoundAtAnyOffset) {
  for (const std::string& before : {std::string(), Encoded(0xE9), Encoded(0x1F600)}) {
    for (size_t at = 0; at < 80; ++at) {
      for (const std::string& bad : {Bytes({0xFF}), Bytes({0xC3, '('}), Bytes({0xED, 0xA0, 0x80}), Bytes({0xC3})}) {
        const std::string text = before + std::string(at, 'a') + bad + std::string(100, 'b');
        EXPECT_EQ(ValidPrefix(text), before.size() + at) << at;
        EXPECT_EQ(ValidPrefix(text.substr(0, before.size() + at + bad.size())), before.size() + at) << at;
      }
    }
  }
}

// ValidNulFreePrefix is ValidPrefix of the text before its first NUL byte:
// a NUL at every offset within and across the words, after a sequence, cut
// into one, before or after a bad sequence, and on random bytes.
TEST(Utf8Test, ValidNulFreePrefixStopsAtTheFirstNulOrBadSequence) {
  const auto expected = [](std::string_view text) { return ValidPrefix(text.substr(0, text.find('\0'))); };
  for (const std::string& before : {std::string(), Encoded(0xE9), Bytes({0xE2, 0x82}), Bytes({0xFF})}) {
    for (size_t at = 0; at < 80; ++at) {
      for (const std::string& after : {std::string(100, 'b'), Bytes({0xFF}) + "b", Encoded(0x1F600)}) {
        const std::string text = before + std::string(at, 'a') + '\0' + after;
        ASSERT_EQ(ValidNulFreePrefix(text), expected(text)) << at;
      }
    }
  }
  EXPECT_EQ(ValidNulFreePrefix(std::string(100, 'a')), 100u);
  EXPECT_EQ(ValidNulFreePrefix(std::string(40, 'a') + Bytes({0xC3, 0})), 40u);
  std::mt19937 random(7);
  const std::string alphabet = std::string("a\0", 2) + Bytes({0x80, 0xBF, 0xC3, 0xE2, 0xF0, 0x9F, 0xFF});
  for (int round = 0; round < 20000; ++round) {
    std::string text(random() % 70, 'a');
    for (char& c : text) c = alphabet[random() % alphabet.size()];
    ASSERT_EQ(ValidNulFreePrefix(text), expected(text)) << round;
  }
}

// RapidJSON's UTF8::Validate, which the C ABI used, agrees on every
// sequence of up to three bytes, and on four-byte ones for every first and
// second byte.
TEST(Utf8Test, AgreesWithRapidJsonOnEveryShortSequence) {
  std::string s;
  for (int a = 0; a < 256; ++a) {
    s = Bytes({a});
    ASSERT_EQ(IsValid(s), ValidForRapidJson(s)) << a;
    for (int b = 0; b < 256; ++b) {
      s = Bytes({a, b});
      ASSERT_EQ(IsValid(s), ValidForRapidJson(s)) << a << " " << b;
      for (int c = 0; c < 256; ++c) {
        s = Bytes({a, b, c});
        ASSERT_EQ(IsValid(s), ValidForRapidJson(s)) << a << " " << b << " " << c;
      }
      if (a < 0xE0) continue;
      for (int c : {0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0xBF, 0xC0, 0xFF}) {
        for (int d : {0x00, 0x7F, 0x80, 0xBF, 0xC0}) {
          s = Bytes({a, b, c, d});
          ASSERT_EQ(IsValid(s), ValidForRapidJson(s)) << a << " " << b << " " << c << " " << d;
        }
      }
    }
  }
}

TEST(Utf8Test, DecodeReadsBackWhatAppendWrites) {
  std::string all;
  std::vector<uint32_t> expected;
  for (uint32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) continue;
    Append(all, cp);
    expected.push_back(cp);
  }
  ASSERT_TRUE(IsValid(all));
  size_t i = 0, k = 0;
  while (i < all.size()) {
    const uint32_t cp = Decode(all, i);
    ASSERT_LT(k, expected.size());
    ASSERT_EQ(cp, expected[k++]);
  }
  EXPECT_EQ(i, all.size());
  EXPECT_EQ(k, expected.size());
}

TEST(Utf8Test, DecodeStopsAtTheEndOfASequenceCutShort) {
  const std::string cut = Encoded(0x1F600).substr(0, 2);
  size_t i = 0;
  Decode(cut, i);
  EXPECT_EQ(i, 2u);
}

TEST(Utf8Test, IsAsciiSeesEveryByte) {
  EXPECT_TRUE(IsAscii(""));
  for (size_t n = 1; n < 40; ++n) {
    std::string s(n, 'a');
    EXPECT_TRUE(IsAscii(s));
    for (size_t at = 0; at < n; ++at) {
      std::string t = s;
      t[at] = '\x80';
      EXPECT_FALSE(IsAscii(t)) << n << " " << at;
    }
  }
}

}  // namespace
}  // namespace shardplan::utf8
