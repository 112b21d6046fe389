#include "core/diagnostic.h"

#include "gtest/gtest.h"

namespace shardplan {
namespace {

TEST(DiagnosticTest, OnlyErrorsFailADocument) {
  DiagnosticSink sink;
  EXPECT_FALSE(sink.has_errors());
  sink.Error("uneven-shard", "w").severity = Severity::kWarning;
  sink.Error("unplanned-parameters", "i").severity = Severity::kInfo;
  EXPECT_FALSE(sink.has_errors());
  sink.Error("multiple-owners", "e");
  EXPECT_TRUE(sink.has_errors());
}

TEST(DiagnosticTest, AppendKeepsOrder) {
  DiagnosticSink a, b;
  a.Error("first", "1");
  b.Error("second", "2");
  b.Error("third", "3");
  a.Append(std::move(b));
  std::vector<Diagnostic> all = a.Take();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].code, "first");
  EXPECT_EQ(all[2].code, "third");
  EXPECT_EQ(SeverityName(Severity::kWarning), "warning");
}

}  // namespace
}  // namespace shardplan
