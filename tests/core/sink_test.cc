#include "core/diagnostics/sink.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace shardplan {
namespace {

TEST(SinkTest, ReportSpellsTheCodeSeverityAndMessageFromTheTable) {
  DiagnosticSink sink(Mode::kPlan);
  sink.Report(Code::kSharedConflict, {.fqn = "lm_head", .parameter = "lm_head.weight", .pointer = "/p"},
              "lm_head.weight");
  const std::vector<Diagnostic> all = sink.Take();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].code, "shared-conflict");
  EXPECT_EQ(all[0].severity, Severity::kError);
  EXPECT_EQ(all[0].message, "shared parameter 'lm_head.weight' has conflicting layouts");
  EXPECT_EQ(all[0].fqn, "lm_head");
  EXPECT_EQ(all[0].parameter, "lm_head.weight");
  EXPECT_EQ(all[0].pointer, "/p");
}

TEST(SinkTest, AbsentPlacesStayAbsent) {
  DiagnosticSink sink;
  sink.Report(Code::kNativeNoMatch, {.pointer = "/providers/native/0/match/0"}, "a.*");
  const Diagnostic d = sink.Take()[0];
  EXPECT_FALSE(d.fqn.has_value());
  EXPECT_FALSE(d.parameter.has_value());
  EXPECT_EQ(d.message, "native binding pattern 'a.*' matched no module");
}

TEST(SinkTest, TheModePicksTheSeverityOfShardDimOutOfRange) {
  for (const auto& [mode, severity] : {std::pair{Mode::kPlan, Severity::kError}, {Mode::kCheck, Severity::kWarning}}) {
    DiagnosticSink sink(mode);
    sink.Report(Code::kShardDimOutOfRange, {}, "w", "S(2)", "tp", "it has rank 2: dims are -2 to 1");
    EXPECT_EQ(sink.has_errors(), severity == Severity::kError);
    const Diagnostic d = sink.Take()[0];
    EXPECT_EQ(d.severity, severity);
    EXPECT_EQ(d.message, "parameter 'w' is sharded S(2) on axis 'tp' but it has rank 2: dims are -2 to 1");
  }
}

TEST(SinkTest, OnlyErrorsFailADocument) {
  DiagnosticSink sink(Mode::kPlan);
  EXPECT_FALSE(sink.has_errors());
  sink.Report(Code::kEmptyShard, {}, "w", "dim 0 has size 1", "is split over ", "2 devices (tp=2)");
  sink.Report(Code::kUnplannedParameters, {}, "1 parameter is", "stays", "w", "");
  EXPECT_FALSE(sink.has_errors());
  sink.Report(Code::kMultipleOwners, {}, "a");
  EXPECT_TRUE(sink.has_errors());
}

TEST(SinkTest, AppendKeepsOrder) {
  DiagnosticSink a, b;
  a.Report(Code::kPortsMissing, {});
  b.Report(Code::kPortsMismatch, {});
  b.Report(Code::kDuplicateOutputName, {});
  a.Append(std::move(b));
  const std::vector<Diagnostic> all = a.Take();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].code, "ports-missing");
  EXPECT_EQ(all[2].code, "duplicate-output-name");
  EXPECT_EQ(SeverityName(Severity::kWarning), "warning");
}

TEST(SinkTest, FormatsReprsAndListsAsPythonPrintsThem) {
  EXPECT_EQ(FormatMessage(Code::kOmittedParameters, {"it's", std::vector<std::string_view>{"a", "b\n"}}),
            "module-owned layout \"it's\" omits parameters ['a', 'b\\n']");
  EXPECT_EQ(FormatMessage(Code::kUnusedTemplateRule, {"x.*", "colwise", "tp"}),
            "template rule 'x.*' (colwise on 'tp') matched no module or parameter");
}

}  // namespace
}  // namespace shardplan
