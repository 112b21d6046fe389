#include "core/result.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "core/exec/parallel.h"
#include "core/outcome.h"
#include "core/ownership/native_match.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace shardplan {

std::optional<OwnershipCounts> CountOwnership(const Result& result) {
  if (!result.ok || result.outcome == nullptr || !result.outcome->owned) return std::nullopt;
  const Outcome& outcome = *result.outcome;
  const ModuleTree& tree = *outcome.tree;
  OwnershipCounts counts;
  counts.owners = outcome.owners.size();
  for (PathId q = 0; q < tree.size(); ++q) {
    for (const auto& [name, p] : tree.params(q)) counts.owned_names += outcome.owned->owned[p];
  }
  counts.aliases = outcome.owned->aliases.size();
  return counts;
}

// --- The plan, in place ---------------------------------------------------------

std::optional<PlanView> PlanOf(const Result& result) {
  if (result.outcome == nullptr || !result.outcome->planned) return std::nullopt;
  return PlanView(*result.outcome);
}

size_t PlanView::size() const { return outcome_->planned->entries.size(); }

PlanEntry PlanView::entry(size_t index) const {
  const Document& doc = *outcome_->document;
  const FqnLayout& e = outcome_->planned->entries[index];
  PlanEntry out{doc.Name(e.fqn), &outcome_->planned->provenance[index], {}};
  if (!e.layout.params()) return out;
  for (const PlacementEntry& p : *e.layout.params()) {
    PlannedParameter& param = out.params.emplace_back();
    param.name = doc.Name(p.name);
    for (const AxisPlacement& a : p.placements) param.placements.emplace_back(doc.Name(a.axis), FormatPlacement(a.placement));
  }
  return out;
}

const MemoryReport* PlanView::memory() const {
  const std::optional<MemoryReport>& memory = outcome_->planned->memory;
  return memory ? &*memory : nullptr;
}

size_t PlanView::communication_size() const { return outcome_->planned->communication.records.size(); }

CommunicationRecordView PlanView::communication(size_t index) const {
  const CommunicationRecord& r = outcome_->planned->communication.records[index];
  return {r.fqn, r.port, outcome_->document->Name(r.axis), FormatPlacement(r.from), FormatPlacement(r.to),
          CollectiveName(r.collective)};
}

std::vector<CollectiveTotal> PlanView::collectives() const {
  std::vector<CollectiveTotal> totals;
  for (const CollectiveCount& c : outcome_->planned->communication.counts) {
    totals.push_back({CollectiveName(c.collective), outcome_->document->Name(c.axis), c.count});
  }
  return totals;
}

// --- The owners, in place -------------------------------------------------------

std::optional<OwnersView> OwnersOf(const Result& result) {
  if (result.outcome == nullptr) return std::nullopt;
  return OwnersView(*result.outcome);
}

OwnersView::OwnersView(const Outcome& outcome)
    : outcome_(&outcome), native_patterns_(NativePatterns(*outcome.tree, outcome.owners)) {}

size_t OwnersView::size() const { return outcome_->owners.size(); }

OwnerView OwnersView::owner(size_t index) const {
  const Document& doc = *outcome_->document;
  const ModuleTree& tree = *outcome_->tree;
  const Owner& o = outcome_->owners[index];
  OwnerView out;
  out.fqn = tree.fqn(o.path);
  switch (KindOf(o, tree)) {
    case OwnerKind::kModel: out.kind = "model"; break;
    case OwnerKind::kFamily: out.kind = "family"; break;
    case OwnerKind::kNative: out.kind = "native"; break;
  }
  if (o.layout->origin.kind == Origin::Kind::kNativeSharding) {
    out.native_request = o.layout->origin.index;
    if (const uint32_t k = native_patterns_[index]; k != kNotNative) {
      out.native_pattern_index = k;
      out.native_pattern = doc.Name(doc.native[o.layout->origin.index].match[k]);
    }
  }
  out.pointer = doc.PointerOf(o.layout->origin);
  return out;
}

// --- JSON ---------------------------------------------------------------------

namespace {

// RapidJSON's writer over a buffer that goes to a std::ostream whenever an
// item of a long list is complete and it holds 64 KiB or more: the result
// is written as it is made, never held whole. (RapidJSON writes numbers and
// reserves room for strings in place on its own StringBuffer.)
using Json = rapidjson::Writer<rapidjson::StringBuffer>;

struct OutputBuffer {
  rapidjson::StringBuffer buffer;
};
class Writer : private OutputBuffer, public rapidjson::Writer<rapidjson::StringBuffer> {
 public:
  explicit Writer(std::ostream& out) : rapidjson::Writer<rapidjson::StringBuffer>(buffer), out_(out) {}
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  ~Writer() { Flush(); }

