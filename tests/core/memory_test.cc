// Parameter memory per device: hand-computed cases, then the grouped
// difference-array computation against the literal definition (every
// device, every parameter) on random meshes and parameters.
#include "core/planning/memory.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/engine.h"
#include "core/outcome.h"
#include "gtest/gtest.h"

namespace shardplan {
namespace {

Placement P(std::string_view text) { return *ParsePlacement(text); }

class Model {
 public:
  explicit Model(const std::vector<std::pair<std::string, int64_t>>& mesh) {
    for (const auto& [name, size] : mesh) {
      const NameId id = doc.names.Intern(name);
      doc.mesh.push_back({id, size});
      doc.mesh_names.Insert(id);
    }
  }

  // Adds a parameter identity; `placements` as {axis, placement} pairs.
  ParamId Add(std::optional<std::vector<int64_t>> shape, NamedPlacements placements = {},
              Dtype dtype = Dtype::kFloat32, std::vector<int64_t> blocks = {}) {
    const ParamId id = static_cast<ParamId>(doc.parameters.size());
    Parameter& param = doc.parameters.emplace_back();
    param.id = doc.names.Intern(absl::StrCat("p", id));
    if (shape) param.shape.emplace(shape->begin(), shape->end());
    param.blocks.assign(blocks.begin(), blocks.end());
    param.dtype = dtype;
    placements_.push_back(std::move(placements));
    return id;
  }
  AxisPlacement On(std::string_view axis, std::string_view placement) {
    return {doc.names.Intern(axis), P(placement)};
  }

  std::optional<MemoryReport> Memory() const {
    std::vector<const NamedPlacements*> of(placements_.size());
    for (size_t p = 0; p < placements_.size(); ++p) of[p] = placements_[p].empty() ? nullptr : &placements_[p];
    return ComputeMemory(doc, of);
  }
  const std::vector<NamedPlacements>& placements() const { return placements_; }

  Document doc;

 private:
  std::vector<NamedPlacements> placements_;
};

std::vector<uint64_t> PerDevice(const Model& model) {
  std::optional<MemoryReport> r = model.Memory();
  if (!r || !r->per_device_bytes) return {};
  return *r->per_device_bytes;
}

TEST(MemoryTest, DtypeSizesFollowTheSpec) {
  EXPECT_EQ(DtypeBytes(Dtype::kFloat32), 4u);
  EXPECT_EQ(DtypeBytes(Dtype::kInt32), 4u);
  EXPECT_EQ(DtypeBytes(Dtype::kFloat16), 2u);
  EXPECT_EQ(DtypeBytes(Dtype::kBfloat16), 2u);
  EXPECT_EQ(DtypeBytes(Dtype::kFloat8E4m3fn), 1u);
  EXPECT_EQ(DtypeBytes(Dtype::kFloat8E5m2), 1u);
  EXPECT_EQ(DtypeBytes(Dtype::kInt8), 1u);
  EXPECT_EQ(DtypeBytes(Dtype::kBool), 1u);
  EXPECT_EQ(DtypeBytes(Dtype::kInt64), 8u);
}

TEST(MemoryTest, UnevenChunkFollowsTorchChunk) {
  Model m({{"tp", 4}});
  m.Add(std::vector<int64_t>{10}, {m.On("tp", "S(0)")});
  std::optional<MemoryReport> r = m.Memory();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r->per_device_bytes, (std::vector<uint64_t>{12, 12, 12, 4}));
  EXPECT_EQ(r->devices, 4u);
  EXPECT_EQ(r->unsharded_bytes, 40u);
  EXPECT_EQ(r->max_bytes, 12u);
  EXPECT_EQ(r->min_bytes, 4u);
  EXPECT_EQ(r->max_device, 0u);
  EXPECT_DOUBLE_EQ(r->mean_bytes, 10.0);
}

TEST(MemoryTest, ChunkCanLeaveSeveralTrailingDevicesEmpty) {
  // ceil(5/4) = 2: 2, 2, 1, 0 (torch.chunk, not an even spread).
  Model m({{"tp", 4}});
  m.Add(std::vector<int64_t>{5}, {m.On("tp", "S(-1)")}, Dtype::kInt8);
  EXPECT_EQ(PerDevice(m), (std::vector<uint64_t>{2, 2, 1, 0}));
}

TEST(MemoryTest, ShardingCountsBlocksNotElements) {
  // 8 KV heads of 128 rows over tp=16: half the devices hold a head, the
  // other half nothing.
  Model m({{"tp", 16}});
  m.Add(std::vector<int64_t>{1024, 64}, {m.On("tp", "S(0)")}, Dtype::kBfloat16, {128, 1});
  std::vector<uint64_t> expected(16, 0);
  for (int d = 0; d < 8; ++d) expected[d] = 128 * 64 * 2;
  std::optional<MemoryReport> r = m.Memory();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r->per_device_bytes, expected);
  EXPECT_EQ(r->min_bytes, 0u);
  EXPECT_EQ(r->max_device, 0u);
}

