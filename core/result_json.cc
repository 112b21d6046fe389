// The result as JSON (WriteResultJson and ResultJsonWriter, core/result.h),
// written as it is made: RapidJSON's writer over a buffer that goes to the
// stream whenever it holds 64 KiB or more at the end of an item. Diagnostics
// the engine streams are written one by one as they come. The long lists (owners' specs
// and required parameters, owned names, expected parameters, plan entries)
// are formatted in parallel, a chunk of items to a writer of its own, and
// copied into the output in order. The owners' layouts on their own
// (OwnersView::Layouts) are written here too, as WriteOwned writes them.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "core/exec/parallel.h"
#include "core/exec/scan_then_apply.h"
#include "core/outcome.h"
#include "core/result.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace shardplan {
namespace {

using Json = rapidjson::Writer<rapidjson::StringBuffer>;

struct OutputBuffer {
  rapidjson::StringBuffer buffer;
};

class Writer : private OutputBuffer, public Json {
 public:
  explicit Writer(std::ostream& out) : Json(buffer), out_(out) {}
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  ~Writer() { Flush(); }

  // At the end of an item of a list that grows with the model.
  void ItemDone() {
    if (buffer.GetSize() >= kFlushBytes) Flush();
  }
  // Items written elsewhere (WriteItems), as JSON text, into the container
  // this writer just opened.
  void RawItems(std::string_view text) { std::memcpy(buffer.Push(text.size()), text.data(), text.size()); }
  void Flush() {
    out_.write(buffer.GetString(), static_cast<std::streamsize>(buffer.GetSize()));
    buffer.Clear();
  }

 private:
  static constexpr size_t kFlushBytes = 64 * 1024;
  std::ostream& out_;
};

// Writes n items into the object (`members`: item(i, json) writes a key and
// its value) or array (item writes a value) that `w` has just opened, in
// order, and closes it. Chunks of items are written in parallel, each
// between the braces of a writer of its own, and their text is copied into
// the container: RapidJSON's writer then knows nothing of those items, so
// the copies put the commas between chunks themselves.
template <typename Item>
void WriteItems(Writer& w, size_t n, bool members, Item&& item) {
  constexpr size_t kChunk = 1024;
  bool first = true;
  ScanThenApply<rapidjson::StringBuffer>(
      ChunkCount(n, kChunk), 1,
      [&](size_t begin, size_t end, rapidjson::StringBuffer* texts) {
        for (size_t c = begin; c < end; ++c) {
          Json json(texts[c - begin]);
          members ? json.StartObject() : json.StartArray();
          for (size_t i = c * kChunk; i < std::min(n, (c + 1) * kChunk); ++i) item(i, json);
          members ? json.EndObject() : json.EndArray();
        }
      },
      [&](size_t, const rapidjson::StringBuffer& text) {
        if (!first) w.RawItems(",");
        w.RawItems(std::string_view(text.GetString() + 1, text.GetSize() - 2));  // without the braces
        first = false;
        w.ItemDone();
      });
  members ? w.EndObject() : w.EndArray();
}

void String(Json& w, std::string_view s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); }
void Key(Json& w, std::string_view s) { w.Key(s.data(), static_cast<rapidjson::SizeType>(s.size())); }

void WriteOptional(Json& w, const std::optional<std::string>& s) {
  if (s) {
    String(w, *s);
  } else {
    w.Null();
  }
}

void WriteDiagnostic(Json& w, const Diagnostic& d) {
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
  // Only where known: results without them keep their bytes.
  if (d.fix_it) {
    Key(w, "help");
    String(w, d.fix_it->help);
  }
  if (d.fix_it && !d.fix_it->fix.empty()) {
    Key(w, "fix");
    w.StartArray();
    for (const FixOperation& op : d.fix_it->fix) {
      w.StartObject();
      Key(w, "op");
      String(w, op.op);
      if (op.from) {
        Key(w, "from");
        String(w, *op.from);
      }
      Key(w, "path");
      String(w, op.path);
      if (op.value) {
        Key(w, "value");
        w.RawValue(op.value->data(), op.value->size(), rapidjson::kStringType);
      }
      w.EndObject();
    }
    w.EndArray();
  }
  w.EndObject();
}

