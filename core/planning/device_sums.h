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
// Terms with the same key are added up first; a key's function only
// depends on the coordinates of the axes that shard it and is piecewise
// constant over a few boxes, whose corners make a sparse difference of the
// sum over the device grid. The sums are not evaluated device by device but
// class by class (DeviceClasses): each axis is cut only at the coordinates
// where some corner lies, so a mesh of a million devices whose axes shard
// nothing is one class. Cost: O(terms' distinct keys x (pieces of their
// chunkings) + classes x axes), never devices x terms; the classes are at
// most the devices and at most the product over axes of (corners on the
// axis + 1).
#ifndef SHARDPLAN_CORE_PLANNING_DEVICE_SUMS_H_
#define SHARDPLAN_CORE_PLANNING_DEVICE_SUMS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
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

// One term of the sparse multi-dimensional difference of a sum: `value` at
// device `offset`; the sum at a device is the total of the terms at devices
// whose coordinates are all at most its own.
struct DifferenceTerm {
  uint64_t offset;
  uint64_t value;
};

class DeviceClasses;

class DeviceSums {
 public:
  explicit DeviceSums(const DeviceGrid& grid) : grid_(grid) {}

  // Adds `weight` x the product of the dims' factors (sharded dims in
  // increasing dim order, disjoint axes). Arithmetic is modulo 2^64: the
  // caller guarantees that every device's sum fits.
  void Add(absl::Span<const ShardedDim> dims, uint64_t weight);
  bool empty() const { return groups_.empty(); }
  // Every class's sum, by class index; `classes` was cut for these sums
  // (among others).
  std::vector<uint64_t> Evaluate(const DeviceClasses& classes) const;

 private:
  friend class DeviceClasses;
  // A flat key: per sharded dim, its units, block, divisor, axis count,
  // then those axes.
  using Key = absl::InlinedVector<uint64_t, 6>;
  // The difference of the sums, computed once, after the last Add.
  const std::vector<DifferenceTerm>& Difference() const;

  const DeviceGrid& grid_;
  absl::flat_hash_map<Key, uint64_t> groups_;
  mutable std::optional<std::vector<DifferenceTerm>> difference_;
};

// The devices of a grid cut into classes of devices that hold the same sums:
// each axis is cut into segments at every coordinate where a term of the
// difference of one of the sums lies, and a class is a product of segments
// (a box of devices). Classes are numbered row-major over the segments, so
// their first devices increase with the class number.
class DeviceClasses {
 public:
  DeviceClasses(const DeviceGrid& grid, absl::Span<const DeviceSums* const> sums);

  const DeviceGrid& grid() const { return grid_; }
  size_t size() const { return size_; }
  // The number of devices of class `c`, and the lowest of them.
  uint64_t Devices(size_t c) const;
  uint64_t FirstDevice(size_t c) const;
  // The class of `device`.
  size_t Of(uint64_t device) const;
  // Every device's value, by device: `per_class[Of(device)]`, in time linear
  // in the devices (not devices x axes).
  std::vector<uint64_t> PerDevice(absl::Span<const uint64_t> per_class) const;

 private:
  friend class DeviceSums;
  const DeviceGrid& grid_;
  std::vector<std::vector<uint64_t>> starts_;  // per axis: its segments' first coordinates, from 0
  std::vector<size_t> stride_;                 // per axis: the class stride of its segments
  size_t size_ = 1;
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