TEST(MemoryTest, TwoAxesOnOneDimChunkSuccessivelyInMeshOrder) {
  // 7 units over a=2: 4 | 3; then over b=3: 4 -> 2, 2, 0 and 3 -> 1, 1, 1.
  // Chunking 7 over 6 at once would give 2, 2, 2, 1, 0, 0.
  Model m({{"a", 2}, {"b", 3}});
  m.Add(std::vector<int64_t>{7}, {m.On("b", "S(0)"), m.On("a", "S(0)")}, Dtype::kInt8);
  EXPECT_EQ(PerDevice(m), (std::vector<uint64_t>{2, 2, 0, 1, 1, 1}));
}

TEST(MemoryTest, DevicesAreRowMajorOverTheMesh) {
  // dp=2 x tp=3: device 1 is (dp 0, tp 1), device 3 is (dp 1, tp 0).
  Model m({{"dp", 2}, {"tp", 3}});
  m.Add(std::vector<int64_t>{2, 4}, {m.On("dp", "S(0)")}, Dtype::kInt8);  // 4, 4 by dp
  m.Add(std::vector<int64_t>{5}, {m.On("tp", "S(0)")}, Dtype::kInt8);     // 2, 2, 1 by tp
  EXPECT_EQ(PerDevice(m), (std::vector<uint64_t>{6, 6, 5, 6, 6, 5}));
}

TEST(MemoryTest, ReplicatedPartialOutOfRangeAndForeignAxesHoldEverything) {
  Model m({{"tp", 4}});
  m.Add(std::vector<int64_t>{8});                                     // undeclared
  m.Add(std::vector<int64_t>{8}, {m.On("tp", "R")});                  // R
  m.Add(std::vector<int64_t>{8}, {m.On("tp", "P(max)")});             // P counts whole
  m.Add(std::vector<int64_t>{8}, {m.On("tp", "S(1)")});               // out of range
  m.Add(std::vector<int64_t>{8}, {m.On("storage", "S(0)")});          // not a mesh axis
  m.Add(std::vector<int64_t>{}, {m.On("tp", "S(0)")}, Dtype::kInt64);  // scalar
  EXPECT_EQ(PerDevice(m), std::vector<uint64_t>(4, 5 * 32 + 8));
}

TEST(MemoryTest, UnknownShapesCountNothing) {
  Model m({{"tp", 2}});
  m.Add(std::nullopt, {m.On("tp", "S(0)")});
  m.Add(std::vector<int64_t>{3}, {}, Dtype::kInt64);
  std::optional<MemoryReport> r = m.Memory();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->unsharded_bytes, 24u);
  EXPECT_EQ(*r->per_device_bytes, (std::vector<uint64_t>{24, 24}));
}

TEST(MemoryTest, EmptyTensorsHoldNothing) {
  Model m({{"tp", 2}});
  m.Add(std::vector<int64_t>{0, 16}, {m.On("tp", "S(0)")});
  m.Add(std::vector<int64_t>{16, 0});
  std::optional<MemoryReport> r = m.Memory();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->unsharded_bytes, 0u);
  EXPECT_EQ(*r->per_device_bytes, (std::vector<uint64_t>{0, 0}));
}

