// The glob fuzz target's plain matcher is only a reference if it agrees
// with Python: on the 10,000 verdicts of tools/gen_fnmatch_cases.py and on
// hand-picked cases for what those leave out (code points beyond ASCII,
// backslashes, newlines, ranges fnmatch rewrites), with verdicts from
// Python 3.11's fnmatch.fnmatchcase.
#include "fuzz/plain_glob.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/fnmatch_cases.h"

namespace shardplan {
namespace {

TEST(PlainGlobTest, AgreesWithPythonFnmatchOnRandomCases) {
  const std::vector<FnmatchCase> cases = ReadFnmatchCases();
  ASSERT_EQ(cases.size(), 10000u) << "missing test data";
  for (const FnmatchCase& c : cases) {
    EXPECT_EQ(PlainGlobMatch(c.pattern, c.text), c.match) << "pattern '" << c.pattern << "' text '" << c.text << "'";
  }
}

TEST(PlainGlobTest, AgreesWithPythonFnmatchOnEdgeCases) {
  struct Case {
    const char* pattern;
    const char* text;
    bool match;
  };
  const Case cases[] = {
      {"[é-ü]x", "ñx", true},  {"[!é]", "é", false},    {"[!é]", "e", true},      {"?", "日", true},
      {"*本", "日本", true},   {R"([\\])", R"(\)", true}, {R"([a\\-z])", R"(\)", true}, {R"([a\\-z])", "b", true},
      {"[a-b-c]", "-", true},  {"[]-a]", "^", true},     {"[z-a]", "m", false},    {"[z-a]", "-", false},
      {"[!]", "!", false},     {"[!]", "[!]", true},     {"[!]]", "a", true},      {"a\nb", "a\nb", true},
      {"*", "\n", true},       {"[^a]", "^", true},      {"[[]", "[", true},       {"[a-]", "-", true},
      {"[!-]", "-", false},    {"[--0]", "/", true},     {"[b-a-c]", "-", true},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(PlainGlobMatch(c.pattern, c.text), c.match) << "pattern '" << c.pattern << "' text '" << c.text << "'";
  }
}

}  // namespace
}  // namespace shardplan
