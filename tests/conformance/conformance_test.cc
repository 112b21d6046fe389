// Every case produced by the reference implementation (tests/conformance,
// copied from the project's shared conformance suite) under the comparison
// rules of its README: for ok cases `owned` is equal (specs and parallel as
// objects, owned_names, expected and required lists as sorted lists, aliases
// as an ordered list); for failing cases the first diagnostic has the
// reference's code and message.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "core/engine.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "tests/support/read_file.h"

namespace shardplan {
namespace {

namespace fs = std::filesystem;
using rapidjson::Value;

const fs::path kCases = "tests/conformance/cases";
const fs::path kExpected = "tests/conformance/expected";

std::vector<std::string> CaseNames() {
  std::vector<std::string> names;
  if (fs::is_directory(kCases)) {
    for (const auto& entry : fs::directory_iterator(kCases)) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Objects compare as maps; arrays in order.
bool JsonEqual(const Value& a, const Value& b) {
  if (a.IsObject() && b.IsObject()) {
    if (a.MemberCount() != b.MemberCount()) return false;
    for (auto m = a.MemberBegin(); m != a.MemberEnd(); ++m) {
      auto other = b.FindMember(m->name);
      if (other == b.MemberEnd() || !JsonEqual(m->value, other->value)) return false;
    }
    return true;
  }
  if (a.IsArray() && b.IsArray()) {
    if (a.Size() != b.Size()) return false;
    for (rapidjson::SizeType i = 0; i < a.Size(); ++i) {
      if (!JsonEqual(a[i], b[i])) return false;
    }
    return true;
  }
  return a == b;
}

std::vector<std::string> SortedStrings(const Value& list) {
  std::vector<std::string> out;
  for (const Value& v : list.GetArray()) out.emplace_back(v.GetString(), v.GetStringLength());
  std::sort(out.begin(), out.end());
  return out;
}

class ConformanceTest : public testing::TestWithParam<std::string> {};

TEST(ConformanceSuiteTest, SuiteIsPresent) { EXPECT_GE(CaseNames().size(), 127u); }

TEST_P(ConformanceTest, MatchesReference) {
  const std::string name = GetParam();
  rapidjson::Document expected;
  expected.Parse(ReadFile(kExpected / name).value().c_str());
  ASSERT_FALSE(expected.HasParseError()) << "expected file for " << name;

  absl::StatusOr<Result> result = Check(ReadFile(kCases / name).value(), {});
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->ok, expected["ok"].GetBool()) << (result->diagnostics.empty() ? std::string("no diagnostics")
                                                                                   : result->diagnostics[0].message);
  if (!result->ok) {
    const Diagnostic& first = result->diagnostics.at(0);
    EXPECT_EQ(first.code, expected["error"]["code"].GetString());
    EXPECT_EQ(first.message, expected["error"]["message"].GetString());
    return;
  }
  for (const Diagnostic& d : result->diagnostics) EXPECT_NE(d.severity, Severity::kError) << d.message;

  rapidjson::Document actual;
  actual.Parse(ResultToJson(*result).c_str());
  ASSERT_FALSE(actual.HasParseError());
  const Value& got = actual["owned"];
  const Value& want = expected["owned"];
  EXPECT_TRUE(JsonEqual(got["specs"], want["specs"])) << "specs differ";
  EXPECT_TRUE(JsonEqual(got["parallel"], want["parallel"])) << "parallel differs";
  EXPECT_EQ(SortedStrings(got["owned_names"]), SortedStrings(want["owned_names"]));
  EXPECT_EQ(SortedStrings(got["expected"]), SortedStrings(want["expected"]));
  ASSERT_EQ(got["required"].MemberCount(), want["required"].MemberCount());
  for (auto m = want["required"].MemberBegin(); m != want["required"].MemberEnd(); ++m) {
    ASSERT_TRUE(got["required"].HasMember(m->name)) << m->name.GetString();
    EXPECT_EQ(SortedStrings(got["required"][m->name]), SortedStrings(m->value)) << m->name.GetString();
  }
  EXPECT_TRUE(JsonEqual(got["aliases"], want["aliases"])) << "aliases differ";
}

INSTANTIATE_TEST_SUITE_P(Cases, ConformanceTest, testing::ValuesIn(CaseNames()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param.substr(0, info.param.size() - 5);
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace shardplan