TEST(MemoryTest, TiedParametersCountOnce) {
  // Two modules name the same identity; the input is per identity, so the
  // tied weight is counted once, sharded as its declaration says.
  Model m({{"tp", 2}});
  const ParamId tied = m.Add(std::vector<int64_t>{6, 2}, {m.On("tp", "S(0)")}, Dtype::kInt8);
  for (std::string_view name : {"embed", "head"}) {
    Module& module = m.doc.modules.emplace_back();
    module.id = m.doc.names.Intern(name);
    module.params.push_back({m.doc.names.Intern("weight"), tied});
  }
  std::optional<MemoryReport> r = m.Memory();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->unsharded_bytes, 12u);
  EXPECT_EQ(*r->per_device_bytes, (std::vector<uint64_t>{6, 6}));
}

TEST(MemoryTest, DeviceZeroHoldsTheMost) {
  // torch.chunk gives coordinate 0 the full ceil(n/k) chunk on every axis,
  // so device 0 holds at least as much as any other of every parameter:
  // max_device (the lowest index among the largest) is 0, whatever the plan.
  Model m({{"a", 2}, {"b", 3}});
  m.Add(std::vector<int64_t>{7}, {m.On("a", "S(0)"), m.On("b", "S(0)")}, Dtype::kInt8);  // 2 2 0 1 1 1
  m.Add(std::vector<int64_t>{3}, {m.On("b", "S(0)")}, Dtype::kInt8);                     // 1 1 1 1 1 1
  m.Add(std::vector<int64_t>{2, 1}, {m.On("a", "S(0)")}, Dtype::kInt8);                  // 1 1 1 1 1 1
  std::optional<MemoryReport> r = m.Memory();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(*r->per_device_bytes, (std::vector<uint64_t>{4, 4, 2, 3, 3, 3}));
  EXPECT_EQ(r->max_bytes, 4u);
  EXPECT_EQ(r->max_device, 0u);
  EXPECT_EQ(r->min_bytes, 2u);
  EXPECT_DOUBLE_EQ(r->mean_bytes, 19.0 / 6);
}

TEST(MemoryTest, PerDeviceBytesAreListedUpTo65536Devices) {
  Model small({{"dp", 256}, {"tp", 256}});
  small.Add(std::vector<int64_t>{256}, {small.On("tp", "S(0)")});
  std::optional<MemoryReport> r = small.Memory();
  ASSERT_TRUE(r.has_value());
  ASSERT_TRUE(r->per_device_bytes.has_value());
  EXPECT_EQ(r->per_device_bytes->size(), 65536u);

  Model big({{"dp", 512}, {"tp", 256}});
  big.Add(std::vector<int64_t>{300}, {big.On("tp", "S(0)")});  // 2 units to 150 devices
  std::optional<MemoryReport> b = big.Memory();
  ASSERT_TRUE(b.has_value());
  EXPECT_FALSE(b->per_device_bytes.has_value());
  EXPECT_EQ(b->devices, 131072u);
  EXPECT_EQ(b->max_bytes, 8u);
  EXPECT_EQ(b->min_bytes, 0u);
  EXPECT_EQ(b->max_device, 0u);
  EXPECT_DOUBLE_EQ(b->mean_bytes, 1200.0 / 256);
}

TEST(MemoryTest, MeshesOverTwoToThe24DevicesGetNoReport) {
  Model at_limit({{"dp", 4096}, {"tp", 4096}});
  at_limit.Add(std::vector<int64_t>{4096}, {at_limit.On("tp", "S(0)")}, Dtype::kInt8);
  std::optional<MemoryReport> r = at_limit.Memory();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->max_bytes, 1u);
  EXPECT_EQ(r->min_bytes, 1u);

  Model over({{"dp", 4096}, {"tp", 4097}});
  EXPECT_FALSE(over.Memory().has_value());
  Model huge({{"a", int64_t{1} << 40}, {"b", int64_t{1} << 40}});
  EXPECT_FALSE(huge.Memory().has_value());
}