  // After each item of a list that grows with the model.
  void ItemDone() {
    if (buffer.GetSize() >= kFlushBytes) Flush();
  }
  void Flush() {
    out_.write(buffer.GetString(), static_cast<std::streamsize>(buffer.GetSize()));
    buffer.Clear();
  }

 private:
  static constexpr size_t kFlushBytes = 64 * 1024;
  std::ostream& out_;
};

void String(Json& w, std::string_view s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); }
void Key(Json& w, std::string_view s) { w.Key(s.data(), static_cast<rapidjson::SizeType>(s.size())); }

void WriteOptional(Json& w, const std::optional<std::string>& s) {
  if (s) {
    String(w, *s);
  } else {
    w.Null();
  }
}

void WritePlacementEntry(Json& w, const Document& doc, const PlacementEntry& e) {
  Key(w, doc.Name(e.name));
  w.StartObject();
  for (const AxisPlacement& a : e.placements) {
    Key(w, doc.Name(a.axis));
    String(w, FormatPlacement(a.placement));
  }
  w.EndObject();
}

void WritePlacementMap(Json& w, const Document& doc, const PlacementMap& map) {
  w.StartObject();
  for (const PlacementEntry& e : map) WritePlacementEntry(w, doc, e);
  w.EndObject();
}

// A layout: params (written by `write_params`; null when absent), in_src
// and in_dst always (null when absent), out_src, out_dst and `out_names`
// (null: none) when present.
template <typename WriteParams>
void WriteLayoutWith(Json& w, const Document& doc, const Layout& layout, WriteParams write_params,
                     const SmallVector<NameId>* out_names) {
  w.StartObject();
  Key(w, "params");
  if (layout.params()) {
    write_params(*layout.params());
  } else {
    w.Null();
  }
  for (const auto& [key, map] : {std::pair{"in_src", &layout.in_src()}, std::pair{"in_dst", &layout.in_dst()}}) {
    Key(w, key);
    if (*map) {
      WritePlacementMap(w, doc, **map);
    } else {
      w.Null();
    }
  }
  for (const auto& [key, map] : {std::pair{"out_src", &layout.out_src()}, std::pair{"out_dst", &layout.out_dst()}}) {
    if (!*map) continue;
    Key(w, key);
    WritePlacementMap(w, doc, **map);
  }
  if (out_names) {
    Key(w, "out_names");
    w.StartArray();
    for (NameId n : *out_names) String(w, doc.Name(n));
    w.EndArray();
  }
  w.EndObject();
}

// A plan entry's layout, as written.
void WriteLayout(Json& w, const Document& doc, const Layout& layout) {
  WriteLayoutWith(
      w, doc, layout, [&](const PlacementMap& params) { WritePlacementMap(w, doc, params); }, layout.out_names().get());
}

// An owner's layout as the result prints it: less the params claims dropped,
// with normalized out_names.
void WriteOwnedLayout(Json& w, const Document& doc, const Owner& entry, const Declarations& declared) {
  const Layout& layout = *entry.layout;
  const absl::Span<const Declarations::Outcome> outcomes = declared.OutcomesOf(entry);
  const std::optional<SmallVector<NameId>> out_names = NormalizedOutNames(layout);
  WriteLayoutWith(
      w, doc, layout,
      [&](const PlacementMap& params) {
        w.StartObject();
        for (size_t i = 0; i < params.size(); ++i) {
          if (i < outcomes.size() && outcomes[i] == Declarations::Outcome::kDropped) continue;
          WritePlacementEntry(w, doc, params[i]);
        }
        w.EndObject();
      },
      out_names ? &*out_names : nullptr);
}

void WriteMemory(Json& w, const std::optional<MemoryReport>& memory) {
  Key(w, "memory");
  if (!memory) {
    w.Null();
    return;
  }
  w.StartObject();
  Key(w, "devices");
  w.Uint64(memory->devices);
  Key(w, "unsharded_bytes");
  w.Uint64(memory->unsharded_bytes);
  Key(w, "max_bytes");
  w.Uint64(memory->max_bytes);
  Key(w, "min_bytes");
  w.Uint64(memory->min_bytes);
  Key(w, "mean_bytes");
  w.Double(memory->mean_bytes);
  Key(w, "max_device");
  w.Uint64(memory->max_device);
  if (memory->per_device_bytes) {
    Key(w, "per_device_bytes");
    w.StartArray();
    for (uint64_t b : *memory->per_device_bytes) w.Uint64(b);
    w.EndArray();
  }
  w.EndObject();
}

