// The glob fuzz target's plain matcher is only a reference if it agrees
// with Python: on the 10,000 verdicts of tools/gen_fnmatch_cases.py and on
// hand-picked cases for what those leave out (code points beyond ASCII,
// backslashes, newlines, ranges fnmatch rewrites), with verdicts from
// Python 3.11's fnmatch.fnmatchcase.
#include "fuzz/plain_glob.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace shardplan {
namespace {

TEST(PlainGlobTest, AgreesWithPythonFnmatchOnRandomCases) {
  std::ifstream in("tests/core/testdata/fnmatch_cases.tsv");
  ASSERT_TRUE(in) << "missing test data";
  std::string line;
  size_t cases = 0;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string pattern, text, verdict;
    std::getline(fields, pattern, '\t');
    std::getline(fields, text, '\t');
    std::getline(fields, verdict);
    EXPECT_EQ(PlainGlobMatch(pattern, text), verdict == "1") << "pattern '" << pattern << "' text '" << text << "'";
    ++cases;
  }
  EXPECT_EQ(cases, 10000u);
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
