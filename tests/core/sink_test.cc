#include "core/diagnostics/sink.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
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

// A group's identity: code and pointer (none, "" and "/a" all differ).
struct Seen {
  std::string code;
  std::optional<std::string> pointer;
  size_t count;
  std::vector<size_t> listed;
  bool operator==(const Seen&) const = default;
};

std::vector<Seen> SeenGroups(const std::vector<DiagnosticGroup>& groups) {
  std::vector<Seen> seen;
  for (const DiagnosticGroup& g : groups) seen.push_back({g.code, g.pointer, g.count, g.listed});
  return seen;
}

// Reports a storm into `sink`: per i, a ports-missing at /a, an unknown-axis
// at /b (both in group order of first occurrence: /a first), and for every
// third i a ports-mismatch with no pointer or at the root "".
void Storm(DiagnosticSink& sink, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i) {
    sink.Report(Code::kPortsMissing, {.pointer = "/a"});
    sink.Report(Code::kUnknownAxis, {.fqn = std::to_string(i), .pointer = "/b"}, std::to_string(i));
    if (i % 3 == 0) sink.Report(Code::kPortsMismatch, {});
    if (i % 3 == 1) sink.Report(Code::kPortsMismatch, {.pointer = ""});
  }
}

TEST(SinkTest, GroupsAreCodeAndPointerInOrderOfFirstDiagnostic) {
  DiagnosticSink sink;
  Storm(sink, 0, 10);
  std::vector<DiagnosticGroup> groups;
  const std::vector<Diagnostic> all = sink.Take(groups);
  ASSERT_EQ(all.size(), 27u);
  // Diagnostics: i=0: a b m(none); i=1: a b m(""); i=2: a b; i=3: ...
  const std::vector<Seen> want = {
      {"ports-missing", "/a", 10, {0, 3, 6, 8, 11, 14, 16, 19, 22, 24}},
      {"unknown-axis", "/b", 10, {1, 4, 7, 9, 12, 15, 17, 20, 23, 25}},
      {"ports-mismatch", std::nullopt, 4, {2, 10, 18, 26}},
      {"ports-mismatch", "", 3, {5, 13, 21}},
  };
  EXPECT_EQ(SeenGroups(groups), want);
  for (const DiagnosticGroup& g : groups) {
    for (size_t i : g.listed) {
      EXPECT_EQ(all[i].code, g.code);
      EXPECT_EQ(all[i].pointer, g.pointer);
    }
  }
}

// Capped, a sink keeps each group's first diagnostics and counts the rest,
// also across chunks appended in order: the same as capping the full list.
TEST(SinkTest, CappedKeepsTheFirstOfEachGroupAndCountsEveryOne) {
  DiagnosticSink full;
  Storm(full, 0, 100);
  std::vector<DiagnosticGroup> full_groups;
  const std::vector<Diagnostic> all = full.Take(full_groups);
  for (size_t cap : {1, 2, 5}) {
    for (size_t chunk : {1, 7, 100}) {
      DiagnosticSink sink(Mode::kCheck, cap);
      for (size_t from = 0; from < 100; from += chunk) {
        DiagnosticSink part(Mode::kCheck, cap);
        Storm(part, from, std::min<size_t>(100, from + chunk));
        sink.Append(std::move(part));
      }
      std::vector<DiagnosticGroup> groups;
      const std::vector<Diagnostic> kept = sink.Take(groups);
      ASSERT_EQ(groups.size(), full_groups.size());
      // The kept diagnostics: each group's first `cap`, in evaluation order.
      std::vector<size_t> want_kept;
      for (const DiagnosticGroup& g : full_groups) {
        want_kept.insert(want_kept.end(), g.listed.begin(), g.listed.begin() + std::min(cap, g.listed.size()));
      }
      std::sort(want_kept.begin(), want_kept.end());
      ASSERT_EQ(kept.size(), want_kept.size()) << "cap " << cap << " chunk " << chunk;
      for (size_t k = 0; k < kept.size(); ++k) {
        EXPECT_EQ(kept[k].message, all[want_kept[k]].message);
        EXPECT_EQ(kept[k].pointer, all[want_kept[k]].pointer);
      }
      for (size_t g = 0; g < groups.size(); ++g) {
        EXPECT_EQ(groups[g].code, full_groups[g].code);
        EXPECT_EQ(groups[g].pointer, full_groups[g].pointer);
        EXPECT_EQ(groups[g].count, full_groups[g].count);
        ASSERT_EQ(groups[g].listed.size(), std::min(cap, full_groups[g].count));
        for (size_t i : groups[g].listed) EXPECT_EQ(kept[i].code, groups[g].code);
      }
    }
  }
}

