#include "core/planning/memory.h"

#include <algorithm>
#include <cstddef>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"

namespace shardplan {
namespace {

// The device grid: mesh axes in mesh order, row-major.
struct Grid {
  std::vector<uint64_t> size;
  std::vector<uint64_t> stride;
  uint64_t devices = 1;
};

// A group of parameters, as a flat key: for each sharded dim in increasing
// dim order, its unit count, the number of axes sharding it, then those axes
// (mesh indexes, mesh order). Only axes of size > 1 appear: chunking over one
// device changes nothing. The value is the sum of the group's weights: bytes
// per unit-product, i.e. dtype size x unsharded dims x blocks of sharded dims.
using GroupKey = absl::InlinedVector<uint64_t, 4>;

// One term of a sparse multi-dimensional difference: `value` at device
// offset `offset` (the coordinates of the other axes being 0).
struct Term {
  uint64_t offset;
  uint64_t value;
};

// A box of devices (a range of coordinates on each axis of one dim's axis
// list) that all hold `units` units of that dim.
struct Box {
  uint64_t units;
  absl::InlinedVector<std::pair<uint64_t, uint64_t>, 4> range;  // [lo, hi)
};

// Computes the sparse difference (along each of `axes`) of the function
// "units of a dim of n units held by the device", which depends only on the
// coordinates of `axes`. Arithmetic is modulo 2^64: exact as long as the
// final sums fit, which the caller guarantees.
void DimDifference(uint64_t n, const uint64_t* axes, size_t m, const Grid& grid, std::vector<Box>& boxes,
                   std::vector<Box>& next, std::vector<Term>& out) {
  out.clear();
  // torch.chunk on each axis in turn: coordinates [0, full) get q units, the
  // coordinate `full` gets the remainder r (if any), the rest nothing.
  if (m == 1) {
    // The common case, in closed form: q at 0, r - q at full, -r at full + 1.
    const uint64_t k = grid.size[axes[0]], stride = grid.stride[axes[0]];
    const uint64_t q = n / k + (n % k != 0), full = n / q, r = n - full * q;
    out.push_back({0, q});
    if (full < k) out.push_back({full * stride, r - q});
    if (r > 0 && full + 1 < k) out.push_back({(full + 1) * stride, 0 - r});
    return;
  }
  boxes.assign(1, Box{n, {}});
  for (size_t t = 0; t < m; ++t) {
    const uint64_t k = grid.size[axes[t]];
    next.clear();
    for (const Box& box : boxes) {
      const uint64_t q = box.units / k + (box.units % k != 0);
      const uint64_t full = box.units / q;  // in [1, k]
      const uint64_t r = box.units - full * q;
      next.push_back(box);
      next.back().units = q;
      next.back().range.push_back({0, full});
      if (r > 0) {
        next.push_back(box);
        next.back().units = r;
        next.back().range.push_back({full, full + 1});
      }
    }
    std::swap(boxes, next);
  }

  // A box's difference has a +-units term at each corner whose coordinates
  // are lo or hi on each axis, except hi == k (past the grid's end).
  uint64_t cells = 1, corners = 0;
  for (size_t t = 0; t < m; ++t) cells *= grid.size[axes[t]];
  for (const Box& box : boxes) {
    uint64_t c = 1;
    for (size_t t = 0; t < m; ++t) c <<= (box.range[t].second < grid.size[axes[t]]) ? 1 : 0;
    corners += c;
  }

  if (corners <= cells) {
    for (const Box& box : boxes) {
      absl::InlinedVector<size_t, 4> upper;  // axes (t) whose hi is in the grid
      uint64_t base = 0;
      for (size_t t = 0; t < m; ++t) {
        base += box.range[t].first * grid.stride[axes[t]];
        if (box.range[t].second < grid.size[axes[t]]) upper.push_back(t);
      }
      for (uint64_t mask = 0; mask < (uint64_t{1} << upper.size()); ++mask) {
        uint64_t offset = base;
        bool negative = false;
        for (size_t i = 0; i < upper.size(); ++i) {
          if ((mask >> i) & 1) {
            const size_t t = upper[i];
            offset += (box.range[t].second - box.range[t].first) * grid.stride[axes[t]];
            negative = !negative;
          }
        }
        out.push_back({offset, negative ? 0 - box.units : box.units});
      }
    }
    std::sort(out.begin(), out.end(), [](const Term& a, const Term& b) { return a.offset < b.offset; });
    size_t kept = 0;
    for (size_t i = 0; i < out.size();) {
      Term sum = out[i];
      for (++i; i < out.size() && out[i].offset == sum.offset; ++i) sum.value += out[i].value;
      if (sum.value != 0) out[kept++] = sum;
    }
    out.resize(kept);
    return;
  }

  // Many small axes (e.g. ten axes of size 2): painting the boxes into a
  // dense grid over these axes and differencing it is cheaper.
  std::vector<uint64_t> local_stride(m);
  for (size_t t = m; t-- > 0;) local_stride[t] = (t + 1 == m) ? 1 : local_stride[t + 1] * grid.size[axes[t + 1]];
  std::vector<uint64_t> dense(cells, 0);
  absl::InlinedVector<uint64_t, 4> coord(m);
  for (const Box& box : boxes) {
    for (size_t t = 0; t < m; ++t) coord[t] = box.range[t].first;
    while (true) {
      uint64_t index = 0;
      for (size_t t = 0; t < m; ++t) index += coord[t] * local_stride[t];
      dense[index] = box.units;
      size_t t = m;
      while (t > 0 && ++coord[t - 1] == box.range[t - 1].second) {
        coord[t - 1] = box.range[t - 1].first;
        --t;
      }
      if (t == 0) break;
    }
  }
  for (size_t t = 0; t < m; ++t) {
    const uint64_t k = grid.size[axes[t]], s = local_stride[t];
    for (uint64_t base = 0; base < cells; base += k * s) {
      for (uint64_t c = k - 1; c >= 1; --c) {
        for (uint64_t i = 0; i < s; ++i) dense[base + c * s + i] -= dense[base + (c - 1) * s + i];
      }
    }
  }
  std::fill(coord.begin(), coord.end(), 0);
  for (uint64_t index = 0; index < cells; ++index) {
    if (dense[index] != 0) {
      uint64_t offset = 0;
      for (size_t t = 0; t < m; ++t) offset += coord[t] * grid.stride[axes[t]];
      out.push_back({offset, dense[index]});
    }
    for (size_t t = m; t > 0; --t) {
      if (++coord[t - 1] < grid.size[axes[t - 1]]) break;
      coord[t - 1] = 0;
    }
  }
}

// `groups` and `total` of a document whose total is at most
// kMaxParameterBytes: every device's bytes are at most the total, so the
// per-device sums modulo 2^64 are exact.
MemoryReport Evaluate(const Grid& grid, const absl::flat_hash_map<GroupKey, uint64_t>& groups, uint64_t total) {
  // diff holds the multi-dimensional difference of the per-device bytes;
  // prefix sums along every axis turn it into the bytes.
  std::vector<uint64_t> diff(grid.devices, 0);
  std::vector<Box> boxes, next;
  std::vector<Term> dim_terms, product, grown;
  for (const auto& [key, weight] : groups) {
    product.assign(1, Term{0, 1});
    for (size_t i = 0; i < key.size();) {
      const uint64_t n = key[i], m = key[i + 1];
      DimDifference(n, key.data() + i + 2, m, grid, boxes, next, dim_terms);
      i += 2 + m;
      // Dims are sharded by disjoint axes: the difference of a product of
      // functions of disjoint coordinates is the product of differences.
      grown.clear();
      for (const Term& a : product) {
        for (const Term& b : dim_terms) grown.push_back({a.offset + b.offset, a.value * b.value});
      }
      std::swap(product, grown);
    }
    for (const Term& term : product) diff[term.offset] += weight * term.value;
  }
  for (size_t j = 0; j < grid.size.size(); ++j) {
    const uint64_t k = grid.size[j], s = grid.stride[j];
    if (k == 1) continue;
    for (uint64_t base = 0; base < grid.devices; base += k * s) {
      for (uint64_t c = 1; c < k; ++c) {
        uint64_t* row = diff.data() + base + c * s;
        const uint64_t* prev = row - s;
        for (uint64_t i = 0; i < s; ++i) row[i] += prev[i];
      }
    }
  }

  MemoryReport report;
  report.devices = grid.devices;
  report.unsharded_bytes = total;
  uint64_t max = diff[0], min = diff[0], max_device = 0;
  // At most 2^24 devices of less than 2^63 bytes each: the sum fits in 87
  // bits.
  unsigned __int128 sum = 0;
  for (uint64_t d = 0; d < grid.devices; ++d) {
    if (diff[d] > max) {
      max = diff[d];
      max_device = d;
    }
    min = std::min(min, diff[d]);
    sum += diff[d];
  }
  report.max_bytes = max;
  report.min_bytes = min;
  report.max_device = max_device;
  // The exact quotient, then the remainder's fraction: min <= quotient <=
  // max, and rounding to double keeps that order, so the mean never reads
  // below the min or above the max.
  const uint64_t quotient = static_cast<uint64_t>(sum / grid.devices);
  const uint64_t remainder = static_cast<uint64_t>(sum % grid.devices);
  report.mean_bytes =
      static_cast<double>(quotient) + static_cast<double>(remainder) / static_cast<double>(grid.devices);
  if (grid.devices <= kMaxListedDevices) report.per_device_bytes = std::move(diff);
  return report;
}

}  // namespace

std::optional<MemoryReport> ComputeMemory(const Document& doc,
                                          const std::vector<const NamedPlacements*>& placement_of_param) {
  Grid grid;
  grid.size.reserve(doc.mesh.size());
  absl::flat_hash_map<NameId, uint32_t> axis_index;
  for (const MeshAxis& axis : doc.mesh) {
    if (axis.size < 1 || static_cast<uint64_t>(axis.size) > kMaxMemoryDevices / grid.devices) return std::nullopt;
    grid.devices *= static_cast<uint64_t>(axis.size);
    axis_index.emplace(axis.name, static_cast<uint32_t>(grid.size.size()));
    grid.size.push_back(static_cast<uint64_t>(axis.size));
  }
  grid.stride.resize(grid.size.size());
  for (size_t j = grid.size.size(); j-- > 0;) {
    grid.stride[j] = (j + 1 == grid.size.size()) ? 1 : grid.stride[j + 1] * grid.size[j + 1];
  }

  uint64_t total = 0;
  absl::flat_hash_map<GroupKey, uint64_t> groups;
  absl::InlinedVector<std::pair<uint32_t, uint32_t>, 4> sharding;  // (dim, mesh axis)
  GroupKey key;
  for (size_t p = 0; p < doc.parameters.size(); ++p) {
    const Parameter& param = doc.parameters[p];
    if (!param.shape) continue;
    const SmallVector<int64_t>& shape = *param.shape;
    const int64_t rank = static_cast<int64_t>(shape.size());
    const std::optional<uint64_t> full = TensorBytes(shape, param.dtype);
    // The parser and the builder refuse such documents.
    if (!full || *full > kMaxParameterBytes - total) return std::nullopt;
    total += *full;
    if (*full == 0) continue;  // an empty tensor holds nothing anywhere

    sharding.clear();
    const NamedPlacements* placements = p < placement_of_param.size() ? placement_of_param[p] : nullptr;
    if (placements != nullptr) {
      for (const AxisPlacement& ap : *placements) {
        if (ap.placement.kind != Placement::Kind::kShard) continue;
        const auto it = axis_index.find(ap.axis);
        if (it == axis_index.end() || grid.size[it->second] == 1) continue;
        const int64_t d = ap.placement.dim < 0 ? ap.placement.dim + rank : ap.placement.dim;
        if (d < 0 || d >= rank) continue;  // out of range: the shape checks report it
        sharding.push_back({static_cast<uint32_t>(d), it->second});
      }
    }
    std::sort(sharding.begin(), sharding.end());

    // At most the parameter's bytes: a block is at most its (non-empty) dim.
    uint64_t weight = DtypeBytes(param.dtype);
    key.clear();
    size_t next = 0;  // index into `sharding`
    for (int64_t d = 0; d < rank; ++d) {
      const uint64_t size = static_cast<uint64_t>(shape[d]);
      if (next == sharding.size() || sharding[next].first != d) {
        weight *= size;
        continue;
      }
      const uint64_t block = param.blocks.empty() ? 1 : static_cast<uint64_t>(param.blocks[d]);
      weight *= block;
      key.push_back(size / block);
      const size_t count_at = key.size();
      key.push_back(0);
      for (; next < sharding.size() && sharding[next].first == d; ++next) key.push_back(sharding[next].second);
      key[count_at] = key.size() - count_at - 1;
    }
    groups[key] += weight;  // a group's weights total at most `total`
  }
  return Evaluate(grid, groups, total);
}

}  // namespace shardplan