void WriteCommunication(Writer& w, const Document& doc, const CommunicationReport& report) {
  Key(w, "communication");
  w.StartArray();
  for (const CommunicationRecord& r : report.records) {
    w.ItemDone();
    w.StartObject();
    Key(w, "fqn");
    String(w, r.fqn);
    Key(w, "port");
    String(w, r.port);
    Key(w, "axis");
    String(w, doc.Name(r.axis));
    Key(w, "from");
    String(w, FormatPlacement(r.from));
    Key(w, "to");
    String(w, FormatPlacement(r.to));
    Key(w, "collective");
    String(w, CollectiveName(r.collective));
    w.EndObject();
  }
  w.EndArray();
  Key(w, "collectives");
  w.StartObject();
  for (size_t i = 0; i < report.counts.size();) {
    const Collective c = report.counts[i].collective;
    Key(w, CollectiveName(c));
    w.StartObject();
    for (; i < report.counts.size() && report.counts[i].collective == c; ++i) {
      Key(w, doc.Name(report.counts[i].axis));
      w.Int64(report.counts[i].count);
    }
    w.EndObject();
  }
  w.EndObject();
}

// The ids of `ids` sorted, with `names` as scratch room.
void WriteParamIds(Writer& w, const Document& doc, absl::Span<const ParamId> ids, std::vector<std::string_view>& names) {
  names.clear();
  for (ParamId p : ids) names.push_back(doc.Name(doc.parameters[p].id));
  ParallelSort(names.begin(), names.end());
  w.StartArray();
  for (std::string_view n : names) {
    String(w, n);
    w.ItemDone();
  }
  w.EndArray();
}

// Calls visit(slot) for every parameter slot whose parameter an owner
// claims, in the order of the slots' full names (as std::string's < sorts
// them, by unsigned bytes), without spelling them out first: a walk of the
// tree taking each path's own slots and children in the order of their
// keys, a slot's name or a child's name followed by '.'. Every full name
// under child c starts with "c.", a slot's ends there, and no name holds a
// dot, so the keys' order is that of every full name they start.
template <typename Visit>
void ForEachOwnedSlotByName(const ModuleTree& tree, const std::vector<bool>& owned, Visit visit) {
  struct Item {
    std::string_view name;
    bool child;
    PathId path;  // the child's, or the slot's module's
    NameId slot;  // the slot's name
  };
  auto key_less = [](const Item& a, const Item& b) {
    const size_t n = std::min(a.name.size(), b.name.size());
    if (const int c = std::memcmp(a.name.data(), b.name.data(), n); c != 0) return c < 0;
    // One name is a prefix of the other: the next byte is '.' for a child,
    // and nothing for a slot.
    const int x = a.name.size() > n ? static_cast<unsigned char>(a.name[n]) : a.child ? '.' : -1;
    const int y = b.name.size() > n ? static_cast<unsigned char>(b.name[n]) : b.child ? '.' : -1;
    return x < y;
  };
  // One list of items per depth, reused: the walk's stack.
  std::vector<std::vector<Item>> levels;
  std::vector<size_t> next;
  auto enter = [&](PathId p) {
    if (levels.size() == next.size()) levels.emplace_back();
    std::vector<Item>& items = levels[next.size()];
    items.clear();
    for (const auto& [name, param] : tree.params(p)) {
      if (owned[param]) items.push_back({tree.doc().Name(name), false, p, name});
    }
    for (PathId c = p + 1; c < tree.end(p); c = tree.end(c)) items.push_back({tree.doc().Name(tree.name(c)), true, c, kNoName});
    std::sort(items.begin(), items.end(), key_less);
    next.push_back(0);
  };
  enter(0);
  while (!next.empty()) {
    const std::vector<Item>& items = levels[next.size() - 1];
    if (next.back() == items.size()) {
      next.pop_back();
      continue;
    }
    const Item item = items[next.back()++];
    if (item.child) {
      enter(item.path);
    } else {
      visit(ModuleTree::ParamPath{item.path, item.slot});
    }
  }
}

// Writes layouts through `write(json)` once per stored body, and copies what
// it wrote for the layouts that share the body: a model's millions of owners
// and plan entries share a few bodies (the document stores each distinct
// one once). A null body (a layout not printed as stored) is written on its
// own.
class LayoutCache {
 public:
  template <typename WriteLayout>
  void Write(Writer& w, const LayoutBody* body, WriteLayout write) {
    if (body == nullptr) {
      write(static_cast<Json&>(w));
      return;
    }
    auto [it, added] = written_.try_emplace(body);
    if (added) {
      rapidjson::StringBuffer buffer;
      Json json(buffer);
      write(json);
      it->second.assign(buffer.GetString(), buffer.GetSize());
    }
    w.RawValue(it->second.data(), it->second.size(), rapidjson::kObjectType);
  }

