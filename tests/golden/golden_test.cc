// Golden diagnostics (Shardy's expected-error files): small documents in
// tests/golden/cases and exactly what the engine must report for each.
//
//   CODE[.VARIANT].fail.json    breaks the rule CODE (a code of the table,
//                               core/diagnostics/codes.h)
//   CODE[.VARIANT].diagnostics  every diagnostic it produces, in order, one per
//                               line: `SEVERITY[CODE]: MESSAGE`
//   CODE[.VARIANT].pass.json    its twin: the smallest edit that fixes it
//   multi.NAME.fail.json        several independent errors in one document
//
// A case of a planning code is run as `shardplan plan` (Plan), every other
// as `shardplan check` (Check). A "fail" document of a warning or info code
// still passes: it is failed by that finding, not by an error.
//
// Cases are discovered at run time (the working directory of a Bazel test is
// the runfiles root of workspace "shardplan"), so adding a case needs no edit
// here. The expectations were generated with the CLI and checked by hand
// against the spec and tools/reference/shardplan_reference.py: the first
// diagnostic is the reference's error, later ones are independent problems.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/diagnostics/codes.h"
#include "core/engine.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "tests/support/read_file.h"
#include "tests/support/resolve_pointer.h"

namespace shardplan {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kCasesDir = "tests/golden/cases";
constexpr std::string_view kFailSuffix = ".fail.json";
constexpr std::string_view kPassSuffix = ".pass.json";
constexpr std::string_view kDiagnosticsSuffix = ".diagnostics";
constexpr std::string_view kMulti = "multi";
constexpr std::string_view kInvalidDocument = "invalid-document";

// The table's row of `code`, or null when it is no code.
const CodeInfo* InfoNamed(std::string_view code) {
  for (const CodeInfo& info : kCodes) {
    if (info.name == code) return &info;
  }
  return nullptr;
}

enum class Kind { kFail, kPass };

struct GoldenCase {
  std::string stem;  // the file name without .fail.json / .pass.json
  Kind kind;

  // The rule the case is named after, or "multi".
  std::string code() const { return stem.substr(0, stem.find('.')); }
  // Whether the case runs as `plan`: its code is one of the planner's.
  bool planned() const {
    const CodeInfo* info = InfoNamed(code());
    return info != nullptr && info->stage == Stage::kPlanning;
  }
  fs::path path() const {
    return fs::path(kCasesDir) / absl::StrCat(stem, kind == Kind::kFail ? kFailSuffix : kPassSuffix);
  }
  fs::path diagnostics_path() const { return fs::path(kCasesDir) / absl::StrCat(stem, kDiagnosticsSuffix); }
};

void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.path().string(); }

