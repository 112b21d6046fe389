// The communication a final plan implies: one record per (entry, port, axis)
// where source and destination differ, and counts per (collective, axis).
#include "core/planning/communication.h"

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace shardplan {
namespace {

Placement P(std::string_view text) { return *ParsePlacement(text); }

class Plan {
 public:
  explicit Plan(const std::vector<std::string>& mesh) {
    for (const std::string& name : mesh) {
      const NameId id = doc.names.Intern(name);
      doc.mesh.push_back({id, 2});
      doc.mesh_names.Insert(id);
    }
  }

  using Ports = std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>>;
  MapRef Map(const Ports& ports) {
    PlacementMap map;
    for (const auto& [name, placements] : ports) {
      PlacementEntry& e = map.emplace_back();
      e.name = doc.names.Intern(name);
      for (const auto& [axis, text] : placements) e.placements.push_back({doc.names.Intern(axis), P(text)});
    }
    return doc.maps->Intern(std::move(map));
  }
  // What the entry for `fqn`, added last, says.
  LayoutBody& Entry(std::string_view fqn) { return bodies.emplace_back(doc.names.Intern(fqn), LayoutBody{}).second; }

  // The entries, their bodies stored.
  std::vector<FqnLayout> Entries() const {
    std::vector<FqnLayout> entries;
    for (const auto& [fqn, body] : bodies) entries.push_back({fqn, {doc.maps->Intern(body), {}}});
    return entries;
  }

  // "fqn port axis from->to collective" per record.
  std::vector<std::string> Records() const {
    std::vector<std::string> out;
    for (const CommunicationRecord& r : ComputeCommunication(doc, Entries()).records) {
      out.push_back(absl::StrCat(r.fqn, " ", r.port, " ", doc.Name(r.axis), " ", FormatPlacement(r.from), "->",
                                 FormatPlacement(r.to), " ", CollectiveName(r.collective)));
    }
    return out;
  }

  Document doc;
  std::deque<std::pair<NameId, LayoutBody>> bodies;  // references stay valid
};

using Lines = std::vector<std::string>;

TEST(CommunicationTest, TheSpecTableAndTheTwoUnnamedKinds) {
  EXPECT_EQ(CollectiveFor(P("S(0)"), P("R")), Collective::kAllGather);
  EXPECT_EQ(CollectiveFor(P("R"), P("S(-1)")), Collective::kSlice);
  EXPECT_EQ(CollectiveFor(P("P"), P("R")), Collective::kAllReduce);
  EXPECT_EQ(CollectiveFor(P("P(max)"), P("R")), Collective::kAllReduce);
  EXPECT_EQ(CollectiveFor(P("P"), P("S(1)")), Collective::kReduceScatter);
  EXPECT_EQ(CollectiveFor(P("P(avg)"), P("S(1)")), Collective::kReduceScatter);
  EXPECT_EQ(CollectiveFor(P("S(0)"), P("S(1)")), Collective::kAllToAll);
  EXPECT_EQ(CollectiveFor(P("S(-1)"), P("S(1)")), Collective::kAllToAll);
  EXPECT_EQ(CollectiveFor(P("R"), P("P")), Collective::kNone);
  EXPECT_EQ(CollectiveFor(P("R"), P("P(max)")), Collective::kNone);
  EXPECT_EQ(CollectiveFor(P("S(0)"), P("P")), Collective::kUnsupported);
  EXPECT_EQ(CollectiveFor(P("P(sum)"), P("P(max)")), Collective::kUnsupported);
}

TEST(CommunicationTest, CollectiveNames) {
  EXPECT_EQ(CollectiveName(Collective::kAllGather), "all_gather");
  EXPECT_EQ(CollectiveName(Collective::kSlice), "slice");
  EXPECT_EQ(CollectiveName(Collective::kAllReduce), "all_reduce");
  EXPECT_EQ(CollectiveName(Collective::kReduceScatter), "reduce_scatter");
  EXPECT_EQ(CollectiveName(Collective::kAllToAll), "all_to_all");
  EXPECT_EQ(CollectiveName(Collective::kNone), "none");
  EXPECT_EQ(CollectiveName(Collective::kUnsupported), "unsupported");
}

TEST(CommunicationTest, OneRecordPerTransition) {
  Plan plan({"tp"});
  LayoutBody& l = plan.Entry("m");
  l.in_src = plan.Map({{"a", {{"tp", "S(0)"}}},
                       {"b", {{"tp", "R"}}},
                       {"c", {{"tp", "P"}}},
                       {"d", {{"tp", "P(avg)"}}},
                       {"e", {{"tp", "S(0)"}}},
                       {"f", {{"tp", "R"}}},
                       {"g", {{"tp", "S(1)"}}},
                       {"h", {{"tp", "P"}}},
                       {"same", {{"tp", "S(1)"}}}});
  l.in_dst = plan.Map({{"a", {{"tp", "R"}}},
                       {"b", {{"tp", "S(1)"}}},
                       {"c", {{"tp", "R"}}},
                       {"d", {{"tp", "S(0)"}}},
                       {"e", {{"tp", "S(-1)"}}},
                       {"f", {{"tp", "P"}}},
                       {"g", {{"tp", "P"}}},
                       {"h", {{"tp", "P(max)"}}},
                       {"same", {{"tp", "S(1)"}}}});
  EXPECT_EQ(plan.Records(), (Lines{"m in:a tp S(0)->R all_gather", "m in:b tp R->S(1) slice",
                                   "m in:c tp P->R all_reduce", "m in:d tp P(avg)->S(0) reduce_scatter",
                                   "m in:e tp S(0)->S(-1) all_to_all", "m in:f tp R->P none",
                                   "m in:g tp S(1)->P unsupported", "m in:h tp P->P(max) unsupported"}));
}

TEST(CommunicationTest, AbsentSidesAndAxesAreReplicated) {
  Plan plan({"dp", "tp"});
  LayoutBody& l = plan.Entry("m");
  // x: only a source; y: only a destination; z: the axis only on one side.
  l.out_src = plan.Map({{"x", {{"tp", "S(-1)"}}}, {"z", {{"dp", "P"}}}});
  l.out_dst = plan.Map({{"y", {{"tp", "S(1)"}}}, {"z", {{"tp", "S(0)"}}}});
  EXPECT_EQ(plan.Records(), (Lines{"m out:x tp S(-1)->R all_gather", "m out:z dp P->R all_reduce",
                                   "m out:z tp R->S(0) slice", "m out:y tp R->S(1) slice"}));
}

TEST(CommunicationTest, NullMapsHaveNoPorts) {
  Plan plan({"tp"});
  LayoutBody& a = plan.Entry("a");
  a.in_src = plan.Map({{"x", {{"tp", "S(0)"}}}});  // in_dst null: x arrives sharded, wanted whole
  LayoutBody& b = plan.Entry("b");
  b.out_dst = plan.Map({{"y", {{"tp", "S(0)"}}}});
  plan.Entry("c");
  EXPECT_EQ(plan.Records(), (Lines{"a in:x tp S(0)->R all_gather", "b out:y tp R->S(0) slice"}));
}

TEST(CommunicationTest, PortsAreTheSourceNamesThenTheNewDestinationNames) {
  Plan plan({"tp"});
  LayoutBody& l = plan.Entry("m");
  l.in_src = plan.Map({{"b", {{"tp", "S(0)"}}}, {"a", {{"tp", "S(0)"}}}});
  l.in_dst = plan.Map({{"c", {{"tp", "S(0)"}}}, {"a", {{"tp", "R"}}}, {"b", {{"tp", "R"}}}, {"d", {{"tp", "S(0)"}}}});
  EXPECT_EQ(plan.Records(), (Lines{"m in:b tp S(0)->R all_gather", "m in:a tp S(0)->R all_gather",
                                   "m in:c tp R->S(0) slice", "m in:d tp R->S(0) slice"}));
}

TEST(CommunicationTest, EntriesInOrderInputsBeforeOutputsAxesInMeshOrder) {
  Plan plan({"dp", "ep", "tp"});
  LayoutBody& second = plan.Entry("z.second");
  second.out_src = plan.Map({{"output", {{"tp", "P"}, {"dp", "S(0)"}}}});
  second.in_src = plan.Map({{"input", {{"tp", "S(-1)"}, {"ep", "S(0)"}}}});
  LayoutBody& first = plan.Entry("a.first");
  first.in_dst = plan.Map({{"hidden", {{"tp", "S(1)"}}}});
  EXPECT_EQ(plan.Records(),
            (Lines{"z.second in:input ep S(0)->R all_gather", "z.second in:input tp S(-1)->R all_gather",
                   "z.second out:output dp S(0)->R all_gather", "z.second out:output tp P->R all_reduce",
                   "a.first in:hidden tp R->S(1) slice"}));
}

TEST(CommunicationTest, AxesOutsideTheMeshAreSkipped) {
  Plan plan({"tp"});
  LayoutBody& l = plan.Entry("m");
  l.in_src = plan.Map({{"x", {{"storage", "S(0)"}, {"tp", "S(0)"}}}});
  l.in_dst = plan.Map({{"x", {{"tp", "S(0)"}}}});
  EXPECT_EQ(plan.Records(), Lines{});
}

TEST(CommunicationTest, RecordsCarryTheirFields) {
  Plan plan({"tp"});
  LayoutBody& l = plan.Entry("");
  l.out_src = plan.Map({{"logits", {{"tp", "S(-1)"}}}});
  l.out_dst = plan.Map({{"logits", {{"tp", "R"}}}});
  const CommunicationReport report = ComputeCommunication(plan.doc, plan.Entries());
  ASSERT_EQ(report.records.size(), 1u);
  const CommunicationRecord& r = report.records[0];
  EXPECT_EQ(r.fqn, "");
  EXPECT_EQ(r.port, "out:logits");
  EXPECT_EQ(r.axis, plan.doc.names.Find("tp"));
  EXPECT_EQ(r.from, P("S(-1)"));
  EXPECT_EQ(r.to, P("R"));
  EXPECT_EQ(r.collective, Collective::kAllGather);
}

TEST(CommunicationTest, CountsPerCollectiveThenAxisInMeshOrder) {
  Plan plan({"dp", "tp"});
  LayoutBody& a = plan.Entry("a");
  a.in_src = plan.Map({{"x", {{"tp", "R"}, {"dp", "R"}}}, {"y", {{"tp", "P"}}}});
  a.in_dst = plan.Map({{"x", {{"tp", "S(0)"}, {"dp", "S(0)"}}}, {"y", {{"tp", "R"}}}});
  a.out_src = plan.Map({{"output", {{"tp", "S(-1)"}, {"dp", "P"}}}});
  a.out_dst = plan.Map({{"output", {}}});
  LayoutBody& b = plan.Entry("b");
  b.in_src = plan.Map({{"x", {{"tp", "P"}}}});
  b.in_dst = plan.Map({{"x", {}}});
  b.out_src = plan.Map({{"output", {{"tp", "S(-1)"}}}});
  const CommunicationReport report = ComputeCommunication(plan.doc, plan.Entries());
  std::vector<std::string> counts;
  for (const CollectiveCount& c : report.counts) {
    counts.push_back(absl::StrCat(CollectiveName(c.collective), " ", plan.doc.Name(c.axis), " ", c.count));
  }
  EXPECT_EQ(counts, (Lines{"all_gather tp 2", "slice dp 1", "slice tp 1", "all_reduce dp 1", "all_reduce tp 2"}));
  EXPECT_EQ(report.records.size(), 7u);
}

TEST(CommunicationTest, AnEmptyPlanImpliesNothing) {
  Plan plan({"tp"});
  const CommunicationReport report = ComputeCommunication(plan.doc, plan.Entries());
  EXPECT_TRUE(report.records.empty());
  EXPECT_TRUE(report.counts.empty());
}

}  // namespace
}  // namespace shardplan
