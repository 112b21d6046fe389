// Shape checks of a final plan: out-of-range shard dims, uneven and empty
// shards, counted in units of blocks.
#include "core/planning/shapes.h"

#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace shardplan {
namespace {

class Plan {
 public:
  explicit Plan(const std::vector<std::pair<std::string, int64_t>>& mesh) {
    for (const auto& [name, size] : mesh) {
      const NameId id = doc.names.Intern(name);
      doc.mesh.push_back({id, size});
      doc.mesh_names.Insert(id);
    }
  }

  ParamId Param(std::optional<std::vector<int64_t>> shape, std::vector<int64_t> blocks = {}) {
    const ParamId id = static_cast<ParamId>(doc.parameters.size());
    Parameter& param = doc.parameters.emplace_back();
    param.id = doc.names.Intern(absl::StrCat("p", id));
    if (shape) param.shape.emplace(shape->begin(), shape->end());
    param.blocks.assign(blocks.begin(), blocks.end());
    return id;
  }

  // Declares `param` as fqn.local with placements {axis: placement, ...}.
  ParamDeclaration& Declare(ParamId param, std::string fqn, std::string local,
                            const std::vector<std::pair<std::string, std::string>>& placements) {
    NamedPlacements& named = storage_.emplace_back();
    for (const auto& [axis, text] : placements) named.push_back({doc.names.Intern(axis), *ParsePlacement(text)});
    declarations.push_back({param, &named, std::move(fqn), std::move(local),
                            absl::StrCat("/plan/modules/", declarations.size())});
    return declarations.back();
  }

  std::vector<Diagnostic> Check(Mode mode = Mode::kPlan) const {
    DiagnosticSink sink(mode);
    CheckShapes(doc, declarations, sink);
    return sink.Take();
  }
  // "code|severity|message" per diagnostic.
  std::vector<std::string> Findings(Mode mode = Mode::kPlan) const {
    std::vector<std::string> out;
    for (const Diagnostic& d : Check(mode)) {
      out.push_back(absl::StrCat(d.code, "|", SeverityName(d.severity), "|", d.message));
    }
    return out;
  }

  Document doc;
  std::vector<ParamDeclaration> declarations;

