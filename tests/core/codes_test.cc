// The table of diagnostics against the documentation: every code has a
// section in a catalogue (docs/semantics.md or docs/planning.md) and every
// section there is a code of the table; docs/architecture.md names, for
// every code, source files that report it. (tests/golden holds a failing
// document for each code.)
#include "core/diagnostics/codes.h"
#include "core/engine.h"

#include <cctype>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace shardplan {
namespace {

constexpr std::string_view kDocs[] = {"semantics.md", "planning.md"};

std::string ReadDoc(std::string_view name) {
  std::ifstream in("docs/" + std::string(name));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The "### " headings of the document's "## N. Catalogue of diagnostics"
// section.
std::set<std::string> CatalogueHeadings(std::string_view name) {
  std::set<std::string> headings;
  bool inside = false;
  for (std::string_view line : absl::StrSplit(ReadDoc(name), '\n')) {
    if (absl::StartsWith(line, "## ")) inside = absl::EndsWith(line, "Catalogue of diagnostics");
    if (inside && absl::StartsWith(line, "### ")) headings.insert(std::string(line.substr(4)));
  }
  return headings;
}

TEST(CodesTest, EachDocumentHasACatalogue) {
  for (std::string_view doc : kDocs) EXPECT_FALSE(CatalogueHeadings(doc).empty()) << "docs/" << doc;
}

TEST(CodesTest, EveryCodeIsDocumentedWhereTheTableSays) {
  std::map<std::string, std::set<std::string>> headings;
  for (std::string_view doc : kDocs) headings[std::string(doc)] = CatalogueHeadings(doc);
  for (const CodeInfo& info : kCodes) {
    const size_t hash = info.doc.find('#');
    ASSERT_NE(hash, std::string_view::npos) << info.name;
    const std::string file(info.doc.substr(0, hash)), anchor(info.doc.substr(hash + 1));
    EXPECT_EQ(anchor, info.name) << "the section of a code is named after it";
    ASSERT_EQ(headings.count(file), 1u) << info.name << ": " << file << " is no catalogue";
    EXPECT_EQ(headings[file].count(anchor), 1u) << info.name << ": no section '### " << anchor << "' in docs/" << file;
  }
}

TEST(CodesTest, EveryDocumentedCodeIsInTheTable) {
  for (std::string_view doc : kDocs) {
    for (const std::string& heading : CatalogueHeadings(doc)) {
      bool found = false;
      for (const CodeInfo& info : kCodes) found = found || info.name == heading;
      EXPECT_TRUE(found) << "docs/" << doc << " documents '" << heading << "', which no row of the table has";
    }
  }
}

// "shared-conflict" -> "Code::kSharedConflict", as a rule spells it.
std::string Enumerator(std::string_view name) {
  std::string out = "Code::k";
  bool upper = true;
  for (char c : name) {
    if (c == '-') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out;
}

// The rows of docs/architecture.md's "To change a diagnostic, open" table:
// the codes of the first column, the core/ files named in the second.
std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> ChangeTableRows() {
  std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> rows;
  bool inside = false;
  for (std::string_view line : absl::StrSplit(ReadDoc("architecture.md"), '\n')) {
    if (absl::StartsWith(line, "#")) inside = line == "### To change a diagnostic, open";
    if (!inside || !absl::StartsWith(line, "| `")) continue;
    const std::vector<std::string_view> cells = absl::StrSplit(line, '|');
    if (cells.size() < 3) continue;
    std::vector<std::string> codes, files;
    for (std::string_view part : absl::StrSplit(cells[1], '`')) {
      part = absl::StripAsciiWhitespace(part);
      if (!part.empty() && part != ",") codes.emplace_back(part);
    }
    std::vector<std::string_view> quoted = absl::StrSplit(cells[2], '`');
    for (size_t i = 1; i < quoted.size(); i += 2) {
      if (absl::StartsWith(quoted[i], "core/")) files.emplace_back(quoted[i]);
    }
    rows.emplace_back(std::move(codes), std::move(files));
  }
  return rows;
}

TEST(CodesTest, TheArchitectureNamesTheRuleOfEveryCode) {
  std::map<std::string, int> rows_of;
  for (const auto& [codes, files] : ChangeTableRows()) {
    EXPECT_FALSE(files.empty()) << codes.front() << ": no core/ file named";
    for (const std::string& code : codes) {
      ++rows_of[code];
      bool reported = false;
      for (const std::string& file : files) {
        std::ifstream in(file);
        ASSERT_TRUE(in) << code << ": " << file << " does not exist, or is not in codes_test's data";
        std::ostringstream text;
        text << in.rdbuf();
        reported = reported || absl::StrContains(text.str(), Enumerator(code));
      }
      EXPECT_TRUE(reported) << code << ": none of the files docs/architecture.md names reports " << Enumerator(code);
    }
  }
  for (const CodeInfo& info : kCodes) {
    EXPECT_EQ(rows_of[std::string(info.name)], 1) << info.name << ": rows naming it in docs/architecture.md";
  }
  EXPECT_EQ(rows_of.size(), std::size(kCodes)) << "docs/architecture.md names a code the table lacks";
}

TEST(CodesTest, NamesAreUniqueKebabCase) {
  std::set<std::string_view> names;
  for (const CodeInfo& info : kCodes) {
    EXPECT_TRUE(names.insert(info.name).second) << info.name;
    for (char c : info.name) EXPECT_TRUE(std::islower(static_cast<unsigned char>(c)) || c == '-') << info.name;
  }
}

// Every field is "{N}", "{N!r}" or "{N!l}", and the fields number their
// arguments 0, 1, ... without a gap (FormatMessage relies on it).
TEST(CodesTest, MessageFormatsAreWellFormed) {
  for (const CodeInfo& info : kCodes) {
    std::set<int> used;
    const std::string_view f = info.format;
    for (size_t i = 0; i < f.size(); ++i) {
      if (f[i] == '}') ADD_FAILURE() << info.name << ": a '}' outside a field";
      if (f[i] != '{') continue;
      const size_t close = f.find('}', i);
      ASSERT_NE(close, std::string_view::npos) << info.name;
      const std::string_view field = f.substr(i + 1, close - i - 1);
      ASSERT_TRUE(field.size() == 1 || (field.size() == 3 && field[1] == '!' && (field[2] == 'r' || field[2] == 'l')))
          << info.name << ": field {" << field << "}";
      ASSERT_TRUE(std::isdigit(static_cast<unsigned char>(field[0]))) << info.name;
      used.insert(field[0] - '0');
      i = close;
    }
    for (int k = 0; k < static_cast<int>(used.size()); ++k) EXPECT_EQ(used.count(k), 1u) << info.name << ": {" << k << "}";
  }
}

// The public view of the table (SARIF's rules): every row, its fields, and
// each message with its arguments as "…", quoted as the message quotes them.
TEST(CodesTest, DiagnosticCodesIsTheTable) {
  const std::vector<DiagnosticCode>& codes = DiagnosticCodes();
  ASSERT_EQ(codes.size(), kCodeCount);
  for (size_t i = 0; i < kCodeCount; ++i) {
    EXPECT_EQ(codes[i].name, kCodes[i].name);
    EXPECT_EQ(codes[i].severity, kCodes[i].severity);
    EXPECT_EQ(codes[i].check_severity, kCodes[i].check_severity);
    EXPECT_EQ(codes[i].doc, kCodes[i].doc);
    EXPECT_EQ(codes[i].message.find('{'), std::string_view::npos) << codes[i].message;
  }
  EXPECT_EQ(codes[static_cast<size_t>(Code::kUnknownModule)].message, "no module at '…'");
  EXPECT_EQ(codes[static_cast<size_t>(Code::kOmittedParameters)].message,
            "module-owned layout '…' omits parameters ['…']");
  EXPECT_EQ(codes[static_cast<size_t>(Code::kInvalidDocument)].message, "…");
}

// Only findings of the planner's that `check` also reports are warnings
// there: check keeps the reference's verdict.
TEST(CodesTest, OnlyThePlannersFindingsInCheckDependOnTheMode) {
  for (const CodeInfo& info : kCodes) {
    const bool planners = info.code == Code::kShardDimOutOfRange || info.code == Code::kPipelineUnknownModule ||
                          info.code == Code::kPipelineUnknownInput || info.code == Code::kExceedsDeviceMemory;
    EXPECT_EQ(info.severity != info.check_severity, planners) << info.name;
    if (planners) EXPECT_EQ(info.check_severity, Severity::kWarning) << info.name;
  }
}

}  // namespace
}  // namespace shardplan
