#include "core/result.h"

#include <algorithm>

#include "absl/types/span.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace shardplan {
namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void String(Writer& w, std::string_view s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); }
void Key(Writer& w, std::string_view s) { w.Key(s.data(), static_cast<rapidjson::SizeType>(s.size())); }

void WriteOptional(Writer& w, const std::optional<std::string>& s) {
  if (s) {
    String(w, *s);
  } else {
    w.Null();
  }
}

void WritePlacementEntry(Writer& w, const Document& doc, const PlacementEntry& e) {
  Key(w, doc.Name(e.name));
  w.StartObject();
  for (const AxisPlacement& a : e.placements) {
    Key(w, doc.Name(a.axis));
    String(w, FormatPlacement(a.placement));
  }
  w.EndObject();
}

void WritePlacementMap(Writer& w, const Document& doc, const PlacementMap& map) {
  w.StartObject();
  for (const PlacementEntry& e : map) WritePlacementEntry(w, doc, e);
  w.EndObject();
}

// A layout: params (written by `write_params`; null when absent), in_src
// and in_dst always (null when absent), out_src, out_dst and `out_names`
// (null: none) when present.
template <typename WriteParams>
void WriteLayoutWith(Writer& w, const Document& doc, const Layout& layout, WriteParams write_params,
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
void WriteLayout(Writer& w, const Document& doc, const Layout& layout) {
  WriteLayoutWith(
      w, doc, layout, [&](const PlacementMap& params) { WritePlacementMap(w, doc, params); }, layout.out_names().get());
}

// An owner's layout as the result prints it: less the params claims dropped,
// with normalized out_names.
void WriteOwnedLayout(Writer& w, const Document& doc, const Owner& entry, const Declarations& declared) {
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

void WriteMemory(Writer& w, const std::optional<MemoryReport>& memory) {
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

void WriteParamIds(Writer& w, const Document& doc, absl::Span<const ParamId> ids) {
  std::vector<std::string_view> names;
  names.reserve(ids.size());
  for (ParamId p : ids) names.push_back(doc.Name(doc.parameters[p].id));
  std::sort(names.begin(), names.end());
  w.StartArray();
  for (std::string_view n : names) String(w, n);
  w.EndArray();
}

}  // namespace

std::vector<std::string> OwnedNames(const Result& result) {
  std::vector<std::string> names;
  if (!result.owned) return names;
  names.reserve(result.owned->owned_params.size());
  for (const auto& chunk : result.owned->owned_params.chunks) {
    for (const ModuleTree::ParamPath& p : chunk) names.push_back(result.tree->FullName(p));
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string ResultToJson(const Result& result) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
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
  }
  w.EndArray();
  if (result.owned) {
    const Document& doc = *result.document;
    const ModuleTree& tree = *result.tree;
    const Owned& owned = *result.owned;
    Key(w, "owned");
    w.StartObject();
    Key(w, "specs");
    w.StartObject();
    for (const Owner& e : owned.entries) {
      Key(w, tree.fqn(e.path));
      WriteOwnedLayout(w, doc, e, owned.declared);
    }
    w.EndObject();
    Key(w, "parallel");
    w.StartObject();
    for (const Owner& e : owned.entries) {
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
    }
    w.EndObject();
    Key(w, "owned_names");
    w.StartArray();
    for (const std::string& n : OwnedNames(result)) String(w, n);
    w.EndArray();
    Key(w, "expected");
    WriteParamIds(w, doc, owned.expected);
    Key(w, "required");
    w.StartObject();
    for (const Owner& e : owned.entries) {
      Key(w, tree.fqn(e.path));
      WriteParamIds(w, doc, owned.declared.Required(e));
    }
    w.EndObject();
    Key(w, "aliases");
    w.StartArray();
    for (const auto& [canonical, alias] : owned.aliases) {
      w.StartArray();
      String(w, canonical);
      String(w, alias);
      w.EndArray();
    }
    w.EndArray();
    w.EndObject();
  }
  if (result.planned) {
    const Document& doc = *result.document;
    Key(w, "plan");
    w.StartObject();
    Key(w, "modules");
    w.StartObject();
    for (const FqnLayout& e : result.planned->entries) {
      Key(w, doc.Name(e.fqn));
      WriteLayout(w, doc, e.layout);
    }
    w.EndObject();
    w.EndObject();
    Key(w, "provenance");
    w.StartObject();
    for (size_t i = 0; i < result.planned->entries.size(); ++i) {
      Key(w, doc.Name(result.planned->entries[i].fqn));
      w.StartArray();
      for (const std::string& p : result.planned->provenance[i]) String(w, p);
      w.EndArray();
    }
    w.EndObject();
    WriteMemory(w, result.planned->memory);
    WriteCommunication(w, doc, result.planned->communication);
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace shardplan
