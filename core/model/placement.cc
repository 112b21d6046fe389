#include "core/model/placement.h"

#include <charconv>

namespace shardplan {
namespace {

constexpr std::string_view kOpNames[] = {"sum", "avg", "max", "min", "prod"};

}  // namespace

std::optional<Placement> ParsePlacement(std::string_view text) {
  Placement p;
  if (text == "R") return p;
  if (text == "P") {
    p.kind = Placement::Kind::kPartial;
    return p;
  }
  if (text.size() < 4 || text[1] != '(' || text.back() != ')') return std::nullopt;
  std::string_view inner = text.substr(2, text.size() - 3);
  if (text[0] == 'S') {
    int32_t dim = 0;
    const char* end = inner.data() + inner.size();
    auto [ptr, ec] = std::from_chars(inner.data(), end, dim);
    if (ec != std::errc() || ptr != end) return std::nullopt;
    p.kind = Placement::Kind::kShard;
    p.dim = dim;
    return p;
  }
  if (text[0] == 'P') {
    for (size_t i = 0; i < std::size(kOpNames); ++i) {
      if (inner == kOpNames[i]) {
        p.kind = Placement::Kind::kPartial;
        p.op = static_cast<PartialOp>(i);
        return p;
      }
    }
  }
  return std::nullopt;
}

std::string FormatPlacement(const Placement& placement) {
  switch (placement.kind) {
    case Placement::Kind::kReplicate:
      return "R";
    case Placement::Kind::kShard:
      return "S(" + std::to_string(placement.dim) + ")";
    case Placement::Kind::kPartial:
      if (placement.op == PartialOp::kSum) return "P";
      return "P(" + std::string(kOpNames[static_cast<int>(placement.op)]) + ")";
  }
  return "R";
}

bool SamePlacements(const NamedPlacements& a, const NamedPlacements& b) {
  if (a.size() != b.size()) return false;
  for (const AxisPlacement& x : a) {
    bool found = false;
    for (const AxisPlacement& y : b) {
      if (y.axis == x.axis) {
        if (y.placement != x.placement) return false;
        found = true;
        break;
      }
    }
    if (!found) return false;
  }
  return true;
}

}  // namespace shardplan