TEST(MemoryTest, DocumentsBeyond2To63BytesGetNoReport) {
  // The parser and the builder refuse them; a document made by hand gets
  // no figures rather than wrong ones. 2^62 x 64 float32 = 2^70 bytes,
  // even though each of 1024 x 64 devices would hold 2^54.
  Model m({{"a", 1024}, {"b", 64}});
  m.Add(std::vector<int64_t>{int64_t{1} << 62, 64}, {m.On("a", "S(0)"), m.On("b", "S(1)")});
  EXPECT_FALSE(m.Memory().has_value());
  // Two parameters of 2^62 bytes.
  Model n({{"tp", 2}});
  n.Add(std::vector<int64_t>{int64_t{1} << 62}, {n.On("tp", "S(0)")}, Dtype::kInt8);
  ASSERT_TRUE(n.Memory().has_value());
  n.Add(std::vector<int64_t>{int64_t{1} << 62}, {}, Dtype::kInt8);
  EXPECT_FALSE(n.Memory().has_value());
}

// ---------------------------------------------------------------------------
// Sizes beyond the arithmetic: refused when the document is read, never
// reported as saturated or wrapped figures.

// A document of one module "m" (under the root "r") on `mesh`, holding
// `params` (JSON specs) as p0, p1, ...; a template places p0, m's weight,
// with `style` on tp.
std::string SizedDoc(std::string_view mesh, const std::vector<std::string>& params,
                     std::string_view style = "grouped_gemm") {
  std::string parameters, slots;
  for (size_t i = 0; i < params.size(); ++i) {
    absl::StrAppend(&parameters, i == 0 ? "" : ", ", "\"p", i, "\": ", params[i]);
    absl::StrAppend(&slots, i == 0 ? "\"weight\"" : absl::StrCat(", \"extra", i, "\""), ": \"p", i, "\"");
  }
  return absl::StrCat(R"J({"schema": "shardplan.v1", "mesh": )J", mesh, R"J(, "parameters": {)J", parameters,
                      R"J(}, "root": "r", "modules": {"r": {"children": {"m": "m"}}, )J",
                      R"J("m": {"type": "Linear", "forward": ["input"], "params": {)J", slots,
                      R"J(}}}, "templates": [{"axis": "tp", "rules": {"m": ")J", style, R"J("}}]})J");
}

Result PlanOf(const std::string& json) {
  absl::StatusOr<Result> r = Plan(json, {});
  EXPECT_TRUE(r.ok()) << r.status();
  return *std::move(r);
}

void ExpectRefused(const Result& r, std::string_view message, std::string_view pointer) {
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.diagnostics.size(), 1u) << ResultToJson(r);
  EXPECT_EQ(r.diagnostics[0].code, "invalid-document");
  EXPECT_EQ(r.diagnostics[0].message, message);
  EXPECT_EQ(r.diagnostics[0].pointer, std::string(pointer));
  EXPECT_EQ(ResultToJson(r).find("\"memory\""), std::string::npos);
}

TEST(MemoryTest, AParameterOfMoreThan2To63BytesIsRefusedWhenRead) {
  // [2^40, 2^40] float32 is 2^82 bytes: no byte count of the plan could hold
  // it (it used to print a mean larger than the saturated max).
  const Result r = PlanOf(SizedDoc(R"J({"tp": 2})J", {R"J({"shape": [1099511627776, 1099511627776]})J"}));
  ExpectRefused(r,
                "the size of parameter 'p0' exceeds 2^63 - 1 bytes (its elements times 4 bytes of float32) "
                "(at /parameters/p0/shape)",
                "/parameters/p0/shape");
  // The dtype counts, wherever it is spelled: 2^62 elements fit as int8,
  // not as bfloat16.
  EXPECT_TRUE(PlanOf(SizedDoc(R"J({"tp": 2})J", {R"J({"shape": [4611686018427387904], "dtype": "int8"})J"})).ok);
  ExpectRefused(PlanOf(SizedDoc(R"J({"tp": 2})J", {R"J({"dtype": "bfloat16", "shape": [4611686018427387904]})J"})),
                "the size of parameter 'p0' exceeds 2^63 - 1 bytes (its elements times 2 bytes of bfloat16) "
                "(at /parameters/p0/shape)",
                "/parameters/p0/shape");
  // An empty dim makes an empty tensor, whatever the other dims.
  EXPECT_TRUE(
      PlanOf(SizedDoc(R"J({"tp": 2})J", {R"J({"shape": [4611686018427387904, 4611686018427387904, 0]})J"})).ok);
}