 private:
  std::deque<NamedPlacements> storage_;  // stable addresses
};

using Findings = std::vector<std::string>;

TEST(ShapesTest, EvenShardsAreFine) {
  Plan plan({{"dp", 2}, {"tp", 4}});
  plan.Declare(plan.Param(std::vector<int64_t>{16, 8}), "mlp", "weight", {{"tp", "S(0)"}, {"dp", "S(-1)"}});
  plan.Declare(plan.Param(std::vector<int64_t>{16}), "mlp", "bias", {{"tp", "S(-1)"}, {"dp", "S(0)"}});
  EXPECT_EQ(plan.Findings(), Findings{});
}

TEST(ShapesTest, EmptyShardCountsBlocks) {
  // 8 KV heads of 128 rows: 1024 rows, but only 8 units for 16 devices.
  Plan plan({{"tp", 16}});
  plan.Declare(plan.Param(std::vector<int64_t>{1024, 4096}, {128, 1}), "layers.0.self_attn.k_proj", "weight",
               {{"tp", "S(0)"}});
  EXPECT_EQ(plan.Findings(), Findings{"empty-shard|warning|parameter 'layers.0.self_attn.k_proj.weight' dim 0 has 8 "
                                      "units (blocks of 128) but is split over 16 devices (tp=16): some devices "
                                      "hold nothing"});
}

TEST(ShapesTest, UnevenShardListsTheShardCountsThatDivide) {
  Plan plan({{"tp", 4}});
  plan.Declare(plan.Param(std::vector<int64_t>{10, 3}), "", "w", {{"tp", "S(0)"}});
  EXPECT_EQ(plan.Findings(), Findings{"uneven-shard|warning|parameter 'w' dim 0 has size 10 and is split over 4 "
                                      "devices (tp=4): 10 is not a multiple of 4; shard counts below 4 that divide "
                                      "it evenly: 2"});
}

TEST(ShapesTest, UnevenShardSaysWhenNoShardCountDivides) {
  Plan plan({{"tp", 4}, {"dp", 2}});
  plan.Declare(plan.Param(std::vector<int64_t>{7}), "a", "w", {{"tp", "S(0)"}});
  plan.Declare(plan.Param(std::vector<int64_t>{3}), "a", "v", {{"dp", "S(0)"}});
  EXPECT_EQ(plan.Findings(), (Findings{"uneven-shard|warning|parameter 'a.w' dim 0 has size 7 and is split over 4 "
                                       "devices (tp=4): 7 is not a multiple of 4; no shard count from 2 to 3 "
                                       "divides it evenly",
                                       "uneven-shard|warning|parameter 'a.v' dim 0 has size 3 and is split over 2 "
                                       "devices (dp=2): 3 is not a multiple of 2"}));
}

TEST(ShapesTest, SeveralAxesOnOneDimMultiplyInMeshOrder) {
  // Written tp first; reported in mesh order dp x tp.
  Plan plan({{"dp", 2}, {"tp", 4}});
  plan.Declare(plan.Param(std::vector<int64_t>{5, 12}), "m", "w", {{"tp", "S(1)"}, {"dp", "S(-1)"}});
  plan.Declare(plan.Param(std::vector<int64_t>{6}), "m", "b", {{"tp", "S(0)"}, {"dp", "S(0)"}});
  EXPECT_EQ(plan.Findings(),
            (Findings{"uneven-shard|warning|parameter 'm.w' dim 1 has size 12 and is split over 8 devices (dp=2 x "
                      "tp=4): 12 is not a multiple of 8; shard counts below 8 that divide it evenly: 2, 3, 4, 6",
                      "empty-shard|warning|parameter 'm.b' dim 0 has size 6 but is split over 8 devices (dp=2 x "
                      "tp=4): some devices hold nothing"}));
}

TEST(ShapesTest, ManyDivisorsListTheLargest) {
  Plan plan({{"tp", 64}});
  plan.Declare(plan.Param(std::vector<int64_t>{720}), "", "w", {{"tp", "S(0)"}});
  EXPECT_EQ(plan.Findings(),
            Findings{"uneven-shard|warning|parameter 'w' dim 0 has size 720 and is split over 64 devices (tp=64): "
                     "720 is not a multiple of 64; the largest shard counts below 64 that divide it evenly: 20, 24, "
                     "30, 36, 40, 45, 48, 60"});
}

TEST(ShapesTest, DivisorsOfLargeDimsOnHugeAxesAreFoundBySquareRoot) {
  Plan plan({{"tp", 4194304}});
  plan.Declare(plan.Param(std::vector<int64_t>{6000000}), "", "w", {{"tp", "S(0)"}});
  EXPECT_EQ(plan.Findings(),
            Findings{"uneven-shard|warning|parameter 'w' dim 0 has size 6000000 and is split over 4194304 devices "
                     "(tp=4194304): 6000000 is not a multiple of 4194304; the largest shard counts below 4194304 "
                     "that divide it evenly: 500000, 600000, 750000, 1000000, 1200000, 1500000, 2000000, 3000000"});
}

TEST(ShapesTest, EachShardedDimIsCheckedInOrder) {
  Plan plan({{"ep", 3}, {"tp", 2}});
  plan.Declare(plan.Param(std::vector<int64_t>{2, 5, 8}), "experts", "w", {{"tp", "S(-2)"}, {"ep", "S(0)"}});
  EXPECT_EQ(plan.Findings(),
            (Findings{"empty-shard|warning|parameter 'experts.w' dim 0 has size 2 but is split over 3 devices "
                      "(ep=3): some devices hold nothing",
                      "uneven-shard|warning|parameter 'experts.w' dim 1 has size 5 and is split over 2 devices "
                      "(tp=2): 5 is not a multiple of 2"}));
}

TEST(ShapesTest, OutOfRangeIsAnErrorInPlanAndAWarningInCheck) {
  Plan plan({{"tp", 2}, {"dp", 2}});
  plan.Declare(plan.Param(std::vector<int64_t>{4, 4}), "m", "w", {{"dp", "S(-3)"}, {"tp", "S(2)"}});
  const Findings in_plan = {
      "shard-dim-out-of-range|error|parameter 'm.w' is sharded S(2) on axis 'tp' but it has rank 2: dims are -2 "
      "to 1",
      "shard-dim-out-of-range|error|parameter 'm.w' is sharded S(-3) on axis 'dp' but it has rank 2: dims are -2 "
      "to 1"};
  EXPECT_EQ(plan.Findings(Mode::kPlan), in_plan);
  const std::vector<Diagnostic> in_check = plan.Check(Mode::kCheck);
  ASSERT_EQ(in_check.size(), 2u);
  for (const Diagnostic& d : in_check) EXPECT_EQ(d.severity, Severity::kWarning);
}

TEST(ShapesTest, ScalarsHaveNoDimToShard) {
  Plan plan({{"tp", 2}});
  plan.Declare(plan.Param(std::vector<int64_t>{}), "norm", "scale", {{"tp", "S(0)"}});
  EXPECT_EQ(plan.Findings(), Findings{"shard-dim-out-of-range|error|parameter 'norm.scale' is sharded S(0) on axis "
                                      "'tp' but it is a scalar (rank 0): it has no dim to shard"});
}

TEST(ShapesTest, OtherFindingsAreWarningsEvenInPlan) {
  Plan plan({{"tp", 4}});
  plan.Declare(plan.Param(std::vector<int64_t>{2}), "", "a", {{"tp", "S(0)"}});
  plan.Declare(plan.Param(std::vector<int64_t>{6}), "", "b", {{"tp", "S(0)"}});
  for (Mode mode : {Mode::kPlan, Mode::kCheck}) {
    const std::vector<Diagnostic> found = plan.Check(mode);
    ASSERT_EQ(found.size(), 2u);
    EXPECT_EQ(found[0].code, "empty-shard");
    EXPECT_EQ(found[1].code, "uneven-shard");
    for (const Diagnostic& d : found) EXPECT_EQ(d.severity, Severity::kWarning);
  }
}

TEST(ShapesTest, DiagnosticsNameTheModuleParameterAndDeclaration) {
  Plan plan({{"tp", 4}});
  plan.Declare(plan.Param(std::vector<int64_t>{6}), "layers.0.mlp", "up_proj.bias", {{"tp", "S(0)"}}).pointer =
      "template:tp:layers.*.mlp.up_proj";
  const std::vector<Diagnostic> found = plan.Check();
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].fqn, "layers.0.mlp");
  EXPECT_EQ(found[0].parameter, "layers.0.mlp.up_proj.bias");
  EXPECT_EQ(found[0].pointer, "template:tp:layers.*.mlp.up_proj");
}