// "groups": each group with the indexes of its diagnostics among the first
// `listed` of the result's, then "counts": diagnostics per code, in the
// order of each code's first group.
void WriteGroups(Writer& w, const Result& result, size_t listed) {
  Key(w, "groups");
  w.StartArray();
  for (const DiagnosticGroup& g : result.groups) {
    w.StartObject();
    Key(w, "code");
    String(w, g.code);
    Key(w, "severity");
    String(w, SeverityName(g.severity));
    Key(w, "pointer");
    WriteOptional(w, g.pointer);
    Key(w, "count");
    w.Uint64(g.count);
    Key(w, "listed");
    w.StartArray();
    for (size_t i : g.listed) {
      if (i < listed) w.Uint64(i);
    }
    w.EndArray();
    w.EndObject();
    w.ItemDone();
  }
  w.EndArray();
  Key(w, "counts");
  w.StartObject();
  for (const auto& [code, count] : CountByCode(result)) {
    Key(w, code);
    w.Uint64(count);
  }
  w.EndObject();
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

// The JSON text of layouts as stored, by body: a model's millions of owners
// and plan entries share a few bodies (the document stores each distinct one
// once), each written once and copied where it is used.
class StoredLayouts {
 public:
  // Writes `layout` through `write(json)`, for its body, unless written.
  template <typename WriteLayout>
  void Add(const Layout& layout, WriteLayout write) {
    auto [it, added] = text_.try_emplace(layout.body);
    if (!added) return;
    rapidjson::StringBuffer buffer;
    Json json(buffer);
    write(json);
    it->second.assign(buffer.GetString(), buffer.GetSize());
  }
  // Copies the text of `layout`'s body.
  void Write(Json& w, const Layout& layout) const {
    const std::string& text = text_.at(layout.body);
    w.RawValue(text.data(), text.size(), rapidjson::kObjectType);
  }

 private:
  absl::flat_hash_map<const LayoutBody*, std::string> text_;
};

// Whether claims dropped none of the owner's params: it prints its layout as
// stored.
bool AsStored(const Owner& owner, const Declarations& declared) {
  const absl::Span<const Declarations::Outcome> outcomes = declared.OutcomesOf(owner);
  return std::find(outcomes.begin(), outcomes.end(), Declarations::Outcome::kDropped) == outcomes.end();
}

// training-v1 section 4.
void WriteTraining(Json& w, const Document& doc, const TrainingReport& training) {
  Key(w, "training");
  w.StartObject();
  Key(w, "worst");
  w.StartObject();
  const TrainingBreakdown& worst = training.worst;
  Key(w, "device");
  w.Uint64(worst.device);
  Key(w, "coordinates");
  w.StartObject();
  for (size_t j = 0; j < doc.mesh.size(); ++j) {
    Key(w, doc.Name(doc.mesh[j].name));
    w.Uint64(worst.coordinates[j]);
  }
  w.EndObject();
  for (const auto& [key, value] : {std::pair{"params", worst.params},
                                   {"grads", worst.grads},
                                   {"master", worst.master},
                                   {"optimizer", worst.optimizer},
                                   {"gathered", worst.gathered},
                                   {"activations", worst.activations},
                                   {"total", worst.total}}) {
    Key(w, key);
    w.Uint64(value);
  }
  w.EndObject();
  Key(w, "max_total_bytes");
  w.Uint64(training.max_total_bytes);
  Key(w, "min_total_bytes");
  w.Uint64(training.min_total_bytes);
  Key(w, "mean_total_bytes");
  w.Double(training.mean_total_bytes);
  Key(w, "per_device_total_bytes");
  if (training.per_device_total_bytes) {
    w.StartArray();
    for (uint64_t b : *training.per_device_total_bytes) w.Uint64(b);
    w.EndArray();
  } else {
    w.Null();
  }
  w.EndObject();
}

void WriteMemory(Json& w, const Document& doc, const std::optional<MemoryReport>& memory) {
  Key(w, "memory");
  if (!memory) {
    w.Null();
    return;
  }
  w.StartObject();
  for (const auto& [key, value] : {std::pair{"devices", memory->devices},
                                   {"unsharded_bytes", memory->unsharded_bytes},
                                   {"max_bytes", memory->max_bytes},
                                   {"min_bytes", memory->min_bytes}}) {
    Key(w, key);
    w.Uint64(value);
  }
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
  if (memory->training) WriteTraining(w, doc, *memory->training);
  w.EndObject();
}

void WriteCommunication(Writer& w, const Document& doc, const CommunicationReport& report) {
  Key(w, "communication");
  w.StartArray();
  WriteItems(w, report.records.size(), /*members=*/false, [&](size_t i, Json& json) {
    const CommunicationRecord& r = report.records[i];
    json.StartObject();
    Key(json, "fqn");
    String(json, r.fqn);
    Key(json, "port");
    String(json, r.port);
    Key(json, "axis");
    String(json, doc.Name(r.axis));
    Key(json, "from");
    String(json, FormatPlacement(r.from));
    Key(json, "to");
    String(json, FormatPlacement(r.to));
    Key(json, "collective");
    String(json, CollectiveName(r.collective));
    json.EndObject();
  });
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

// Every parameter slot whose parameter an owner claims, in the order of the
// slots' full names (as std::string's < sorts them, by unsigned bytes),
// without spelling them out: a walk of the tree taking each path's own
// slots and children in the order of their keys, a slot's name or a child's
// name followed by '.'. Every full name under child c starts with "c.", a
// slot's ends there, and no name holds a dot, so the keys' order is that of
// every full name they start.
std::vector<ModuleTree::ParamPath> OwnedSlotsByName(const ModuleTree& tree, const std::vector<bool>& owned) {
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
  std::vector<ModuleTree::ParamPath> slots;
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
      slots.push_back({item.path, item.slot});
    }
  }
  return slots;
}