TEST(MemoryTest, ParametersTotallingMoreThan2To63BytesAreRefusedWhenRead) {
  // 2^63 - 1 bytes exactly: accepted, and every figure is exact.
  const std::string half = R"J({"shape": [4611686018427387904], "dtype": "int8"})J";        // 2^62
  const std::string rest = R"J({"shape": [4611686018427387903], "dtype": "int8"})J";        // 2^62 - 1
  const Result full = PlanOf(SizedDoc(R"J({"tp": 2})J", {half, rest}));
  ASSERT_TRUE(full.ok) << ResultToJson(full);
  const MemoryReport* m = full.outcome->planned->memory ? &*full.outcome->planned->memory : nullptr;
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->unsharded_bytes, uint64_t{INT64_MAX});
  // p0 is split in two, p1 replicated.
  EXPECT_EQ(m->max_bytes, (uint64_t{1} << 61) + (uint64_t{1} << 62) - 1);
  EXPECT_EQ(m->min_bytes, (uint64_t{1} << 61) + (uint64_t{1} << 62) - 1);

  // Many parameters, each of which fits: refused as a whole at /parameters.
  std::vector<std::string> many(40, R"J({"shape": [1024, 1024, 1024, 1024, 1024, 1024]})J");  // 2^62 bytes each
  const std::string message = "the parameters' sizes total more than 2^63 - 1 bytes (at /parameters)";
  ExpectRefused(PlanOf(SizedDoc(R"J({"tp": 2})J", many)), message, "/parameters");
  ExpectRefused(PlanOf(SizedDoc(R"J({"tp": 2})J", {half, half})), message, "/parameters");
  // Check refuses it too: the document is invalid, not only its plan.
  absl::StatusOr<Result> checked = Check(SizedDoc(R"J({"tp": 2})J", {half, half}), {});
  ASSERT_TRUE(checked.ok());
  EXPECT_EQ(checked->diagnostics.size(), 1u);
  EXPECT_EQ(checked->diagnostics[0].message, message);
}

TEST(MemoryTest, TheMeanOverManyDevicesIsExactWhereTheirSumExceeds64Bits) {
  // 65,536 devices each hold at least 2^62 bytes (p1 replicated): the sum
  // over devices is about 2^78. p0 (2^61 + 1 bytes) is chunked over tp=256,
  // so devices differ.
  const Result r = PlanOf(SizedDoc(R"J({"dp": 256, "tp": 256})J",
                                   {R"J({"shape": [2305843009213693953], "dtype": "int8"})J",
                                    R"J({"shape": [4611686018427387904], "dtype": "int8"})J"},
                                   "grouped_gemm"));
  ASSERT_TRUE(r.ok) << ResultToJson(r);
  ASSERT_TRUE(r.outcome->planned->memory.has_value());
  const MemoryReport& m = *r.outcome->planned->memory;
  EXPECT_EQ(m.devices, 65536u);
  const uint64_t chunk = ((uint64_t{1} << 61) + 1 + 255) / 256;  // ceil
  EXPECT_EQ(m.max_bytes, (uint64_t{1} << 62) + chunk);
  EXPECT_EQ(m.min_bytes, (uint64_t{1} << 62) + ((uint64_t{1} << 61) + 1 - 255 * chunk));
  EXPECT_GE(m.mean_bytes, static_cast<double>(m.min_bytes));
  EXPECT_LE(m.mean_bytes, static_cast<double>(m.max_bytes));
  // Every tp row holds p0 once: the mean is 2^62 + (2^61 + 1) / 256.
  EXPECT_DOUBLE_EQ(m.mean_bytes, std::ldexp(1.0, 62) + std::ldexp(1.0, 53));
  // Every device holding the largest size there is: the mean is that size.
  const Result same = PlanOf(SizedDoc(R"J({"dp": 256, "tp": 256})J",
                                      {R"J({"shape": [9223372036854775807], "dtype": "int8"})J"}, "replicate"));
  ASSERT_TRUE(same.ok) << ResultToJson(same);
  const MemoryReport& s = *same.outcome->planned->memory;
  EXPECT_EQ(s.max_bytes, uint64_t{INT64_MAX});
  EXPECT_EQ(s.min_bytes, uint64_t{INT64_MAX});
  EXPECT_EQ(s.mean_bytes, static_cast<double>(uint64_t{INT64_MAX}));
}