TEST(ShapesTest, ReplicatePartialForeignAxesAndUnknownShapesAreSkipped) {
  Plan plan({{"tp", 4}});
  plan.Declare(plan.Param(std::vector<int64_t>{3}), "", "a", {{"tp", "R"}});
  plan.Declare(plan.Param(std::vector<int64_t>{3}), "", "b", {{"tp", "P(max)"}});
  plan.Declare(plan.Param(std::vector<int64_t>{3}), "", "c", {{"storage", "S(5)"}});
  plan.Declare(plan.Param(std::nullopt), "", "d", {{"tp", "S(7)"}});
  plan.Declare(plan.Param(std::vector<int64_t>{3}), "", "e", {});
  EXPECT_EQ(plan.Findings(), Findings{});
}

TEST(ShapesTest, AxesOfSizeOneNeverSplitUnevenly) {
  Plan plan({{"pp", 1}});
  plan.Declare(plan.Param(std::vector<int64_t>{7}), "", "w", {{"pp", "S(0)"}});
  EXPECT_EQ(plan.Findings(), Findings{});
}

TEST(ShapesTest, ZeroSizedDimsHaveFewerUnitsThanShards) {
  // The spec's rule taken literally: 0 units is fewer than 2 shards.
  Plan plan({{"tp", 2}});
  plan.Declare(plan.Param(std::vector<int64_t>{0, 4}), "", "w", {{"tp", "S(0)"}});
  EXPECT_EQ(plan.Findings(), Findings{"empty-shard|warning|parameter 'w' dim 0 has size 0 but is split over 2 devices "
                                      "(tp=2): some devices hold nothing"});
}