// File names in the cases folder, sorted; empty when the folder is missing.
std::vector<std::string> CaseFileNames() {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(fs::path(kCasesDir), ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<GoldenCase> DiscoverCases(Kind kind) {
  const std::string_view suffix = kind == Kind::kFail ? kFailSuffix : kPassSuffix;
  std::vector<GoldenCase> cases;
  for (const std::string& name : CaseFileNames()) {
    if (absl::EndsWith(name, suffix) && name.size() > suffix.size()) {
      cases.push_back({name.substr(0, name.size() - suffix.size()), kind});
    }
  }
  return cases;
}

std::set<std::string> Stems(Kind kind) {
  std::set<std::string> stems;
  for (const GoldenCase& c : DiscoverCases(kind)) stems.insert(c.stem);
  return stems;
}

std::string FormatDiagnostic(const Diagnostic& d) {
  return absl::StrCat(SeverityName(d.severity), "[", d.code, "]: ", d.message);
}

// One expected diagnostic per line; the file ends with a newline.
std::vector<std::string> ExpectedLines(std::string_view text) {
  std::vector<std::string> lines = absl::StrSplit(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

// Letters, digits and underscores, as GoogleTest wants parameter names.
std::string TestName(const testing::TestParamInfo<GoldenCase>& info) {
  std::string name = info.param.stem;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

// --- The folder as a whole ----------------------------------------------------

TEST(GoldenCasesTest, CasesFolderHoldsFailAndPassDocuments) {
  ASSERT_TRUE(fs::is_directory(fs::path(kCasesDir)))
      << "no folder " << kCasesDir << " under the working directory " << fs::current_path()
      << " (the test must run from the runfiles root with the cases as data)";
  EXPECT_FALSE(DiscoverCases(Kind::kFail).empty()) << "no *" << kFailSuffix << " in " << kCasesDir;
  EXPECT_FALSE(DiscoverCases(Kind::kPass).empty()) << "no *" << kPassSuffix << " in " << kCasesDir;
}

TEST(GoldenCasesTest, EveryFileIsAFailDocumentItsDiagnosticsOrAPassDocument) {
  const std::set<std::string> fails = Stems(Kind::kFail);
  for (const std::string& name : CaseFileNames()) {
    if (absl::EndsWith(name, kFailSuffix) || absl::EndsWith(name, kPassSuffix)) continue;
    if (absl::EndsWith(name, kDiagnosticsSuffix)) {
      const std::string stem = name.substr(0, name.size() - kDiagnosticsSuffix.size());
      EXPECT_TRUE(fails.count(stem) == 1) << name << " has no " << stem << kFailSuffix;
      continue;
    }
    ADD_FAILURE() << "unexpected file " << name << " in " << kCasesDir << " (expected *" << kFailSuffix << ", *"
                  << kDiagnosticsSuffix << " or *" << kPassSuffix << ")";
  }
}

TEST(GoldenCasesTest, EveryFailDocumentHasADiagnosticsFile) {
  for (const GoldenCase& c : DiscoverCases(Kind::kFail)) {
    EXPECT_TRUE(fs::is_regular_file(c.diagnostics_path())) << c.path() << " has no " << c.diagnostics_path();
  }
}

TEST(GoldenCasesTest, EveryFailDocumentHasAPassTwinExceptInvalidDocumentsAndMultiErrorDocuments) {
  const std::set<std::string> passes = Stems(Kind::kPass);
  for (const GoldenCase& c : DiscoverCases(Kind::kFail)) {
    if (c.code() == kInvalidDocument || c.code() == kMulti) continue;
    EXPECT_TRUE(passes.count(c.stem) == 1) << c.path() << " has no twin " << c.stem << kPassSuffix;
  }
}

TEST(GoldenCasesTest, EveryCaseIsNamedAfterACodeOrIsAMultiErrorDocument) {
  for (Kind kind : {Kind::kFail, Kind::kPass}) {
    for (const GoldenCase& c : DiscoverCases(kind)) {
      EXPECT_TRUE(InfoNamed(c.code()) != nullptr || (c.code() == kMulti && kind == Kind::kFail))
          << c.path() << ": '" << c.code() << "' is no code of the table (core/diagnostics/codes.h)";
    }
  }
}

TEST(GoldenCasesTest, EveryCodeHasAFailDocument) {
  std::set<std::string> covered;
  for (const GoldenCase& c : DiscoverCases(Kind::kFail)) covered.insert(c.code());
  for (const CodeInfo& info : kCodes) {
    EXPECT_TRUE(covered.count(std::string(info.name)) == 1)
        << "no " << info.name << kFailSuffix << " or " << info.name << ".VARIANT" << kFailSuffix << " in " << kCasesDir;
  }
}

// The result of a case, as `shardplan check` or `plan` reports it.
absl::StatusOr<Result> RunCase(const GoldenCase& c, std::string_view text) {
  return c.planned() ? Plan(text, {}) : Check(text, {});
}

// --- Each failing document ----------------------------------------------------

class GoldenFailTest : public testing::TestWithParam<GoldenCase> {
 protected:
  void SetUp() override {
    std::optional<std::string> text = ReadFile(GetParam().path());
    ASSERT_TRUE(text.has_value()) << "cannot read " << GetParam().path();
    text_ = std::move(*text);
    absl::StatusOr<Result> result = RunCase(GetParam(), text_);
    ASSERT_TRUE(result.ok()) << result.status();
    result_ = std::move(*result);
  }

  std::string text_;
  Result result_;
};

TEST_P(GoldenFailTest, ReportsExactlyTheDiagnosticsOfItsDiagnosticsFile) {
  const std::optional<std::string> expected_text = ReadFile(GetParam().diagnostics_path());
  ASSERT_TRUE(expected_text.has_value()) << "cannot read " << GetParam().diagnostics_path();
  const std::vector<std::string> expected = ExpectedLines(*expected_text);
  std::vector<std::string> actual;
  for (const Diagnostic& d : result_.diagnostics) actual.push_back(FormatDiagnostic(d));

  const bool errors = std::any_of(result_.diagnostics.begin(), result_.diagnostics.end(),
                                  [](const Diagnostic& d) { return d.severity == Severity::kError; });
  EXPECT_EQ(result_.ok, !errors);
  EXPECT_EQ(actual, expected) << "expected (" << GetParam().diagnostics_path().string() << "):\n  "
                              << absl::StrJoin(expected, "\n  ") << "\nactual:\n  " << absl::StrJoin(actual, "\n  ");
  if (GetParam().code() == kMulti) {
    EXPECT_GE(expected.size(), 2u) << "a multi-error document must show several errors";
  }
}

TEST_P(GoldenFailTest, FirstDiagnosticIsTheRuleTheCaseIsNamedAfter) {
  const std::string code = GetParam().code();
  ASSERT_FALSE(result_.diagnostics.empty());
  if (code == kMulti) {
    // Named after no single rule: the errors come from several rules.
    std::set<std::string> codes;
    for (const Diagnostic& d : result_.diagnostics) codes.insert(d.code);
    EXPECT_EQ(result_.diagnostics[0].severity, Severity::kError);
    EXPECT_GE(codes.size(), 2u);
    return;
  }
  EXPECT_EQ(result_.diagnostics[0].code, code);
  EXPECT_EQ(result_.diagnostics[0].severity, InfoNamed(code)->severity);
  if (code == kInvalidDocument) {
    EXPECT_EQ(result_.diagnostics.size(), 1u) << "an invalid document is exactly one invalid-document error";
  }
}

TEST_P(GoldenFailTest, EveryDiagnosticPointsAtADeclarationInTheDocument) {
  rapidjson::Document dom;
  dom.Parse(text_.data(), text_.size());
  for (const Diagnostic& d : result_.diagnostics) {
    SCOPED_TRACE(FormatDiagnostic(d));
    if (d.code == kInvalidDocument) {
      // Unparseable JSON has no pointer to give; otherwise the message's
      // pointer names the offending value.
      if (dom.HasParseError() || !d.pointer || d.pointer->empty()) continue;
      EXPECT_NE(ResolvePointer(dom, *d.pointer), nullptr) << "pointer '" << *d.pointer << "' names nothing";
      continue;
    }
    ASSERT_FALSE(dom.HasParseError()) << "only invalid-document may come from unparseable JSON";
    // A count over the whole model points at no single declaration.
    if (d.code == "unplanned-parameters") continue;
    ASSERT_TRUE(d.pointer.has_value()) << "no pointer";
    EXPECT_FALSE(d.pointer->empty()) << "the pointer names the whole document, not a declaration";
    EXPECT_NE(ResolvePointer(dom, *d.pointer), nullptr) << "pointer '" << *d.pointer << "' names nothing";
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, GoldenFailTest, testing::ValuesIn(DiscoverCases(Kind::kFail)), TestName);
// An empty folder is reported by CasesFolderHoldsFailAndPassDocuments.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GoldenFailTest);

// --- Each passing document ----------------------------------------------------

class GoldenPassTest : public testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenPassTest, IsAcceptedWithoutErrorsOrItsCode) {
  const std::optional<std::string> text = ReadFile(GetParam().path());
  ASSERT_TRUE(text.has_value()) << "cannot read " << GetParam().path();
  const absl::StatusOr<Result> result = RunCase(GetParam(), *text);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_TRUE(result->ok);
  EXPECT_TRUE(CountOwnership(*result).has_value());
  for (const Diagnostic& d : result->diagnostics) {
    EXPECT_NE(d.severity, Severity::kError) << FormatDiagnostic(d);
    EXPECT_NE(d.code, GetParam().code()) << FormatDiagnostic(d);
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, GoldenPassTest, testing::ValuesIn(DiscoverCases(Kind::kPass)), TestName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GoldenPassTest);

}  // namespace
}  // namespace shardplan