 private:
  absl::flat_hash_map<const LayoutBody*, std::string> written_;
};

void WriteOwned(Writer& w, const Outcome& outcome) {
  const Document& doc = *outcome.document;
  const ModuleTree& tree = *outcome.tree;
  const Owned& owned = *outcome.owned;
  Key(w, "owned");
  w.StartObject();
  Key(w, "specs");
  w.StartObject();
  LayoutCache layouts;
  for (const Owner& e : outcome.owners) {
    Key(w, tree.fqn(e.path));
    // An owner whose claims dropped no param prints its layout as stored.
    const absl::Span<const Declarations::Outcome> outcomes = outcome.declared.OutcomesOf(e);
    const bool as_stored = std::find(outcomes.begin(), outcomes.end(), Declarations::Outcome::kDropped) == outcomes.end();
    layouts.Write(w, as_stored ? e.layout->body : nullptr,
                  [&](Json& json) { WriteOwnedLayout(json, doc, e, outcome.declared); });
    w.ItemDone();
  }
  w.EndObject();
  Key(w, "parallel");
  w.StartObject();
  for (const Owner& e : outcome.owners) {
    if (!e.parallel) continue;
    Key(w, tree.fqn(e.path));
    w.StartObject();
    Key(w, "binding_kind");
    String(w, doc.Name(e.parallel->binding_kind));
    Key(w, "axes");
    w.StartArray();
    for (NameId a : e.parallel->axes) String(w, doc.Name(a));
    w.EndArray();
    w.EndObject();
    w.ItemDone();
  }
  w.EndObject();
  Key(w, "owned_names");
  w.StartArray();
  std::string name;  // reused
  ForEachOwnedSlotByName(tree, owned.owned, [&](const ModuleTree::ParamPath& slot) {
    name = tree.FullName(slot);
    String(w, name);
    w.ItemDone();
  });
  w.EndArray();
  std::vector<std::string_view> names;
  Key(w, "expected");
  WriteParamIds(w, doc, owned.expected, names);
  Key(w, "required");
  w.StartObject();
  for (const Owner& e : outcome.owners) {
    Key(w, tree.fqn(e.path));
    WriteParamIds(w, doc, outcome.declared.Required(e), names);
  }
  w.EndObject();
  Key(w, "aliases");
  w.StartArray();
  for (const auto& [canonical, alias] : owned.aliases) {
    w.StartArray();
    String(w, canonical);
    String(w, alias);
    w.EndArray();
    w.ItemDone();
  }
  w.EndArray();
  w.EndObject();
}

void WritePlanned(Writer& w, const Outcome& outcome) {
  const Document& doc = *outcome.document;
  const PlanOutput& planned = *outcome.planned;
  Key(w, "plan");
  w.StartObject();
  Key(w, "modules");
  w.StartObject();
  LayoutCache layouts;
  for (const FqnLayout& e : planned.entries) {
    Key(w, doc.Name(e.fqn));
    layouts.Write(w, e.layout.body, [&](Json& json) { WriteLayout(json, doc, e.layout); });
    w.ItemDone();
  }
  w.EndObject();
  w.EndObject();
  Key(w, "provenance");
  w.StartObject();
  for (size_t i = 0; i < planned.entries.size(); ++i) {
    Key(w, doc.Name(planned.entries[i].fqn));
    w.StartArray();
    for (const std::string& p : planned.provenance[i]) String(w, p);
    w.EndArray();
    w.ItemDone();
  }
  w.EndObject();
  WriteMemory(w, planned.memory);
  WriteCommunication(w, doc, planned.communication);
}

}  // namespace

void WriteResultJson(const Result& result, std::ostream& out) {
  Writer w(out);
  w.StartObject();
  Key(w, "schema");
  String(w, "shardplan.result.v1");
  Key(w, "ok");
  w.Bool(result.ok);
  Key(w, "diagnostics");
  w.StartArray();
  for (const Diagnostic& d : result.diagnostics) {
    w.StartObject();
    Key(w, "code");
    String(w, d.code);
    Key(w, "severity");
    String(w, SeverityName(d.severity));
    Key(w, "message");
    String(w, d.message);
    Key(w, "fqn");
    WriteOptional(w, d.fqn);
    Key(w, "parameter");
    WriteOptional(w, d.parameter);
    Key(w, "pointer");
    WriteOptional(w, d.pointer);
    w.EndObject();
    w.ItemDone();
  }
  w.EndArray();
  if (result.outcome != nullptr && result.outcome->owned) WriteOwned(w, *result.outcome);
  if (result.outcome != nullptr && result.outcome->planned) WritePlanned(w, *result.outcome);
  w.EndObject();
}

