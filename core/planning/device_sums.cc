#include "core/planning/device_sums.h"

#include <algorithm>
#include <cstddef>
#include <utility>

namespace shardplan {
namespace {

using Term = DifferenceTerm;

// A box of devices (a range of coordinates on each axis of one dim's axis
// list) that all hold `units` units of that dim (after chunking; then
// replaced by their factor).
struct Box {
  uint64_t units;
  absl::InlinedVector<std::pair<uint64_t, uint64_t>, 4> range;  // [lo, hi)
};

// Computes the sparse difference (along each of `axes`) of the function
// "factor of the units of a dim of n units held by the device" (ShardedDim),
// which depends only on the coordinates of `axes`. Arithmetic is modulo 2^64: exact as long as the
// final sums fit, which the caller guarantees.
void DimDifference(uint64_t n, const uint64_t* axes, size_t m, uint64_t block, uint64_t divisor, const DeviceGrid& grid,
                   std::vector<Box>& boxes, std::vector<Box>& next, std::vector<Term>& out) {
  out.clear();
  // The factor of a device holding `units` units.
  const auto factor = [&](uint64_t units) { return divisor > 1 ? (units * block + divisor - 1) / divisor : units; };
  // torch.chunk on each axis in turn: coordinates [0, full) get q units, the
  // coordinate `full` gets the remainder r (if any), the rest nothing.
  if (m == 1) {
    // The common case, in closed form: the factors of q units at 0, of r
    // units at full, of none (0) after.
    const uint64_t k = grid.size[axes[0]], stride = grid.stride[axes[0]];
    const uint64_t q = n / k + (n % k != 0), full = n / q, r = n - full * q;
    const uint64_t fq = factor(q), fr = factor(r);
    out.push_back({0, fq});
    if (full < k) out.push_back({full * stride, fr - fq});
    if (r > 0 && full + 1 < k) out.push_back({(full + 1) * stride, 0 - fr});
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
  for (Box& box : boxes) box.units = factor(box.units);

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

}  // namespace

std::optional<DeviceGrid> DeviceGrid::Of(const Document& doc, uint64_t max_devices) {
  DeviceGrid grid;
  grid.size.reserve(doc.mesh.size());
  for (const MeshAxis& axis : doc.mesh) {
    if (axis.size < 1 || static_cast<uint64_t>(axis.size) > max_devices / grid.devices) return std::nullopt;
    grid.devices *= static_cast<uint64_t>(axis.size);
    grid.size.push_back(static_cast<uint64_t>(axis.size));
  }
  grid.stride.resize(grid.size.size());
  for (size_t j = grid.size.size(); j-- > 0;) {
    grid.stride[j] = (j + 1 == grid.size.size()) ? 1 : grid.stride[j + 1] * grid.size[j + 1];
  }
  return grid;
}

void DeviceSums::Add(absl::Span<const ShardedDim> dims, uint64_t weight) {
  Key key;
  for (const ShardedDim& dim : dims) {
    key.insert(key.end(), {dim.units, dim.block, dim.divisor, dim.axes.size()});
    key.insert(key.end(), dim.axes.begin(), dim.axes.end());
  }
  groups_[key] += weight;
  difference_.reset();
}

const std::vector<DifferenceTerm>& DeviceSums::Difference() const {
  if (difference_) return *difference_;
  // Terms at the same device are added up: at most min(devices, terms).
  absl::flat_hash_map<uint64_t, uint64_t> at;
  std::vector<Box> boxes, next;
  std::vector<Term> dim_terms, product, grown;
  for (const auto& [key, weight] : groups_) {
    product.assign(1, Term{0, 1});
    for (size_t i = 0; i < key.size();) {
      const uint64_t n = key[i], block = key[i + 1], divisor = key[i + 2], m = key[i + 3];
      DimDifference(n, key.data() + i + 4, m, block, divisor, grid_, boxes, next, dim_terms);
      i += 4 + m;
      // Dims are sharded by disjoint axes: the difference of a product of
      // functions of disjoint coordinates is the product of differences.
      grown.clear();
      for (const Term& a : product) {
        for (const Term& b : dim_terms) grown.push_back({a.offset + b.offset, a.value * b.value});
      }
      std::swap(product, grown);
    }
    for (const Term& term : product) at[term.offset] += weight * term.value;
  }
  std::vector<Term>& out = difference_.emplace();
  for (const auto& [offset, value] : at) {
    if (value != 0) out.push_back({offset, value});
  }
  return out;
}

std::vector<uint64_t> DeviceSums::Evaluate(const DeviceClasses& classes) const {
  // The difference over the classes, then prefix sums along every axis.
  std::vector<uint64_t> sums(classes.size(), 0);
  for (const Term& term : Difference()) sums[classes.Of(term.offset)] += term.value;
  for (size_t j = 0; j < classes.starts_.size(); ++j) {
    const uint64_t k = classes.starts_[j].size(), s = classes.stride_[j];
    if (k == 1) continue;
    for (uint64_t base = 0; base < sums.size(); base += k * s) {
      for (uint64_t c = 1; c < k; ++c) {
        uint64_t* row = sums.data() + base + c * s;
        const uint64_t* prev = row - s;
        for (uint64_t i = 0; i < s; ++i) row[i] += prev[i];
      }
    }
  }
  return sums;
}

// Two devices whose coordinates lie in the same segment on every axis see
// the same terms at or below their own coordinates, so every sum is the
// same on both.
DeviceClasses::DeviceClasses(const DeviceGrid& grid, absl::Span<const DeviceSums* const> sums)
    : grid_(grid), starts_(grid.size.size(), std::vector<uint64_t>{0}), stride_(grid.size.size(), 1) {
  for (const DeviceSums* s : sums) {
    for (const Term& term : s->Difference()) {
      for (size_t j = 0; j < starts_.size(); ++j) {
        const uint64_t c = grid.Coordinate(term.offset, j);
        if (c != 0) starts_[j].push_back(c);
      }
    }
  }
  for (size_t j = starts_.size(); j-- > 0;) {
    std::vector<uint64_t>& starts = starts_[j];
    std::sort(starts.begin(), starts.end());
    starts.erase(std::unique(starts.begin(), starts.end()), starts.end());
    stride_[j] = size_;
    size_ *= starts.size();
  }
}

uint64_t DeviceClasses::Devices(size_t c) const {
  uint64_t devices = 1;
  for (size_t j = 0; j < starts_.size(); ++j) {
    const size_t segment = c / stride_[j] % starts_[j].size();
    const uint64_t end = segment + 1 < starts_[j].size() ? starts_[j][segment + 1] : grid_.size[j];
    devices *= end - starts_[j][segment];
  }
  return devices;
}

uint64_t DeviceClasses::FirstDevice(size_t c) const {
  uint64_t device = 0;
  for (size_t j = 0; j < starts_.size(); ++j) device += starts_[j][c / stride_[j] % starts_[j].size()] * grid_.stride[j];
  return device;
}

size_t DeviceClasses::Of(uint64_t device) const {
  size_t c = 0;
  for (size_t j = 0; j < starts_.size(); ++j) {
    const std::vector<uint64_t>& starts = starts_[j];
    const size_t segment = std::upper_bound(starts.begin(), starts.end(), grid_.Coordinate(device, j)) - starts.begin() - 1;
    c += segment * stride_[j];
  }
  return c;
}

std::vector<uint64_t> DeviceClasses::PerDevice(absl::Span<const uint64_t> per_class) const {
  // Axes of size 1 hold coordinate 0 only; at most 16 others fit in the
  // devices that are ever listed, which bounds the recursion.
  std::vector<size_t> moving;
  for (size_t j = 0; j < grid_.size.size(); ++j) {
    if (grid_.size[j] > 1) moving.push_back(j);
  }
  std::vector<uint64_t> values(grid_.devices);
  // Writes the devices whose coordinates on the axes before moving[i] are
  // fixed: a contiguous range from `device`, whose class so far is `c`.
  // Only the first coordinate of each segment is descended into; the
  // segment's other coordinates hold the same classes, so their ranges are
  // copies of it. Cost: the classes x axes, plus copying the devices.
  auto fill = [&](auto& self, size_t i, uint64_t device, size_t c) -> void {
    if (i == moving.size()) {
      values[device] = per_class[c];
      return;
    }
    const size_t j = moving[i];
    const uint64_t block = grid_.stride[j];
    const std::vector<uint64_t>& starts = starts_[j];
    for (size_t s = 0; s < starts.size(); ++s) {
      const uint64_t first = device + starts[s] * block;
      const uint64_t end = device + (s + 1 < starts.size() ? starts[s + 1] : grid_.size[j]) * block;
      self(self, i + 1, first, c + s * stride_[j]);
      for (uint64_t next = first + block; next < end; next += block) {
        std::copy_n(values.begin() + first, block, values.begin() + next);
      }
    }
  };
  fill(fill, 0, 0, 0);
  return values;
}

}  // namespace shardplan
