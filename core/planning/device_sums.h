// Sums over the devices of a mesh of functions that are products of
// per-dim chunk sizes: the machinery behind memory per device (memory.h)
// and training memory per device (training.h).
//
// Devices are numbered row-major over the mesh axes in mesh order (the last
// axis varies fastest). A term is `weight x f_1(c) x ... x f_k(c)` where
// each f_i is the number of units of one sharded dim that the device at
// coordinates c holds, after torch.chunk over the axes sharding that dim in
// mesh order (the device at coordinate c holds
// max(0, min(ceil(n/k), n - c*ceil(n/k))) of n units), optionally
// transformed into the padded shard ceil(units x block / divisor) of
// FSDP2's dim-0 sharding (training-v1 section 2).
//
// Cost: O(terms' distinct keys x (pieces of their chunkings) + devices x
// axes), never devices x terms. Terms with the same key are added up first;
// a key's function only depends on the coordinates of the axes that shard
// it and is piecewise constant over a few boxes, which are added into a
// difference array over the device grid that is summed once at the end.
#ifndef SHARDPLAN_CORE_PLANNING_DEVICE_SUMS_H_
#define SHARDPLAN_CORE_PLANNING_DEVICE_SUMS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "core/model/document.h"

namespace shardplan {

// The device grid: mesh axes in mesh order, row-major.
struct DeviceGrid {
  std::vector<uint64_t> size;
  std::vector<uint64_t> stride;
  uint64_t devices = 1;

  // The grid of `doc`'s mesh, or nullopt when it has more than
  // `max_devices` devices.
  static std::optional<DeviceGrid> Of(const Document& doc, uint64_t max_devices);
  // The coordinate of `device` on axis `axis` (a mesh index).
  uint64_t Coordinate(uint64_t device, size_t axis) const { return device / stride[axis] % size[axis]; }
};

// One sharded dim of a term: `units` units, chunked over `axes` (mesh
// indexes of axes of size > 1, in mesh order); a device's factor is the
// units it holds, or ceil(units held x block / divisor) when divisor > 1.
struct ShardedDim {
  uint64_t units = 0;
  uint64_t block = 1;
  uint64_t divisor = 1;
  absl::InlinedVector<uint32_t, 2> axes;
};

class DeviceSums {
 public:
  explicit DeviceSums(const DeviceGrid& grid) : grid_(grid) {}

  // Adds `weight` x the product of the dims' factors (sharded dims in
  // increasing dim order, disjoint axes). Arithmetic is modulo 2^64: the
  // caller guarantees that every device's sum fits.
  void Add(absl::Span<const ShardedDim> dims, uint64_t weight);
  bool empty() const { return groups_.empty(); }
  // Every device's sum, by device index.
  std::vector<uint64_t> Evaluate() const;

 private:
  // A flat key: per sharded dim, its units, block, divisor, axis count,
  // then those axes.
  using Key = absl::InlinedVector<uint64_t, 6>;
  const DeviceGrid& grid_;
  absl::flat_hash_map<Key, uint64_t> groups_;
};

// The units of `n` that the device at coordinate `c` holds after
// torch.chunk into `k` pieces.
inline uint64_t ChunkUnits(uint64_t n, uint64_t k, uint64_t c) {
  const uint64_t q = n / k + (n % k != 0);
  if (q == 0 || c * q >= n) return 0;
  return n - c * q < q ? n - c * q : q;
}

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_PLANNING_DEVICE_SUMS_H_