// ---------------------------------------------------------------------------
// The literal definition, device by device.

std::vector<uint64_t> BruteForce(const Model& model) {
  const Document& doc = model.doc;
  uint64_t devices = 1;
  for (const MeshAxis& a : doc.mesh) devices *= a.size;
  std::vector<uint64_t> bytes(devices, 0);
  std::vector<int64_t> coord(doc.mesh.size());
  for (uint64_t device = 0; device < devices; ++device) {
    uint64_t rest = device;
    for (size_t j = doc.mesh.size(); j-- > 0;) {
      coord[j] = rest % doc.mesh[j].size;
      rest /= doc.mesh[j].size;
    }
    for (size_t p = 0; p < doc.parameters.size(); ++p) {
      const Parameter& param = doc.parameters[p];
      if (!param.shape) continue;
      const int64_t rank = param.shape->size();
      std::vector<int64_t> units(rank);
      for (int64_t d = 0; d < rank; ++d) units[d] = (*param.shape)[d] / (param.blocks.empty() ? 1 : param.blocks[d]);
      for (size_t j = 0; j < doc.mesh.size(); ++j) {
        for (const AxisPlacement& ap : model.placements()[p]) {
          if (ap.axis != doc.mesh[j].name || ap.placement.kind != Placement::Kind::kShard) continue;
          const int64_t d = ap.placement.dim < 0 ? ap.placement.dim + rank : ap.placement.dim;
          if (d < 0 || d >= rank) continue;
          const int64_t n = units[d], k = doc.mesh[j].size;
          const int64_t q = (n + k - 1) / k;
          units[d] = std::max<int64_t>(0, std::min(q, n - coord[j] * q));
        }
      }
      uint64_t b = DtypeBytes(param.dtype);
      for (int64_t d = 0; d < rank; ++d) b *= units[d] * (param.blocks.empty() ? 1 : param.blocks[d]);
      bytes[device] += b;
    }
  }
  return bytes;
}

// Adds `params` random parameters over the mesh of `m`: small unit counts
// (often below the axis sizes, sometimes 0), blocks, every dtype size, and
// per axis S(d) with d sometimes out of range, R, P, P(max) or nothing, plus
// now and then a non-mesh axis and an unknown shape.
void AddRandomParams(Model& m, std::mt19937& rng, int params) {
  const Dtype dtypes[] = {Dtype::kFloat32, Dtype::kBfloat16, Dtype::kInt8, Dtype::kInt64};
  std::uniform_int_distribution<int> percent(0, 99);
  for (int p = 0; p < params; ++p) {
    if (percent(rng) < 3) {
      m.Add(std::nullopt);
      continue;
    }
    const int rank = std::uniform_int_distribution<int>(0, 3)(rng);
    std::vector<int64_t> shape(rank), blocks;
    const bool blocked = percent(rng) < 30;
    for (int d = 0; d < rank; ++d) {
      const int64_t units = percent(rng) < 3 ? 0 : std::uniform_int_distribution<int64_t>(1, 40)(rng);
      const int64_t block = blocked ? std::uniform_int_distribution<int64_t>(1, 4)(rng) : 1;
      shape[d] = units * block;
      if (blocked) blocks.push_back(block);
    }
    NamedPlacements placements;
    for (const MeshAxis& axis : m.doc.mesh) {
      const int roll = percent(rng);
      std::string text;
      if (roll < 45) {
        text = absl::StrCat("S(", std::uniform_int_distribution<int>(-rank - 1, rank)(rng), ")");
      } else if (roll < 60) {
        text = "R";
      } else if (roll < 70) {
        text = percent(rng) < 50 ? "P" : "P(max)";
      } else {
        continue;
      }
      placements.push_back({axis.name, P(text)});
    }
    if (percent(rng) < 5) placements.push_back(m.On("storage", "S(0)"));
    std::shuffle(placements.begin(), placements.end(), rng);
    m.Add(shape, placements, dtypes[percent(rng) % 4], blocks);
  }
}