TEST(ShapesTest, ATiedParameterDeclaredAlikeIsCheckedOnce) {
  Plan plan({{"tp", 4}});
  const ParamId tied = plan.Param(std::vector<int64_t>{6, 2});
  plan.Declare(tied, "embed", "weight", {{"tp", "S(0)"}});
  plan.Declare(tied, "lm_head", "weight", {{"tp", "S(0)"}});
  // A conflicting declaration (an error of the plan checks) is checked too.
  plan.Declare(tied, "other", "weight", {{"tp", "S(1)"}});
  const std::vector<Diagnostic> found = plan.Check();
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].parameter, "embed.weight");
  EXPECT_EQ(found[1].parameter, "other.weight");
  EXPECT_EQ(found[1].code, "empty-shard");
}

TEST(ShapesTest, FusedPartsMustEachSplitEvenly) {
  // packed_colwise: gate and up side by side; 12 rows over tp=4 would split
  // evenly, but each half of 6 rows would not.
  Plan plan({{"tp", 4}});
  ParamDeclaration& uneven = plan.Declare(plan.Param(std::vector<int64_t>{12, 8}), "mlp", "gate_up.weight",
                                          {{"tp", "S(-2)"}});
  uneven.fused_parts = 2;
  uneven.fused_dim = -2;
  ParamDeclaration& even = plan.Declare(plan.Param(std::vector<int64_t>{16}), "mlp", "gate_up.bias", {{"tp", "S(-1)"}});
  even.fused_parts = 2;
  even.fused_dim = -1;
  // 6 rows over 4 devices leave none empty, but the halves of 3 do not
  // split: uneven (planner-v1: "must divide by 2 x the axis size, else
  // uneven-shard"), not empty.
  ParamDeclaration& small = plan.Declare(plan.Param(std::vector<int64_t>{6}), "mlp", "small.bias", {{"tp", "S(0)"}});
  small.fused_parts = 2;
  small.fused_dim = 0;
  // 2 rows over 4 devices: some hold nothing.
  ParamDeclaration& empty = plan.Declare(plan.Param(std::vector<int64_t>{2}), "mlp", "tiny.bias", {{"tp", "S(0)"}});
  empty.fused_parts = 2;
  empty.fused_dim = 0;
  EXPECT_EQ(plan.Findings(),
            (Findings{"uneven-shard|warning|parameter 'mlp.gate_up.weight' dim 0 has size 12 (2 fused parts) and "
                      "each part is split over 4 devices (tp=4): 12 is not a multiple of 2 x 4 = 8; shard counts "
                      "below 4 that divide it evenly: 2, 3",
                      "uneven-shard|warning|parameter 'mlp.small.bias' dim 0 has size 6 (2 fused parts) and each part "
                      "is split over 4 devices (tp=4): 6 is not a multiple of 2 x 4 = 8; shard counts below 4 that "
                      "divide it evenly: 3",
                      "empty-shard|warning|parameter 'mlp.tiny.bias' dim 0 has size 2 (2 fused parts) but each part "
                      "is split over 4 devices (tp=4): some devices hold nothing"}));
}

