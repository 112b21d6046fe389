#include "core/planning/communication.h"

#include <algorithm>
#include <optional>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace shardplan {
namespace {

using Kind = Placement::Kind;

// One mesh axis a port names on either side.
struct AxisPair {
  size_t mesh_index;
  Placement from;  // R unless the source names the axis
  Placement to;    // R unless the destination names the axis
};

class Builder {
 public:
  explicit Builder(const Document& doc) : doc_(doc) {
    for (size_t j = 0; j < doc.mesh.size(); ++j) axis_index_.emplace(doc.mesh[j].name, j);
  }

  // Records the ports of one side pair (in_src/in_dst or out_src/out_dst).
  void Ports(std::string_view fqn, std::string_view prefix, const MapRef& src,
             const MapRef& dst) {
    static const PlacementMap kEmpty;
    const PlacementMap& s = src ? *src : kEmpty;
    const PlacementMap& d = dst ? *dst : kEmpty;
    // Port name -> its destination placements (document keys are unique).
    absl::flat_hash_map<NameId, const NamedPlacements*> dst_of;
    dst_of.reserve(d.size());
    for (const PlacementEntry& e : d) dst_of.emplace(e.name, &e.placements);
    absl::flat_hash_set<NameId> in_src;
    in_src.reserve(s.size());
    for (const PlacementEntry& e : s) {
      in_src.insert(e.name);
      const auto it = dst_of.find(e.name);
      Port(fqn, prefix, e.name, &e.placements, it == dst_of.end() ? nullptr : it->second);
    }
    for (const PlacementEntry& e : d) {
      if (!in_src.contains(e.name)) Port(fqn, prefix, e.name, nullptr, &e.placements);
    }
  }

  CommunicationReport Finish() {
    std::vector<std::tuple<Collective, size_t, int64_t>> sorted;
    sorted.reserve(counts_.size());
    for (const auto& [key, count] : counts_) sorted.emplace_back(key.first, key.second, count);
    std::sort(sorted.begin(), sorted.end());
    for (const auto& [collective, j, count] : sorted) {
      report_.counts.push_back({collective, doc_.mesh[j].name, count});
    }
    return std::move(report_);
  }

 private:
  void Port(std::string_view fqn, std::string_view prefix, NameId name, const NamedPlacements* src,
            const NamedPlacements* dst) {
    pairs_.clear();
    const auto add = [&](const NamedPlacements* side, bool is_src) {
      if (side == nullptr) return;
      for (const AxisPlacement& ap : *side) {
        const auto it = axis_index_.find(ap.axis);
        if (it == axis_index_.end()) continue;
        AxisPair pair{it->second, Placement{}, Placement{}};
        (is_src ? pair.from : pair.to) = ap.placement;
        pairs_.push_back(pair);
      }
    };
    add(src, true);
    add(dst, false);
    // Merge the two sides' entries per axis, in mesh order.
    std::stable_sort(pairs_.begin(), pairs_.end(),
                     [](const AxisPair& a, const AxisPair& b) { return a.mesh_index < b.mesh_index; });
    for (size_t i = 0; i < pairs_.size();) {
      AxisPair merged = pairs_[i];
      if (i + 1 < pairs_.size() && pairs_[i + 1].mesh_index == merged.mesh_index) {
        merged.to = pairs_[i + 1].to;  // the source's entry sorts first
        i += 2;
      } else {
        ++i;
      }
      if (merged.from == merged.to) continue;
      const Collective collective = CollectiveFor(merged.from, merged.to);
      report_.records.push_back({std::string(fqn), absl::StrCat(prefix, doc_.Name(name)),
                                 doc_.mesh[merged.mesh_index].name, merged.from, merged.to, collective});
      ++counts_[{collective, merged.mesh_index}];
    }
  }

  const Document& doc_;
  absl::flat_hash_map<NameId, size_t> axis_index_;
  std::vector<AxisPair> pairs_;
  absl::flat_hash_map<std::pair<Collective, size_t>, int64_t> counts_;
  CommunicationReport report_;
};

}  // namespace

std::string_view CollectiveName(Collective collective) {
  switch (collective) {
    case Collective::kAllGather:
      return "all_gather";
    case Collective::kSlice:
      return "slice";
    case Collective::kAllReduce:
      return "all_reduce";
    case Collective::kReduceScatter:
      return "reduce_scatter";
    case Collective::kAllToAll:
      return "all_to_all";
    case Collective::kNone:
      return "none";
    case Collective::kUnsupported:
      return "unsupported";
  }
  return "unsupported";
}

Collective CollectiveFor(const Placement& from, const Placement& to) {
  switch (from.kind) {
    case Kind::kShard:
      if (to.kind == Kind::kReplicate) return Collective::kAllGather;
      if (to.kind == Kind::kShard) return Collective::kAllToAll;
      return Collective::kUnsupported;  // S -> P
    case Kind::kReplicate:
      if (to.kind == Kind::kShard) return Collective::kSlice;
      return Collective::kNone;  // R -> P (R -> R is no transition)
    case Kind::kPartial:
      if (to.kind == Kind::kReplicate) return Collective::kAllReduce;
      if (to.kind == Kind::kShard) return Collective::kReduceScatter;
      return Collective::kUnsupported;  // P(op) -> P(op')
  }
  return Collective::kUnsupported;
}

CommunicationReport ComputeCommunication(const Document& doc, const std::vector<FqnLayout>& plan) {
  Builder builder(doc);
  for (const FqnLayout& entry : plan) {
    const std::string_view fqn = doc.Name(entry.fqn);
    builder.Ports(fqn, "in:", entry.layout.in_src(), entry.layout.in_dst());
    builder.Ports(fqn, "out:", entry.layout.out_src(), entry.layout.out_dst());
  }
  return builder.Finish();
}

}  // namespace shardplan