// A random mesh of 1 to `max_axes` axes of sizes up to `max_size`, at most
// `max_devices` devices, with `params` random parameters.
Model RandomModel(std::mt19937& rng, int max_axes, int64_t max_devices, int64_t max_size, int params) {
  const int axes = std::uniform_int_distribution<int>(1, max_axes)(rng);
  std::vector<std::pair<std::string, int64_t>> mesh;
  int64_t devices = 1;
  for (int j = 0; j < axes; ++j) {
    const int64_t limit = std::min<int64_t>(max_size, max_devices / devices);
    const int64_t size = std::uniform_int_distribution<int64_t>(1, std::max<int64_t>(1, limit))(rng);
    devices *= size;
    mesh.push_back({absl::StrCat("ax", j), size});
  }
  Model m(mesh);
  AddRandomParams(m, rng, params);
  return m;
}

void ExpectMatchesBruteForce(const Model& m) {
  const std::vector<uint64_t> expected = BruteForce(m);
  std::optional<MemoryReport> r = m.Memory();
  ASSERT_TRUE(r.has_value());
  ASSERT_TRUE(r->per_device_bytes.has_value());
  ASSERT_EQ(*r->per_device_bytes, expected);
  uint64_t max = 0, min = std::numeric_limits<uint64_t>::max(), max_device = 0;
  long double sum = 0;
  for (size_t d = 0; d < expected.size(); ++d) {
    if (expected[d] > max) {
      max = expected[d];
      max_device = d;
    }
    min = std::min(min, expected[d]);
    sum += expected[d];
  }
  EXPECT_EQ(r->max_bytes, max);
  EXPECT_EQ(r->min_bytes, min);
  EXPECT_EQ(r->max_device, max_device);
  EXPECT_DOUBLE_EQ(r->mean_bytes, static_cast<double>(sum / expected.size()));
  uint64_t unsharded = 0;
  for (const Parameter& p : m.doc.parameters) {
    if (!p.shape) continue;
    uint64_t b = DtypeBytes(p.dtype);
    for (int64_t size : *p.shape) b *= size;
    unsharded += b;
  }
  EXPECT_EQ(r->unsharded_bytes, unsharded);
}

TEST(MemoryTest, MatchesTheDefinitionOnRandomSmallMeshes) {
  std::mt19937 rng(1);
  for (int trial = 0; trial < 300; ++trial) {
    SCOPED_TRACE(trial);
    ExpectMatchesBruteForce(RandomModel(rng, 4, 64, 8, 30));
  }
}

// Many axes of sizes 1 to 3: the per-device list is filled segment by
// segment through every axis of size > 1 (and past the axes of size 1).
TEST(MemoryTest, MatchesTheDefinitionOnRandomMeshesOfManySmallAxes) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 20; ++trial) {
    SCOPED_TRACE(trial);
    ExpectMatchesBruteForce(RandomModel(rng, 16, 8192, 3, 12));
  }
}