TEST(ShapesTest, FusedPartsOnAnUnshardedDimChangeNothing) {
  Plan plan({{"tp", 4}});
  ParamDeclaration& d = plan.Declare(plan.Param(std::vector<int64_t>{12, 8}), "", "w", {{"tp", "S(1)"}});
  d.fused_parts = 2;
  d.fused_dim = 0;
  EXPECT_EQ(plan.Findings(), Findings{});
}

TEST(ShapesTest, HugeAxesDoNotStallTheDivisorSearch) {
  Plan plan({{"a", int64_t{1} << 40}, {"b", int64_t{1} << 40}});
  plan.Declare(plan.Param(std::vector<int64_t>{(int64_t{1} << 42) + 2}), "", "w", {{"a", "S(0)"}});
  plan.Declare(plan.Param(std::vector<int64_t>{int64_t{1} << 62}), "", "v", {{"a", "S(0)"}, {"b", "S(0)"}});
  const std::vector<Diagnostic> found = plan.Check();
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].code, "uneven-shard");
  EXPECT_EQ(found[1].message,
            "parameter 'v' dim 0 has size 4611686018427387904 but is split over 2^64 or more devices "
            "(a=1099511627776 x b=1099511627776): some devices hold nothing");
}

// The fix-it of a diagnostic: "help|op path value; ..." or "" without one.
std::string FixItOf(const Diagnostic& d) {
  if (!d.fix_it) return "";
  std::string out = d.fix_it->help;
  for (const FixOperation& op : d.fix_it->fix) absl::StrAppend(&out, "|", op.op, " ", op.path, " ", *op.value);
  return out;
}

TEST(ShapesTest, AMeshOfTheSameDevicesThatSplitsEveryDimEvenlyIsTheFix) {
  // tp=16 over 8 KV heads: with the same 32 devices, tp=8 (and dp=4) leaves
  // no device empty, and the query heads still split evenly.
  Plan plan({{"dp", 2}, {"tp", 16}});
  plan.Declare(plan.Param(std::vector<int64_t>{1024, 4096}, {128, 1}), "layers.0.self_attn.k_proj", "weight",
               {{"tp", "S(0)"}});
  plan.Declare(plan.Param(std::vector<int64_t>{4096, 4096}, {128, 1}), "layers.0.self_attn.q_proj", "weight",
               {{"tp", "S(0)"}});
  plan.Declare(plan.Param(std::vector<int64_t>{24}), "layers.0", "bias", {{"dp", "S(0)"}});
  const std::vector<Diagnostic> found = plan.Check();
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].code, "empty-shard");
  EXPECT_EQ(FixItOf(found[0]),
            "with the same 32 devices, the mesh dp=4, tp=8 splits every sharded dim evenly"
            "|replace /mesh/dp 4|replace /mesh/tp 8");
}

TEST(ShapesTest, TheNearestEvenMeshChangesTheFewestAxes) {
  // 12 rows over tp=8 (dp=2, pp=1): tp=4 alone cannot keep 16 devices;
  // every even mesh changes two axes, and pp=2 would add a parallelism the
  // plan does not use: dp=4, tp=4.
  Plan plan({{"dp", 2}, {"pp", 1}, {"tp", 8}});
  plan.Declare(plan.Param(std::vector<int64_t>{12}), "", "w", {{"tp", "S(0)"}});
  const std::vector<Diagnostic> found = plan.Check();
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(FixItOf(found[0]),
            "with the same 16 devices, the mesh dp=4, pp=1, tp=4 splits every sharded dim evenly"
            "|replace /mesh/dp 4|replace /mesh/tp 4");
}