void WriteOwned(Writer& w, const Outcome& outcome) {
  const Document& doc = *outcome.document;
  const ModuleTree& tree = *outcome.tree;
  const Owned& owned = *outcome.owned;
  Key(w, "owned");
  w.StartObject();
  Key(w, "specs");
  w.StartObject();
  StoredLayouts layouts;
  for (const Owner& e : outcome.owners) {
    if (AsStored(e, outcome.declared)) {
      layouts.Add(*e.layout, [&](Json& json) { WriteOwnedLayout(json, doc, e, outcome.declared); });
    }
  }
  WriteItems(w, outcome.owners.size(), /*members=*/true, [&](size_t i, Json& json) {
    const Owner& e = outcome.owners[i];
    Key(json, tree.fqn(e.path));
    if (AsStored(e, outcome.declared)) {
      layouts.Write(json, *e.layout);
    } else {
      WriteOwnedLayout(json, doc, e, outcome.declared);
    }
  });
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
  const std::vector<ModuleTree::ParamPath> slots = OwnedSlotsByName(tree, owned.owned);
  WriteItems(w, slots.size(), /*members=*/false, [&](size_t i, Json& json) { String(json, tree.FullName(slots[i])); });
  Key(w, "expected");
  w.StartArray();
  std::vector<std::string_view> expected;
  for (ParamId p : owned.expected) expected.push_back(doc.Name(doc.parameters[p].id));
  ParallelSort(expected.begin(), expected.end());
  WriteItems(w, expected.size(), /*members=*/false, [&](size_t i, Json& json) { String(json, expected[i]); });
  Key(w, "required");
  w.StartObject();
  WriteItems(w, outcome.owners.size(), /*members=*/true, [&](size_t i, Json& json) {
    const Owner& e = outcome.owners[i];
    Key(json, tree.fqn(e.path));
    absl::InlinedVector<std::string_view, 4> names;
    for (ParamId p : outcome.declared.Required(e)) names.push_back(doc.Name(doc.parameters[p].id));
    std::sort(names.begin(), names.end());
    json.StartArray();
    for (std::string_view n : names) String(json, n);
    json.EndArray();
  });
  Key(w, "aliases");
  w.StartArray();
  WriteItems(w, owned.aliases.size(), /*members=*/false, [&](size_t i, Json& json) {
    json.StartArray();
    String(json, owned.aliases[i].first);
    String(json, owned.aliases[i].second);
    json.EndArray();
  });
  w.EndObject();
}

