// Parameter memory per device under a final plan (planner-v1 section 5):
// what core/planning/memory.h computes and a planned Result reports.
#ifndef SHARDPLAN_CORE_MEMORY_REPORT_H_
#define SHARDPLAN_CORE_MEMORY_REPORT_H_

#include <cstdint>
#include <optional>
#include <vector>

namespace shardplan {

// Meshes with more devices than this get no memory report: the per-device
// table alone would be gigabytes.
inline constexpr uint64_t kMaxMemoryDevices = uint64_t{1} << 24;
// per_device_bytes is only listed for meshes of at most this many devices.
inline constexpr uint64_t kMaxListedDevices = 65536;

// Training memory of one device by category, in bytes (training-v1
// section 4); a category that does not apply is 0.
struct TrainingBreakdown {
  uint64_t device = 0;
  std::vector<uint64_t> coordinates;  // per mesh axis, mesh order
  uint64_t params = 0;
  uint64_t grads = 0;
  uint64_t master = 0;
  uint64_t optimizer = 0;
  uint64_t gathered = 0;
  uint64_t activations = 0;
  uint64_t total = 0;
};

// Training memory per device (training-v1 sections 2-4).
struct TrainingReport {
  TrainingBreakdown worst;  // the device with the largest total, lowest number on ties
  uint64_t max_total_bytes = 0;
  uint64_t min_total_bytes = 0;
  double mean_total_bytes = 0;
  // Present only when devices <= kMaxListedDevices.
  std::optional<std::vector<uint64_t>> per_device_total_bytes;
};

struct MemoryReport {
  uint64_t devices = 1;          // product of the mesh axis sizes
  uint64_t unsharded_bytes = 0;  // every parameter identity once, whole
  uint64_t max_bytes = 0;
  uint64_t min_bytes = 0;
  double mean_bytes = 0;
  // The lowest device index holding max_bytes. torch.chunk gives
  // coordinate 0 the largest chunk on every axis, so device 0 always holds
  // the most and this is 0; kept because the result format names it.
  uint64_t max_device = 0;
  // Bytes of each device, by device index; present only when
  // devices <= kMaxListedDevices.
  std::optional<std::vector<uint64_t>> per_device_bytes;
  // With a `training` section.
  std::optional<TrainingReport> training;
};

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_MEMORY_REPORT_H_
