// Random JSON-like text for the readers' tests (json_test, json_reader_test),
// which hold the readers against RapidJSON: mostly valid values, with
// escapes, numbers at the edges of int64 (and, where the test's oracle reads
// them, of double), and whitespace, then sometimes broken by a mutation.
// Seeded, so every run reads the same texts.
#ifndef SHARDPLAN_TESTS_CORE_JSON_TEXT_GENERATOR_H_
#define SHARDPLAN_TESTS_CORE_JSON_TEXT_GENERATOR_H_

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>

namespace shardplan::json {

class JsonTextGenerator {
 public:
  // `double_edges`: numbers past double's range and at its edges too.
  explicit JsonTextGenerator(uint32_t seed, bool double_edges = false) : rng_(seed), double_edges_(double_edges) {}

  // A random value, mutated three times in four.
  std::string Text() { return Mutated(Value(0)); }

 protected:
  // `s` after no edit (one time in four), or one or two random edits.
  std::string Mutated(std::string s) {
    const int mutations = Pick(4) == 0 ? 0 : 1 + Pick(2);
    for (int i = 0; i < mutations && !s.empty(); ++i) Mutate(s);
    return s;
  }
  int Pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  std::string Space() {
    static const char* kSpaces[] = {"", "", "", " ", "\n", "\t ", "\r\n  "};
    return kSpaces[Pick(7)];
  }
  std::string Number() {
    // The first 19: plain, and at the edges of int64; the rest at and past
    // the edges of double.
    static const char* kNumbers[] = {
        "0",    "-0",   "7",    "-12",  "4096", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
        "-9223372036854775809", "18446744073709551615", "18446744073709551616", "1.5", "-0.25", "1e3", "2E-2",
        "1e+9", "0.0", "3.14159e10", "123456789012345678901234", "1e308", "2e308", "-1e400", "1e-400",
        "1.7976931348623157e308", "1.7976931348623159e308", "0.1e310", "100e306"};
    return kNumbers[Pick(double_edges_ ? sizeof kNumbers / sizeof kNumbers[0] : 19)];
  }
  std::string String() {
    static const char* kPieces[] = {"a",      "tp",     "layers", ".",      "0",     "\\n",  "\\\"",  "\\\\",
                                    "\\/",    "\\u00e9", "\\u0000", "\\ud83d\\ude00", "\xc3\xa9", "\xe2\x82\xac",
                                    "\\t",    " ",      "S(0)",   "\\udc00", "weight", "*"};
    std::string s = "\"";
    const int n = Pick(5);
    for (int i = 0; i < n; ++i) s += kPieces[Pick(20)];
    return s + "\"";
  }
  std::string Object(int depth) {
    std::string s = "{" + Space();
    const int n = Pick(4);
    for (int i = 0; i < n; ++i) {
      if (i > 0) s += "," + Space();
      s += String() + Space() + ":" + Space() + Value(depth + 1) + Space();
    }
    return s + "}";
  }
  std::string Value(int depth) {
    const int kind = depth >= 5 ? Pick(4) : Pick(7);
    switch (kind) {
      case 0:
        return Number();
      case 1:
      case 3:
        return String();
      case 2: {
        static const char* kWords[] = {"null", "true", "false"};
        return kWords[Pick(3)];
      }
      case 4:
      case 5:
        return Object(depth);
      default: {
        std::string s = "[" + Space();
        const int n = Pick(4);
        for (int i = 0; i < n; ++i) {
          if (i > 0) s += "," + Space();
          s += Value(depth + 1) + Space();
        }
        return s + "]";
      }
    }
  }
  void Mutate(std::string& s) {
    static const char kChars[] = "{}[]\",:\\-+0123456789.eEtrufalsn u\t\x01";
    const size_t at = static_cast<size_t>(Pick(static_cast<int>(s.size())));
    // Never split a UTF-8 sequence: the readers' input is valid UTF-8.
    if (static_cast<unsigned char>(s[at]) >= 0x80) return;
    switch (Pick(4)) {
      case 0:
        s.erase(at, 1);
        break;
      case 1:
        s.insert(at, 1, kChars[Pick(sizeof kChars - 1)]);
        break;
      case 2:
        s[at] = kChars[Pick(sizeof kChars - 1)];
        break;
      default:
        s.resize(at);
        break;
    }
  }

  std::mt19937 rng_;
  const bool double_edges_;
};

}  // namespace shardplan::json

#endif  // SHARDPLAN_TESTS_CORE_JSON_TEXT_GENERATOR_H_