TEST(SinkTest, CappedStillSeesErrorsAndMixesWithUncappedChunks) {
  DiagnosticSink sink(Mode::kPlan, 1);
  DiagnosticSink entry(Mode::kPlan);  // a plan entry's sink keeps every diagnostic
  entry.Report(Code::kEmptyShard, {.pointer = "/p"}, "w", "dim 0 has size 1", "is split over ", "2 devices (tp=2)");
  entry.Report(Code::kEmptyShard, {.pointer = "/p"}, "v", "dim 0 has size 1", "is split over ", "2 devices (tp=2)");
  sink.Append(std::move(entry));
  EXPECT_FALSE(sink.has_errors());
  sink.Report(Code::kMultipleOwners, {.pointer = "/q"}, "a");
  sink.Report(Code::kMultipleOwners, {.pointer = "/q"}, "b");
  EXPECT_TRUE(sink.has_errors());
  std::vector<DiagnosticGroup> groups;
  const std::vector<Diagnostic> kept = sink.Take(groups);
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[1].message, "multiple layout/communication owners for module 'a'");
  const std::vector<Seen> want = {{"empty-shard", "/p", 2, {0}}, {"multiple-owners", "/q", 2, {1}}};
  EXPECT_EQ(SeenGroups(groups), want);
  // Taken, the sink is empty.
  EXPECT_TRUE(sink.Take(groups).empty());
  EXPECT_TRUE(groups.empty());
}

// Keeps what it is given, as a caller writing diagnostics out would see them.
class Recorder : public DiagnosticStream {
 public:
  void Write(const Diagnostic& d) override { written.push_back(d); }
  std::vector<Diagnostic> written;
};

// With a stream, a sink passes on what it would have kept, in the same
// order and with the same groups, holds none, and still knows whether one
// was an error; chunks appended to it too.
TEST(SinkTest, AStreamGetsWhatTheSinkWouldKeep) {
  for (size_t cap : {0, 1, 3}) {
    for (size_t chunk : {1, 7, 100}) {
      DiagnosticSink kept_sink(Mode::kCheck, cap);
      Recorder recorder;
      DiagnosticSink streamed(Mode::kCheck, cap, &recorder);
      EXPECT_FALSE(streamed.has_errors());
      for (size_t from = 0; from < 100; from += chunk) {
        const size_t to = std::min<size_t>(100, from + chunk);
        if (from % 2 == 0) {  // reported, or from a chunk's sink
          Storm(kept_sink, from, to);
          Storm(streamed, from, to);
        } else {
          DiagnosticSink a(Mode::kCheck, cap), b(Mode::kCheck, cap);
          Storm(a, from, to);
          Storm(b, from, to);
          kept_sink.Append(std::move(a));
          streamed.Append(std::move(b));
        }
      }
      EXPECT_EQ(streamed.has_errors(), kept_sink.has_errors());
      std::vector<DiagnosticGroup> want_groups, groups;
      const std::vector<Diagnostic> want = kept_sink.Take(want_groups);
      EXPECT_TRUE(streamed.Take(groups).empty());
      ASSERT_EQ(recorder.written.size(), want.size()) << "cap " << cap << " chunk " << chunk;
      for (size_t i = 0; i < want.size(); ++i) {
        EXPECT_EQ(recorder.written[i].message, want[i].message);
        EXPECT_EQ(recorder.written[i].pointer, want[i].pointer);
      }
      EXPECT_EQ(SeenGroups(groups), SeenGroups(want_groups)) << "cap " << cap << " chunk " << chunk;
    }
  }
}

}  // namespace
}  // namespace shardplan