void WritePlanned(Writer& w, const Outcome& outcome) {
  const Document& doc = *outcome.document;
  const PlanOutput& planned = *outcome.planned;
  Key(w, "plan");
  w.StartObject();
  Key(w, "modules");
  w.StartObject();
  StoredLayouts layouts;
  for (const FqnLayout& e : planned.entries) {
    layouts.Add(e.layout, [&](Json& json) { WriteLayout(json, doc, e.layout); });
  }
  WriteItems(w, planned.entries.size(), /*members=*/true, [&](size_t i, Json& json) {
    Key(json, doc.Name(planned.entries[i].fqn));
    layouts.Write(json, planned.entries[i].layout);
  });
  w.EndObject();
  Key(w, "provenance");
  w.StartObject();
  WriteItems(w, planned.entries.size(), /*members=*/true, [&](size_t i, Json& json) {
    Key(json, doc.Name(planned.entries[i].fqn));
    json.StartArray();
    for (const std::string& p : planned.provenance[i]) String(json, p);
    json.EndArray();
  });
  WriteMemory(w, doc, planned.memory);
  WriteCommunication(w, doc, planned.communication);
}

}  // namespace

struct ResultJsonWriter::State {
  State(std::ostream& out, size_t max_diagnostics) : w(out), max_diagnostics(max_diagnostics) {
    w.StartObject();
    Key(w, "schema");
    String(w, "shardplan.result.v1");
    Key(w, "diagnostics");
    w.StartArray();
  }
  // How many more diagnostics to list.
  size_t room() const { return max_diagnostics == 0 ? SIZE_MAX : max_diagnostics - listed; }

  Writer w;
  const size_t max_diagnostics;
  size_t listed = 0;
};

ResultJsonWriter::ResultJsonWriter(std::ostream& out, size_t max_diagnostics)
    : out_(out), max_diagnostics_(max_diagnostics) {}

ResultJsonWriter::~ResultJsonWriter() = default;

ResultJsonWriter::State& ResultJsonWriter::Started() {
  if (state_ == nullptr) state_ = std::make_unique<State>(out_, max_diagnostics_);
  return *state_;
}

void ResultJsonWriter::Write(const Diagnostic& diagnostic) {
  State& s = Started();
  if (s.room() == 0) return;
  WriteDiagnostic(s.w, diagnostic);
  ++s.listed;
  s.w.ItemDone();
}

void ResultJsonWriter::Finish(const Result& result) {
  State& s = Started();
  Writer& w = s.w;
  // With the thread count the result was made with.
  WithThreads(result.outcome != nullptr ? result.outcome->threads : 1, [&] {
    const size_t n = std::min(s.room(), result.diagnostics.size());
    WriteItems(w, n, /*members=*/false, [&](size_t i, Json& json) { WriteDiagnostic(json, result.diagnostics[i]); });
    s.listed += n;
    Key(w, "ok");
    w.Bool(result.ok);
    WriteGroups(w, result, s.listed);
    if (result.outcome != nullptr && result.outcome->owned) WriteOwned(w, *result.outcome);
    if (result.outcome != nullptr && result.outcome->planned) WritePlanned(w, *result.outcome);
    if (result.outcome != nullptr && result.outcome->checked_memory) {
      WriteMemory(w, *result.outcome->document, result.outcome->checked_memory);
    }
    w.EndObject();
    return 0;
  });
  state_.reset();  // flushes
}

void WriteResultJson(const Result& result, std::ostream& out, size_t max_diagnostics) {
  ResultJsonWriter(out, max_diagnostics).Finish(result);
}

std::string ResultToJson(const Result& result, size_t max_diagnostics) {
  std::ostringstream out;
  WriteResultJson(result, out, max_diagnostics);
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
    const bool as_stored = AsStored(e, outcome_->declared);
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

}  // namespace shardplan