std::string ResultToJson(const Result& result) {
  std::ostringstream out;
  WriteResultJson(result, out);
  return std::move(out).str();
}

OwnerLayouts OwnersView::Layouts() const {
  const Document& doc = *outcome_->document;
  OwnerLayouts layouts;
  layouts.of_owner.reserve(outcome_->owners.size());
  // As WriteOwned does: an owner whose claims dropped no param prints its
  // layout as stored, the same text for every owner that shares the body.
  absl::flat_hash_map<const LayoutBody*, size_t> written;
  for (const Owner& e : outcome_->owners) {
    const absl::Span<const Declarations::Outcome> outcomes = outcome_->declared.OutcomesOf(e);
    const bool as_stored = std::find(outcomes.begin(), outcomes.end(), Declarations::Outcome::kDropped) == outcomes.end();
    if (as_stored) {
      if (auto it = written.find(e.layout->body); it != written.end()) {
        layouts.of_owner.push_back(it->second);
        continue;
      }
      written.emplace(e.layout->body, layouts.texts.size());
    }
    rapidjson::StringBuffer buffer;
    Json json(buffer);
    WriteOwnedLayout(json, doc, e, outcome_->declared);
    layouts.of_owner.push_back(layouts.texts.size());
    layouts.texts.emplace_back(buffer.GetString(), buffer.GetSize());
  }
  return layouts;
}

// --- The owned parameters, in place ---------------------------------------------

struct OwnedParametersView::Index {
  static constexpr uint32_t kNone = UINT32_MAX;
  // The declaration that claimed a parameter first: its owner, and its
  // entry in the owner's layout params.
  struct Claim {
    uint32_t owner = kNone;
    uint32_t entry = 0;
  };
  // The owned slots in named_parameters(root) order, and their parameters.
  std::vector<ModuleTree::ParamPath> slots;
  std::vector<ParamId> params;
  std::vector<Claim> first;  // per parameter id
};

std::optional<OwnedParametersView> OwnedParametersOf(const Result& result) {
  if (result.outcome == nullptr || !result.outcome->owned) return std::nullopt;
  return OwnedParametersView(*result.outcome);
}

OwnedParametersView::OwnedParametersView(const Outcome& outcome) : outcome_(&outcome) {
  auto index = std::make_shared<Index>();
  const ModuleTree& tree = *outcome.tree;
  for (PathId q = 0; q < tree.size(); ++q) {
    for (const auto& [name, p] : tree.params(q)) {
      if (!outcome.owned->owned[p]) continue;
      index->slots.push_back({q, name});
      index->params.push_back(p);
    }
  }
  index->first.resize(outcome.document->parameters.size());
  // Claims go owner by owner in entry order; the first required
  // declaration of a parameter is its claim (a later one is a tied
  // duplicate, dropped, or a shared-conflict, which fails the check).
  for (uint32_t e = 0; e < outcome.owners.size(); ++e) {
    const absl::Span<const ParamId> params = outcome.declared.ParamsOf(outcome.owners[e]);
    const absl::Span<const Declarations::Outcome> outcomes = outcome.declared.OutcomesOf(outcome.owners[e]);
    for (uint32_t i = 0; i < params.size(); ++i) {
      if (outcomes[i] != Declarations::Outcome::kRequired || index->first[params[i]].owner != Index::kNone) continue;
      index->first[params[i]] = {e, i};
    }
  }
  index_ = std::move(index);
}

size_t OwnedParametersView::size() const { return index_->slots.size(); }

OwnedParameterView OwnedParametersView::parameter(size_t index) const {
  const Document& doc = *outcome_->document;
  const ModuleTree& tree = *outcome_->tree;
  const ModuleTree::ParamPath& slot = index_->slots[index];
  const ParamId p = index_->params[index];
  const Index::Claim claim = index_->first[p];
  const PlacementEntry& entry = (*outcome_->owners[claim.owner].layout->params())[claim.entry];
  OwnedParameterView out;
  out.name = tree.FullName(slot);
  out.canonical = tree.FullName(outcome_->owned->canonical[p]);
  out.owner = claim.owner;
  for (const AxisPlacement& a : entry.placements) out.placements.emplace_back(doc.Name(a.axis), FormatPlacement(a.placement));
  return out;
}

}  // namespace shardplan