TEST(ShapesTest, NoEvenMeshNoFix) {
  // One axis: no other mesh of 4 devices. And 7 rows split by no size > 1.
  Plan one({{"tp", 4}});
  one.Declare(one.Param(std::vector<int64_t>{6}), "", "w", {{"tp", "S(0)"}});
  ASSERT_EQ(one.Check().size(), 1u);
  EXPECT_EQ(FixItOf(one.Check()[0]), "");
  Plan prime({{"dp", 2}, {"tp", 4}});
  prime.Declare(prime.Param(std::vector<int64_t>{7}), "", "w", {{"tp", "S(0)"}});
  ASSERT_EQ(prime.Check().size(), 1u);
  EXPECT_EQ(FixItOf(prime.Check()[0]), "");
}

// 6 rows over a0=4 on 8 axes of 4 (65,536 devices, 6,435 factorizations
// keeping every axis above 1): a0=2 and one axis doubled, the last in
// lexicographic order of the sizes. On 8 axes of 16 (2^32 devices) there
// are more than 100,000 factorizations: no search, no fix.
TEST(ShapesTest, TheMeshSearchFindsTheNearestAmongManyAndGivesUpOnTooMany) {
  std::vector<std::pair<std::string, int64_t>> four, sixteen;
  for (int j = 0; j < 8; ++j) {
    four.push_back({absl::StrCat("a", j), 4});
    sixteen.push_back({absl::StrCat("a", j), 16});
  }
  Plan near(four);
  near.Declare(near.Param(std::vector<int64_t>{6}), "", "w", {{"a0", "S(0)"}});
  ASSERT_EQ(near.Check().size(), 1u);
  EXPECT_EQ(FixItOf(near.Check()[0]),
            "with the same 65536 devices, the mesh a0=2, a1=4, a2=4, a3=4, a4=4, a5=4, a6=4, a7=8 splits every "
            "sharded dim evenly|replace /mesh/a0 2|replace /mesh/a7 8");
  Plan many(sixteen);
  many.Declare(many.Param(std::vector<int64_t>{6}), "", "w", {{"a0", "S(0)"}});
  ASSERT_EQ(many.Check().size(), 1u);
  EXPECT_EQ(FixItOf(many.Check()[0]), "");
}

TEST(ShapesTest, AnUnevenVocabularyIsPaddedToTheNextMultiple) {
  // GPT-2's 50257 tokens over tp=8: no mesh of 8 devices splits them (50257
  // = 29 x 1733), padding to 50264 does; the other finding gets the mesh.
  Plan plan({{"dp", 2}, {"tp", 8}});
  const ParamId wte = plan.Param(std::vector<int64_t>{50257, 64});
  Module& embedding = plan.doc.modules.emplace_back();
  embedding.type = plan.doc.names.Intern("Embedding");
  embedding.params.push_back({plan.doc.names.Intern("weight"), wte});
  plan.Declare(wte, "wte", "weight", {{"tp", "S(0)"}});
  plan.Declare(plan.Param(std::vector<int64_t>{4, 64}), "h.0", "w", {{"tp", "S(0)"}});
  const std::vector<Diagnostic> found = plan.Check();
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].code, "uneven-shard");
  EXPECT_EQ(FixItOf(found[0]), "pad the vocabulary (dim 0) to 50264, the next multiple of 8|replace "
                               "/parameters/p0/shape/0 50264");
  EXPECT_EQ(found[1].code, "empty-shard");
  EXPECT_EQ(FixItOf(found[1]),
            "with the same 16 devices, the mesh dp=4, tp=4 splits every sharded dim evenly"
            "|replace /mesh/dp 4|replace /mesh/tp 4");
  // Not an embedding: no padding, and no mesh splits 50257.
  Plan other({{"dp", 2}, {"tp", 8}});
  other.Declare(other.Param(std::vector<int64_t>{50257, 64}), "lm_head", "weight", {{"tp", "S(0)"}});
  EXPECT_EQ(FixItOf(other.Check()[0]), "");
}

}  // namespace
}  // namespace shardplan