TEST(MemoryTest, MatchesTheDefinitionOnRandomLargeMeshes) {
  std::mt19937 rng(2);
  for (int trial = 0; trial < 12; ++trial) {
    SCOPED_TRACE(trial);
    ExpectMatchesBruteForce(RandomModel(rng, 4, 32768, 64, 12));
  }
  // Meshes of exactly 32,768 devices.
  for (const auto& mesh : std::vector<std::vector<std::pair<std::string, int64_t>>>{
           {{"tp", 32768}}, {{"dp", 8}, {"ep", 16}, {"tp", 16}, {"cp", 16}}, {{"a", 32}, {"b", 1}, {"c", 1024}}}) {
    Model m(mesh);
    AddRandomParams(m, rng, 12);
    ExpectMatchesBruteForce(m);
  }
}

TEST(MemoryTest, MatchesTheDefinitionWithManySmallAxesOnOneDim) {
  // Many axes of size 2 or 3 sharding the same dims: the chunking splits into
  // many boxes, where painting a dense table beats corner updates.
  std::mt19937 rng(4);
  for (int trial = 0; trial < 40; ++trial) {
    SCOPED_TRACE(trial);
    const int axes = std::uniform_int_distribution<int>(5, 10)(rng);
    std::vector<std::pair<std::string, int64_t>> mesh;
    int64_t devices = 1;
    for (int j = 0; j < axes && devices <= 8192; ++j) {
      const int64_t size = std::uniform_int_distribution<int64_t>(1, 3)(rng);
      devices *= size;
      mesh.push_back({absl::StrCat("ax", j), size});
    }
    Model m(mesh);
    for (int p = 0; p < 8; ++p) {
      const int rank = std::uniform_int_distribution<int>(1, 2)(rng);
      std::vector<int64_t> shape(rank);
      for (int64_t& s : shape) s = std::uniform_int_distribution<int64_t>(1, 300)(rng);
      NamedPlacements placements;
      for (size_t j = 0; j < mesh.size(); ++j) {
        if (std::uniform_int_distribution<int>(0, 3)(rng) == 0) continue;
        placements.push_back(m.On(mesh[j].first, absl::StrCat("S(", std::uniform_int_distribution<int>(0, rank - 1)(rng), ")")));
      }
      m.Add(shape, placements, Dtype::kInt8);
    }
    ExpectMatchesBruteForce(m);
  }
}

TEST(MemoryTest, AMillionParametersOn32768Devices) {
  // A 1,000-layer model with 1,000 parameters a layer, every one of its own
  // shape (no grouping helps), sharded over tp and ep of a 32,768-device mesh.
  Model m({{"dp", 8}, {"ep", 64}, {"tp", 64}});
  const AxisPlacement tp0 = m.On("tp", "S(0)"), tp1 = m.On("tp", "S(-1)"), ep0 = m.On("ep", "S(0)");
  std::mt19937 rng(5);
  std::uniform_int_distribution<int64_t> size(1, 1 << 14);
  for (int p = 0; p < 1000000; ++p) {
    switch (p % 4) {
      case 0:
        m.Add(std::vector<int64_t>{size(rng), size(rng)}, {tp0}, Dtype::kBfloat16);
        break;
      case 1:
        m.Add(std::vector<int64_t>{size(rng), size(rng)}, {tp1}, Dtype::kBfloat16);
        break;
      case 2:
        m.Add(std::vector<int64_t>{size(rng) % 256 + 1, size(rng), size(rng) % 512 + 1}, {ep0, tp1},
              Dtype::kBfloat16);
        break;
      default:
        m.Add(std::vector<int64_t>{size(rng)}, {}, Dtype::kFloat32);
    }
  }
  // Grouped, this takes a third of a second in an optimized build
  // (docs/planning.md section 6); devices x parameters would take minutes.
  // Speed is measured, not asserted: this checks the figures' consistency.
  std::optional<MemoryReport> r = m.Memory();
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->per_device_bytes->size(), 32768u);
  EXPECT_GE(r->max_bytes, r->min_bytes);
  EXPECT_EQ(r->max_bytes, *std::max_element(r->per_device_bytes->begin(), r->per_device_bytes->end()));
  EXPECT_EQ(r->max_bytes, (*r->per_device_bytes)[0]);  // torch.chunk's largest chunks are at coordinate 0
}

}  // namespace
}  // namespace shardplan
