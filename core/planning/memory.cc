#include "core/planning/memory.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"

namespace shardplan {

PlanSharding::PlanSharding(const Document& doc, const DeviceGrid& grid) : grid_(grid) {
  for (size_t j = 0; j < doc.mesh.size(); ++j) axis_index_.emplace(doc.mesh[j].name, static_cast<uint32_t>(j));
}

std::optional<uint32_t> PlanSharding::AxisIndex(NameId axis) const {
  const auto it = axis_index_.find(axis);
  if (it == axis_index_.end()) return std::nullopt;
  return it->second;
}

void PlanSharding::Shards(const Parameter& param, const NamedPlacements* placements, Dims& out) const {
  out.clear();
  if (placements == nullptr || !param.shape) return;
  const int64_t rank = static_cast<int64_t>(param.shape->size());
  absl::InlinedVector<std::pair<uint32_t, uint32_t>, 4> sharding;  // (dim, mesh axis)
  for (const AxisPlacement& ap : *placements) {
    if (ap.placement.kind != Placement::Kind::kShard) continue;
    const std::optional<uint32_t> axis = AxisIndex(ap.axis);
    if (!axis || grid_.size[*axis] == 1) continue;
    const int64_t d = ap.placement.dim < 0 ? ap.placement.dim + rank : ap.placement.dim;
    if (d < 0 || d >= rank) continue;  // out of range: the shape checks report it
    sharding.push_back({static_cast<uint32_t>(d), *axis});
  }
  std::sort(sharding.begin(), sharding.end());
  for (size_t i = 0; i < sharding.size(); ++i) {
    const uint32_t d = sharding[i].first;
    if (out.empty() || out.back().first != d) {
      const uint64_t size = static_cast<uint64_t>((*param.shape)[d]);
      const uint64_t block = param.blocks.empty() ? 1 : static_cast<uint64_t>(param.blocks[d]);
      ShardedDim& dim = out.emplace_back(d, ShardedDim{}).second;
      dim.units = size / block;
      dim.block = block;
    }
    out.back().second.axes.push_back(sharding[i].second);
  }
}

uint64_t Factors(const Parameter& param, const PlanSharding::Dims& dims, absl::InlinedVector<ShardedDim, 2>& sharded) {
  uint64_t elements = 1;
  sharded.clear();
  size_t next = 0;
  for (size_t d = 0; d < param.shape->size(); ++d) {
    if (next < dims.size() && dims[next].first == d) {
      elements *= dims[next].second.block;
      sharded.push_back(dims[next++].second);
    } else {
      elements *= static_cast<uint64_t>((*param.shape)[d]);
    }
  }
  return elements;
}

MemoryReport Summarize(const DeviceClasses& classes, const std::vector<uint64_t>& per_class,
                       uint64_t unsharded_bytes) {
  MemoryReport report;
  const uint64_t devices = classes.grid().devices;
  report.devices = devices;
  report.unsharded_bytes = unsharded_bytes;
  // Classes are in the order of their first devices: the first class of the
  // largest sum holds the lowest device of that sum.
  uint64_t max = per_class[0], min = per_class[0];
  size_t max_class = 0;
  // At most 2^24 devices of less than 2^63 bytes each: the sum fits in 87
  // bits.
  unsigned __int128 sum = 0;
  for (size_t c = 0; c < per_class.size(); ++c) {
    if (per_class[c] > max) {
      max = per_class[c];
      max_class = c;
    }
    min = std::min(min, per_class[c]);
    sum += static_cast<unsigned __int128>(per_class[c]) * classes.Devices(c);
  }
  report.max_bytes = max;
  report.min_bytes = min;
  report.max_device = classes.FirstDevice(max_class);
  // The exact quotient, then the remainder's fraction: min <= quotient <=
  // max, and rounding to double keeps that order, so the mean never reads
  // below the min or above the max.
  const uint64_t quotient = static_cast<uint64_t>(sum / devices);
  const uint64_t remainder = static_cast<uint64_t>(sum % devices);
  report.mean_bytes = static_cast<double>(quotient) + static_cast<double>(remainder) / static_cast<double>(devices);
  if (devices <= kMaxListedDevices) report.per_device_bytes = classes.PerDevice(per_class);
  return report;
}

std::optional<MemoryReport> ComputeMemory(const Document& doc,
                                          const std::vector<const NamedPlacements*>& placement_of_param) {
  const std::optional<DeviceGrid> grid = DeviceGrid::Of(doc, kMaxMemoryDevices);
  if (!grid) return std::nullopt;
  const PlanSharding sharding(doc, *grid);
  DeviceSums sums(*grid);
  PlanSharding::Dims dims;
  absl::InlinedVector<ShardedDim, 2> sharded;
  uint64_t total = 0;
  for (size_t p = 0; p < doc.parameters.size(); ++p) {
    const Parameter& param = doc.parameters[p];
    if (!param.shape) continue;
    const std::optional<uint64_t> full = TensorBytes(*param.shape, param.dtype);
    // The parser and the builder refuse such documents.
    if (!full || *full > kMaxParameterBytes - total) return std::nullopt;
    total += *full;
    if (*full == 0) continue;  // an empty tensor holds nothing anywhere

    sharding.Shards(param, p < placement_of_param.size() ? placement_of_param[p] : nullptr, dims);
    // At most the parameter's bytes: a block is at most its (non-empty) dim.
    const uint64_t weight = DtypeBytes(param.dtype) * Factors(param, dims, sharded);
    sums.Add(sharded, weight);  // every device's sum is at most `total`
  }
  const DeviceClasses classes(*grid, {&sums});
  return Summarize(classes, sums.Evaluate(classes), total);
}

}  // namespace shardplan
