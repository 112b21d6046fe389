// Training memory per device (training-v1): hand-computed cases, DeepSpeed's
// ZeRO sizes, the section's parsing, then the grouped computation against
// the literal definition (every device, every parameter) on random
// documents with meshes of up to 131,072 devices.
#include "core/planning/training.h"

#include <algorithm>
#include <map>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/engine.h"
#include "core/model/training.h"
#include "core/result.h"
#include "gtest/gtest.h"

namespace shardplan {
namespace {

// A one-module document whose final plan places the module's parameters
// (checked, so the training memory is the plan's), with `training`.
struct Doc {
  std::vector<std::pair<std::string, int64_t>> mesh;
  struct Param {
    std::string module;  // "" is the root; else a child of the root
    std::vector<int64_t> shape;
    std::string dtype;
    std::vector<std::pair<std::string, std::string>> placements;  // axis, placement
  };
  std::vector<Param> params;
  std::string training;

  std::string Json() const {
    std::vector<std::string> axes, parameters, children, plan;
    for (const auto& [name, size] : mesh) axes.push_back(absl::StrCat("\"", name, "\":", size));
    std::vector<std::string> modules;
    std::vector<std::string> names;  // child modules, in order of first use
    for (const Param& p : params) {
      if (!p.module.empty() && std::find(names.begin(), names.end(), p.module) == names.end()) names.push_back(p.module);
    }
    auto module_params = [&](const std::string& module) {
      std::vector<std::string> out;
      for (size_t i = 0; i < params.size(); ++i) {
        if (params[i].module == module) out.push_back(absl::StrCat("\"w", i, "\":\"p", i, "\""));
      }
      return absl::StrJoin(out, ",");
    };
    auto module_plan = [&](const std::string& module) {
      std::vector<std::string> out;
      for (size_t i = 0; i < params.size(); ++i) {
        if (params[i].module != module || params[i].placements.empty()) continue;
        std::vector<std::string> on;
        for (const auto& [axis, placement] : params[i].placements) on.push_back(absl::StrCat("\"", axis, "\":\"", placement, "\""));
        out.push_back(absl::StrCat("\"w", i, "\":{", absl::StrJoin(on, ","), "}"));
      }
      return absl::StrJoin(out, ",");
    };
    for (size_t i = 0; i < params.size(); ++i) {
      parameters.push_back(absl::StrCat("\"p", i, "\":{\"shape\":[", absl::StrJoin(params[i].shape, ","),
                                        "],\"dtype\":\"", params[i].dtype, "\"}"));
    }
    for (const std::string& name : names) {
      children.push_back(absl::StrCat("\"", name, "\":\"", name, "\""));
      modules.push_back(absl::StrCat("\"", name, "\":{\"params\":{", module_params(name), "}}"));
      plan.push_back(absl::StrCat("\"", name, "\":{\"params\":{", module_plan(name), "}}"));
    }
    modules.push_back(absl::StrCat("\"root\":{\"children\":{", absl::StrJoin(children, ","), "},\"params\":{",
                                   module_params(""), "}}"));
    plan.push_back(absl::StrCat("\"\":{\"params\":{", module_plan(""), "}}"));
    return absl::StrCat("{\"schema\":\"shardplan.v1\",\"mesh\":{", absl::StrJoin(axes, ","), "},\"parameters\":{",
                        absl::StrJoin(parameters, ","), "},\"root\":\"root\",\"modules\":{", absl::StrJoin(modules, ","),
                        "},\"plan\":{\"modules\":{", absl::StrJoin(plan, ","), "}},\"training\":", training, "}");
  }
};

struct Checked {
  Result result;
  const TrainingReport* training = nullptr;
};

Checked CheckDoc(const std::string& json) {
  Checked c;
  absl::StatusOr<Result> r = Check(json, CheckOptions{});
  EXPECT_TRUE(r.ok());
  if (!r.ok()) return c;
  c.result = *std::move(r);
  if (std::optional<TrainingView> view = TrainingOf(c.result)) c.training = view->report;
  return c;
}

TEST(TrainingTest, AHandComputedDevice) {
  // a: [10, 6] bfloat16 sharded on dim 1 by tp=2: 10 x 3 elements; over
  // dp=4 its padded shard is ceil(10/4) = 3 rows of 3: 9. b: [7] float32
  // whole: 7 elements, shard ceil(7/4) = 2.
  Doc doc{{{"dp", 4}, {"tp", 2}},
          {{"", {10, 6}, "bfloat16", {{"tp", "S(1)"}}}, {"", {7}, "float32", {}}},
          R"({"zero": 3, "grad_dtype": "bfloat16", "master_dtype": "float32"})"};
  const Checked c = CheckDoc(doc.Json());
  ASSERT_NE(c.training, nullptr) << ResultToJson(c.result);
  const TrainingBreakdown& w = c.training->worst;
  EXPECT_EQ(w.params, 9u * 2 + 2 * 4);
  EXPECT_EQ(w.grads, 9u * 2 + 2 * 2);
  EXPECT_EQ(w.master, (9u + 2) * 4);
  EXPECT_EQ(w.optimizer, 2u * (9 + 2) * 4);
  // One unit (the root): (1 + prefetch 1) x (30 x 2 + 7 x 4) + (30 + 7) x 2.
  EXPECT_EQ(w.gathered, 2u * 88 + 74);
  EXPECT_EQ(w.activations, 0u);
  EXPECT_EQ(w.total, 26u + 22 + 44 + 88 + 250);
  EXPECT_EQ(w.coordinates, (std::vector<uint64_t>{0, 0}));
  EXPECT_EQ(c.training->per_device_total_bytes, std::vector<uint64_t>(8, w.total));
}

TEST(TrainingTest, DeepSpeedZeroSizesForMixedPrecisionAdam) {
  // The ZeRO paper's mixed-precision Adam: 2 + 2 + 12 bytes per parameter
  // at stage 0, 2 + 2 + 12/N at 1, 2 + (2 + 12)/N at 2, (2 + 2 + 12)/N at 3
  // over N = 8 data-parallel devices (here plus the gathered unit at 3).
  constexpr uint64_t kElements = 1024 * 64, kN = 8;
  for (int zero = 0; zero <= 3; ++zero) {
    SCOPED_TRACE(zero);
    Doc doc{{{"dp", 8}},
            {{"", {1024, 64}, "bfloat16", {}}},
            absl::StrCat(R"({"grad_dtype": "bfloat16", "master_dtype": "float32", "zero": )", zero, "}")};
    const Checked c = CheckDoc(doc.Json());
    ASSERT_NE(c.training, nullptr);
    const TrainingBreakdown& w = c.training->worst;
    const uint64_t states = w.params + w.grads + w.master + w.optimizer;
    const uint64_t expected[] = {16 * kElements, 4 * kElements + 12 * kElements / kN,
                                 2 * kElements + 14 * kElements / kN, 16 * kElements / kN};
    EXPECT_EQ(states, expected[zero]);
    EXPECT_EQ(w.gathered, zero == 3 ? 2 * 2 * kElements + 2 * kElements : 0);
  }
}

TEST(TrainingTest, AnAxisThatShardsTheParameterIsNotCountedAgain) {
  // Sharded by the plan on dp itself: W = 1, so zero 3 changes nothing.
  Doc doc{{{"dp", 4}}, {{"", {8, 8}, "float32", {{"dp", "S(0)"}}}}, R"({"zero": 3, "optimizer": "sgd"})"};
  const Checked c = CheckDoc(doc.Json());
  ASSERT_NE(c.training, nullptr);
  EXPECT_EQ(c.training->worst.params, 2u * 8 * 4);
  EXPECT_EQ(c.training->worst.grads, 2u * 8 * 4);
  EXPECT_EQ(c.training->worst.optimizer, 0u);
}

TEST(TrainingTest, FrozenAndUntrainedParametersKeepOnlyThemselves) {
  Doc doc{{{"dp", 2}},
          {{"a", {4}, "float32", {}}, {"b", {4}, "float32", {}}},
          R"({"frozen": ["a.w0"], "master_dtype": "float32"})"};
  Checked c = CheckDoc(doc.Json());
  ASSERT_NE(c.training, nullptr);
  EXPECT_EQ(c.training->worst.params, 32u);
  EXPECT_EQ(c.training->worst.grads, 16u);
  EXPECT_EQ(c.training->worst.master, 16u);
  EXPECT_EQ(c.training->worst.optimizer, 32u);
  doc.training = R"({"optimizer": "none", "master_dtype": "float32"})";
  c = CheckDoc(doc.Json());
  ASSERT_NE(c.training, nullptr);
  EXPECT_EQ(c.training->worst.total, 32u);
}

TEST(TrainingTest, ManyFsdpUnitsOnAHugeMeshCostUnitsAndDevicesNotTheirProduct) {
  // 2,000 FSDP units on 2^24 devices whose plan shards nothing: every device
  // holds the same. Evaluated device by device for each unit, this is
  // 2,000 x 2^24 steps (minutes); by device class, one class.
  Doc doc;
  doc.mesh = {{"dp", int64_t{1} << 22}, {"tp", 4}};
  uint64_t shards = 0;
  for (int i = 0; i < 2000; ++i) {
    doc.params.push_back({absl::StrCat("l", i), {64, 8 + i % 7}, "float32", {}});
    shards += 8 + i % 7;  // 64 rows over 2^22 dp ranks: one padded row each
  }
  doc.training = R"({"zero": 3, "shard_axes": ["dp"], "fsdp_units": ["*"]})";
  const Checked c = CheckDoc(doc.Json());
  ASSERT_NE(c.training, nullptr) << ResultToJson(c.result);
  const TrainingBreakdown& w = c.training->worst;
  EXPECT_EQ(w.params, 4 * shards);
  EXPECT_EQ(w.grads, 4 * shards);
  EXPECT_EQ(w.optimizer, 2 * 4 * shards);
  // The largest unit, [64, 14] float32, twice (prefetch 1) and its gradients.
  EXPECT_EQ(w.gathered, 3u * 64 * 14 * 4);
  EXPECT_EQ(w.device, 0u);
  EXPECT_EQ(c.training->min_total_bytes, w.total);
  EXPECT_EQ(c.training->max_total_bytes, w.total);
  EXPECT_EQ(c.training->mean_total_bytes, static_cast<double>(w.total));
  EXPECT_FALSE(c.training->per_device_total_bytes.has_value());
}

TEST(TrainingTest, ByteSizes) {
  EXPECT_EQ(ParseByteSize("80GiB"), uint64_t{80} << 30);
  EXPECT_EQ(ParseByteSize("141GB"), uint64_t{141'000'000'000});
  EXPECT_EQ(ParseByteSize("1.5KiB"), 1536u);
  EXPECT_EQ(ParseByteSize("0.5B"), std::nullopt);  // below one byte
  EXPECT_EQ(ParseByteSize("1.0001B"), 1u);         // rounded down
  EXPECT_EQ(ParseByteSize("8388608TiB"), std::nullopt);  // 2^63
  EXPECT_EQ(ParseByteSize("8388607.999TiB"), uint64_t{9223372035755264180});
  for (const char* bad : {"", "GiB", "80", "80 GiB", "80gib", "-1GiB", "1e3B", ".5GB", "5.GB", "1GiBs"}) {
    EXPECT_EQ(ParseByteSize(bad), std::nullopt) << bad;
  }
}

// The invalid-document message and pointer of `training` in a valid
// document.
std::pair<std::string, std::string> Invalid(const std::string& training) {
  Doc doc{{{"dp", 2}, {"tp", 2}}, {{"", {4}, "float32", {}}}, training};
  absl::StatusOr<Result> r = Check(doc.Json(), CheckOptions{});
  if (!r.ok() || r->diagnostics.empty() || r->diagnostics[0].code != "invalid-document") return {"valid", ""};
  return {r->diagnostics[0].message, r->diagnostics[0].pointer.value_or("")};
}

TEST(TrainingTest, InvalidSectionsNameTheValueAtFault) {
  EXPECT_EQ(Invalid(R"({"zero": 4})").second, "/training/zero");
  const std::pair<std::string, std::string> twice = Invalid(R"({"shard_axes": ["dp", "dp"]})");
  EXPECT_EQ(twice.first, "shard axis 'dp' is listed twice (at /training/shard_axes/1)");
  EXPECT_EQ(twice.second, "/training/shard_axes/1");
  EXPECT_EQ(Invalid(R"({"shard_axes": ["pp"]})").first,
            "shard axis 'pp' is not a mesh axis (the mesh has dp, tp) (at /training/shard_axes/0)");
  EXPECT_EQ(Invalid(R"({"optimizer": "lion"})").first,
            "unknown optimizer 'lion' (expected adamw, adam, momentum, sgd or none) (at /training/optimizer)");
  EXPECT_EQ(Invalid(R"({"headroom": 0})").second, "/training/headroom");
  EXPECT_EQ(Invalid(R"({"headroom": 1.5})").second, "/training/headroom");
  EXPECT_EQ(Invalid(R"({"device_memory": "80 GiB"})").second, "/training/device_memory");
  EXPECT_EQ(Invalid(R"({"activations": {"seq_len": 8}})").first,
            "'activations' needs the model description 'model' in the training section (at /training/activations)");
  EXPECT_EQ(Invalid(R"({"prefetch": 65})").second, "/training/prefetch");
  EXPECT_EQ(Invalid(R"({"grad_dtype": "float64"})").second, "/training/grad_dtype");
  EXPECT_EQ(Invalid(R"({"model": {"hidden_size": 8}})").first,
            "missing required key 'num_attention_heads' (at /training/model)");
  const std::string model =
      R"("model": {"hidden_size": 8, "num_attention_heads": 2, "intermediate_size": 8, "num_hidden_layers": 2, "vocab_size": 4)";
  EXPECT_EQ(Invalid(absl::StrCat("{", model, R"(, "num_experts": 2, "num_experts_per_tok": 3}})")).second,
            "/training/model/num_experts_per_tok");
  EXPECT_EQ(Invalid(absl::StrCat("{", model, R"(}, "activations": {"seq_len": 8, "tensor_axis": "ep"}})")).second,
            "/training/activations/tensor_axis");
  EXPECT_EQ(Invalid(absl::StrCat("{", model, R"(}, "activations": {"seq_len": 8, "recompute": "all"}})")).second,
            "/training/activations/recompute");
  EXPECT_EQ(Invalid(absl::StrCat("{", model, R"(}, "activations": {"seq_len": 2147483647, "micro_batch": 2147483647}})"))
                .first,
            "the training memory of this document could exceed 2^63 - 1 bytes on a device (at /training)");
  EXPECT_EQ(Invalid(absl::StrCat("{", model, R"(}, "activations": {"seq_len": 8}, "device_memory": "1.5TiB"})")).first,
            "valid");
}

// The literal definition: every device, every parameter (one FSDP unit
// per child module matched by "*", the root's parameters in the root unit).
struct Setting {
  int zero;
  std::vector<size_t> shard_axes;  // mesh indexes
  uint64_t grad = 0;               // 0: the parameter's dtype
  uint64_t master = 0;
  uint64_t states = 2, optimizer = 4;
  bool units = false;
};

uint64_t DtypeSize(const std::string& dtype) { return dtype == "float32" ? 4 : dtype == "bfloat16" ? 2 : 1; }

std::vector<uint64_t> BruteForce(const Doc& doc, const Setting& s) {
  uint64_t devices = 1;
  for (const auto& [name, size] : doc.mesh) devices *= static_cast<uint64_t>(size);
  std::vector<uint64_t> totals(devices, 0);
  for (uint64_t device = 0; device < devices; ++device) {
    std::vector<uint64_t> coordinate(doc.mesh.size());
    uint64_t rest = device;
    for (size_t j = doc.mesh.size(); j-- > 0;) {
      coordinate[j] = rest % static_cast<uint64_t>(doc.mesh[j].second);
      rest /= static_cast<uint64_t>(doc.mesh[j].second);
    }
    std::map<std::string, uint64_t> unit_params, unit_grads;
    uint64_t total = 0;
    for (const Doc::Param& p : doc.params) {
      std::vector<uint64_t> local(p.shape.begin(), p.shape.end());
      for (size_t j = 0; j < doc.mesh.size(); ++j) {  // mesh order
        for (const auto& [axis, placement] : p.placements) {
          if (axis != doc.mesh[j].first || placement[0] != 'S') continue;
          const size_t d = static_cast<size_t>(std::stoi(placement.substr(2)));
          const uint64_t k = static_cast<uint64_t>(doc.mesh[j].second);
          const uint64_t q = (local[d] + k - 1) / k;
          const uint64_t c = coordinate[j];
          local[d] = q == 0 || c * q >= local[d] ? 0 : std::min(q, local[d] - c * q);
        }
      }
      uint64_t n = 1;
      for (uint64_t l : local) n *= l;
      uint64_t ways = 1;
      for (size_t axis : s.shard_axes) {
        bool replicated = true;
        for (const auto& [name, placement] : p.placements) {
          if (name == doc.mesh[axis].first) replicated = placement == "R";
        }
        if (replicated) ways *= static_cast<uint64_t>(doc.mesh[axis].second);
      }
      const uint64_t z = ways > 1 && local[0] > 0 ? (local[0] + ways - 1) / ways * (n / local[0]) : n;
      const uint64_t size = DtypeSize(p.dtype), grad = s.grad != 0 ? s.grad : size;
      total += (s.zero == 3 ? z : n) * size + (s.zero >= 2 ? z : n) * grad +
               (s.zero >= 1 ? z : n) * (s.master + s.states * s.optimizer);
      const std::string unit = s.units ? p.module : "";
      unit_params[unit] += n * size;
      unit_grads[unit] += n * grad;
    }
    if (s.zero == 3) {
      uint64_t max_params = 0, max_grads = 0;
      for (const auto& [unit, bytes] : unit_params) max_params = std::max(max_params, bytes);
      for (const auto& [unit, bytes] : unit_grads) max_grads = std::max(max_grads, bytes);
      total += 2 * max_params + max_grads;
    }
    totals[device] = total;
  }
  return totals;
}

TEST(TrainingTest, EqualsTheDefinitionOnEveryDeviceOfRandomDocuments) {
  std::mt19937_64 rng(20261206);
  auto pick = [&](uint64_t n) { return static_cast<uint64_t>(rng() % n); };
  const std::vector<std::string> names = {"dp", "ep", "tp", "cp"};
  int compared = 0, large = 0;
  for (int round = 0; round < 120; ++round) {
    Doc doc;
    // Every tenth round: 2^17 devices (512 x 256, not listed one by one).
    const size_t axes = round % 10 == 0 ? 2 : 1 + pick(3);
    uint64_t devices = 1;
    for (size_t j = 0; j < axes; ++j) {
      const int64_t size = round % 10 == 0 ? (j == 0 ? 512 : 256) : 1 + static_cast<int64_t>(pick(7));
      doc.mesh.push_back({names[j], size});
      devices *= static_cast<uint64_t>(size);
    }
    const size_t params = 1 + pick(round % 2 == 0 ? 6 : 16);
    for (size_t i = 0; i < params; ++i) {
      Doc::Param p;
      // Up to 3 child modules, or up to 12 in odd rounds (FSDP units).
      p.module = pick(3) == 0 ? "" : absl::StrCat("l", pick(round % 2 == 0 ? 3 : 12));
      const size_t rank = 1 + pick(3);
      for (size_t d = 0; d < rank; ++d) {
        p.shape.push_back(static_cast<int64_t>(pick(3) == 0 ? 1 + pick(round % 10 == 0 ? 2000 : 40) : 1 + pick(9)));
      }
      p.dtype = pick(2) == 0 ? "float32" : "bfloat16";
      for (const auto& [axis, size] : doc.mesh) {
        const uint64_t r = pick(4);
        if (r == 0) p.placements.push_back({axis, absl::StrCat("S(", pick(rank), ")")});
        if (r == 1) p.placements.push_back({axis, "R"});
      }
      doc.params.push_back(p);
    }
    Setting s;
    s.zero = static_cast<int>(pick(4));
    std::vector<std::string> shard_names;
    for (size_t j = 0; j < axes; ++j) {
      if (pick(2) == 0) {
        s.shard_axes.push_back(j);
        shard_names.push_back(absl::StrCat("\"", names[j], "\""));
      }
    }
    s.grad = pick(2) == 0 ? 0 : 2;
    s.master = pick(2) == 0 ? 0 : 4;
    s.units = pick(2) == 0;
    doc.training = absl::StrCat("{\"zero\":", s.zero, ",\"shard_axes\":[", absl::StrJoin(shard_names, ","), "]",
                                s.grad ? ",\"grad_dtype\":\"bfloat16\"" : "", s.master ? ",\"master_dtype\":\"float32\"" : "",
                                s.units ? ",\"fsdp_units\":[\"*\"]" : "", "}");
    const Checked c = CheckDoc(doc.Json());
    ASSERT_NE(c.training, nullptr) << doc.Json() << "\n" << ResultToJson(c.result);
    const std::vector<uint64_t> want = BruteForce(doc, s);
    if (c.training->per_device_total_bytes) {
      ASSERT_EQ(*c.training->per_device_total_bytes, want) << doc.Json();
    } else {
      EXPECT_GT(devices, 65536u);
      ++large;
    }
    const uint64_t max = *std::max_element(want.begin(), want.end());
    EXPECT_EQ(c.training->max_total_bytes, max) << doc.Json();
    EXPECT_EQ(c.training->min_total_bytes, *std::min_element(want.begin(), want.end())) << doc.Json();
    EXPECT_EQ(c.training->worst.total, max);
    EXPECT_EQ(c.training->worst.device, static_cast<uint64_t>(std::find(want.begin(), want.end(), max) - want.begin()));
    ++compared;
  }
  EXPECT_EQ(compared, 120);
  EXPECT_GT(large, 0);
}

}  // namespace
}  // namespace shardplan
