// The C ABI over the engine (capi/include/shardplan/shardplan.h). Every
// exported function catches every exception: std::bad_alloc becomes
// SP_ERROR_OUT_OF_MEMORY, anything else SP_ERROR_INTERNAL.
#include "shardplan/shardplan.h"

#include <array>
#include <climits>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/engine.h"
#include "core/model/placement.h"
#include "rapidjson/encodings.h"
#include "rapidjson/memorystream.h"
#include "rapidjson/prettywriter.h"
#include "rapidjson/stringbuffer.h"

struct sp_error {
  sp_error_code code;
  std::string message;
};

struct sp_document {
  std::shared_ptr<const shardplan::Document> document;  // set when valid
  std::optional<shardplan::Diagnostic> error;           // set when malformed
};

struct sp_result {
  shardplan::Result result;
  std::once_flag json_once;
  std::string json;
  // Spelled out once when planned: what sp_plan_entry and sp_communication
  // point into (NUL-terminated, as the header promises).
  std::vector<std::array<std::string, 2>> entries;  // per plan entry: FQN, provenance
  std::vector<std::array<std::string, 6>> records;  // per record: FQN, port, axis, from, to, collective
  std::optional<shardplan::MemoryReport> memory;
};

namespace {

// Handed out when even an error cannot be allocated; never freed.
sp_error kOutOfMemory{SP_ERROR_OUT_OF_MEMORY, "out of memory"};

sp_error* Error(sp_error_code code, std::string message) {
  try {
    return new sp_error{code, std::move(message)};
  } catch (const std::bad_alloc&) {
    return &kOutOfMemory;
  }
}

sp_error* NullArgument(const char* name) {
  return Error(SP_ERROR_NULL_ARGUMENT, absl::StrCat("argument '", name, "' must not be NULL"));
}

sp_error* InvalidArgument(std::string message) { return Error(SP_ERROR_INVALID_ARGUMENT, std::move(message)); }

// Runs `body` (returning sp_error*), turning exceptions into errors.
template <typename Body>
sp_error* Guard(Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return &kOutOfMemory;
  } catch (const std::exception& e) {
    return Error(SP_ERROR_INTERNAL, absl::StrCat("internal error: ", e.what()));
  } catch (...) {
    return Error(SP_ERROR_INTERNAL, "internal error: unknown exception");
  }
}

#define SP_REQUIRE(arg) \
  if ((arg) == nullptr) return NullArgument(#arg)

// An input string; NULL data is allowed only with size 0.
bool ReadStr(sp_str s, std::string_view* out) {
  if (s.data == nullptr) {
    *out = {};
    return s.size == 0;
  }
  *out = std::string_view(s.data, s.size);
  return true;
}

bool ValidUtf8(std::string_view text) {
  rapidjson::MemoryStream stream(text.data(), text.size());
  while (stream.Tell() < text.size()) {
    struct Sink {
      void Put(char) {}
    } sink;
    if (!rapidjson::UTF8<>::Validate(stream, sink)) return false;
  }
  return true;
}

// Reads a string argument that must be present and valid UTF-8; returns an
// error or null.
sp_error* Text(sp_str s, const char* name, std::string* out) {
  std::string_view view;
  if (!ReadStr(s, &view)) return NullArgument(name);
  if (!ValidUtf8(view)) return InvalidArgument(absl::StrCat("argument '", name, "' is not valid UTF-8"));
  out->assign(view);
  return nullptr;
}

#define SP_TEXT(var, arg)                       \
  std::string var;                              \
  if (sp_error* e = Text((arg), #arg, &var)) return e

sp_error* TextList(const sp_str* items, size_t count, const char* name, std::vector<std::string>* out) {
  if (items == nullptr && count > 0) return NullArgument(name);
  std::vector<std::string> list(count);
  for (size_t i = 0; i < count; ++i) {
    if (sp_error* e = Text(items[i], name, &list[i])) return e;
  }
  *out = std::move(list);
  return nullptr;
}

sp_str OutStr(const std::string& s) { return {s.c_str(), s.size()}; }
sp_str OutStr(const std::optional<std::string>& s) { return s ? OutStr(*s) : sp_str{nullptr, 0}; }

// ---- Builder data -----------------------------------------------------------

template <typename V>
struct Ordered {  // a JSON object with insertion-ordered, unique keys
  std::vector<std::pair<std::string, V>> items;
  std::unordered_map<std::string, size_t> index;

  V* Find(const std::string& key) {
    auto it = index.find(key);
    return it == index.end() ? nullptr : &items[it->second].second;
  }
  // Inserts `key` with a default value, or returns null when present.
  V* Insert(const std::string& key) {
    if (index.count(key) != 0) return nullptr;
    index.emplace(key, items.size());
    return &items.emplace_back(key, V{}).second;
  }
  V* FindOrInsert(const std::string& key) {
    V* v = Find(key);
    return v != nullptr ? v : Insert(key);
  }
};

using Placements = Ordered<std::string>;  // axis -> placement spelling

struct Port {
  bool declared = false;
  Ordered<Placements> entries;
};

constexpr std::array<const char*, 5> kPortNames = {"params", "in_src", "in_dst", "out_src", "out_dst"};

struct ParallelData {
  std::string binding_kind;
  std::vector<std::string> axes;
};

sp_error* ReadParallel(const sp_parallel_spec* spec, std::optional<ParallelData>* out) {
  if (spec == nullptr) {
    out->reset();
    return nullptr;
  }
  ParallelData data;
  if (sp_error* e = Text(spec->binding_kind, "parallel->binding_kind", &data.binding_kind)) return e;
  if (sp_error* e = TextList(spec->axes, spec->num_axes, "parallel->axes", &data.axes)) return e;
  *out = std::move(data);
  return nullptr;
}

}  // namespace

struct sp_layout {
  std::array<Port, 5> ports;
  std::optional<std::vector<std::string>> out_names;
};

namespace {

struct FamilyData {
  bool parallel = false;
  std::optional<sp_layout> sharding;
  bool has_cached = false;
  sp_layout cached_sharding;
  std::optional<ParallelData> cached_parallel;
};

struct ModuleData {
  std::string type;
  std::vector<std::string> forward;
  Ordered<std::string> children;
  Ordered<std::string> params;
  std::optional<ParallelData> parallel;
  std::optional<FamilyData> family;
};

struct ParameterData {
  std::optional<std::vector<int64_t>> shape;
  std::string dtype;
};

struct NativeData {
  std::vector<std::string> match;
  sp_layout sharding;
  std::optional<ParallelData> parallel;
};

}  // namespace

struct sp_builder {
  Ordered<int64_t> mesh;
  Ordered<ParameterData> parameters;
  std::optional<std::string> root;
  Ordered<ModuleData> modules;
  Ordered<sp_layout> providers;
  std::vector<NativeData> natives;
  std::optional<Ordered<sp_layout>> plan;
  std::string json;  // sp_builder_to_json's cache
};

namespace {

using Writer = rapidjson::PrettyWriter<rapidjson::StringBuffer>;

void Key(Writer& w, const std::string& s) { w.Key(s.data(), static_cast<rapidjson::SizeType>(s.size())); }
void String(Writer& w, const std::string& s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); }

void WriteStrings(Writer& w, const std::vector<std::string>& list) {
  w.StartArray();
  for (const std::string& s : list) String(w, s);
  w.EndArray();
}

void WriteParallel(Writer& w, const std::optional<ParallelData>& p) {
  if (!p) {
    w.Null();
    return;
  }
  w.StartObject();
  w.Key("binding_kind");
  String(w, p->binding_kind);
  w.Key("axes");
  WriteStrings(w, p->axes);
  w.EndObject();
}

void WriteLayout(Writer& w, const sp_layout& layout) {
  w.StartObject();
  for (size_t i = 0; i < layout.ports.size(); ++i) {
    const Port& port = layout.ports[i];
    if (!port.declared) continue;
    w.Key(kPortNames[i]);
    w.StartObject();
    for (const auto& [name, placements] : port.entries.items) {
      Key(w, name);
      w.StartObject();
      for (const auto& [axis, placement] : placements.items) {
        Key(w, axis);
        String(w, placement);
      }
      w.EndObject();
    }
    w.EndObject();
  }
  if (layout.out_names) {
    w.Key("out_names");
    WriteStrings(w, *layout.out_names);
  }
  w.EndObject();
}

void WriteLayouts(Writer& w, const Ordered<sp_layout>& layouts) {
  w.StartObject();
  for (const auto& [fqn, layout] : layouts.items) {
    Key(w, fqn);
    WriteLayout(w, layout);
  }
  w.EndObject();
}

std::string ToJson(const sp_builder& b) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.SetIndent(' ', 2);
  w.StartObject();
  w.Key("schema");
  w.String("shardplan.v1");
  w.Key("mesh");
  w.StartObject();
  for (const auto& [axis, size] : b.mesh.items) {
    Key(w, axis);
    w.Int64(size);
  }
  w.EndObject();
  w.Key("parameters");
  w.StartObject();
  for (const auto& [id, p] : b.parameters.items) {
    Key(w, id);
    w.StartObject();
    if (p.shape) {
      w.Key("shape");
      w.StartArray();
      for (int64_t d : *p.shape) w.Int64(d);
      w.EndArray();
    }
    if (!p.dtype.empty()) {
      w.Key("dtype");
      String(w, p.dtype);
    }
    w.EndObject();
  }
  w.EndObject();
  if (b.root) {
    w.Key("root");
    String(w, *b.root);
  }
  w.Key("modules");
  w.StartObject();
  for (const auto& [id, m] : b.modules.items) {
    Key(w, id);
    w.StartObject();
    if (!m.type.empty()) {
      w.Key("type");
      String(w, m.type);
    }
    w.Key("forward");
    WriteStrings(w, m.forward);
    for (const auto& [key, map] : {std::pair{"children", &m.children}, std::pair{"params", &m.params}}) {
      if (map->items.empty()) continue;
      w.Key(key);
      w.StartObject();
      for (const auto& [name, target] : map->items) {
        Key(w, name);
        String(w, target);
      }
      w.EndObject();
    }
    if (m.parallel) {
      w.Key("parallel");
      WriteParallel(w, m.parallel);
    }
    if (m.family) {
      w.Key("family");
      w.StartObject();
      w.Key("parallel");
      w.Bool(m.family->parallel);
      w.Key("sharding");
      if (m.family->sharding) {
        WriteLayout(w, *m.family->sharding);
      } else {
        w.Null();
      }
      if (m.family->has_cached) {
        w.Key("cached");
        w.StartObject();
        w.Key("sharding");
        WriteLayout(w, m.family->cached_sharding);
        w.Key("parallel");
        WriteParallel(w, m.family->cached_parallel);
        w.EndObject();
      }
      w.EndObject();
    }
    w.EndObject();
  }
  w.EndObject();
  if (!b.providers.items.empty() || !b.natives.empty()) {
    w.Key("providers");
    w.StartObject();
    w.Key("sharding");
    WriteLayouts(w, b.providers);
    w.Key("native");
    w.StartArray();
    for (const NativeData& n : b.natives) {
      w.StartObject();
      w.Key("match");
      WriteStrings(w, n.match);
      w.Key("sharding");
      WriteLayout(w, n.sharding);
      w.Key("parallel");
      WriteParallel(w, n.parallel);
      w.EndObject();
    }
    w.EndArray();
    w.EndObject();
  }
  if (b.plan) {
    w.Key("plan");
    w.StartObject();
    w.Key("modules");
    WriteLayouts(w, *b.plan);
    w.EndObject();
  }
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

sp_error* Parse(std::string_view json, const sp_parse_options* options, sp_document** out_document) {
  shardplan::Limits limits;
  if (options != nullptr) {
    if (options->max_paths != 0) limits.max_paths = options->max_paths;
    if (options->max_fqn_bytes != 0) limits.max_fqn_bytes = options->max_fqn_bytes;
    if (options->max_json_depth != 0) {
      if (options->max_json_depth > static_cast<uint32_t>(INT_MAX)) {
        return InvalidArgument("max_json_depth is too large");
      }
      limits.max_json_depth = static_cast<int>(options->max_json_depth);
    }
  }
  shardplan::ParsedDocument parsed = shardplan::Parse(json, limits);
  auto document = std::make_unique<sp_document>();
  if (parsed.error) {
    document->error = std::move(parsed.error);
  } else {
    document->document = std::move(parsed.document);
  }
  *out_document = document.release();
  return nullptr;
}

ModuleData* FindModule(sp_builder* builder, const std::string& id, sp_error** error) {
  ModuleData* m = builder->modules.Find(id);
  if (m == nullptr) *error = InvalidArgument(absl::StrCat("unknown module id '", id, "' (add it first)"));
  return m;
}

sp_error* Duplicate(std::string_view what, const std::string& name) {
  return InvalidArgument(absl::StrCat("duplicate ", what, " '", name, "'"));
}

// The index of a port argument, or an error. A C caller may pass any int as
// an sp_port; reading its bytes as an int (not as the enum, whose
// out-of-range values C++ does not allow) keeps that defined.
sp_error* PortIndex(const sp_port& port, size_t* index) {
  int raw = 0;
  static_assert(sizeof raw == sizeof port);
  std::memcpy(&raw, &port, sizeof raw);
  if (raw < 0 || static_cast<size_t>(raw) >= kPortNames.size()) {
    return InvalidArgument(absl::StrCat("unknown port ", raw));
  }
  *index = static_cast<size_t>(raw);
  return nullptr;
}

// sp_document_check and sp_document_plan.
sp_error* Run(const sp_document* document, const sp_check_options* options, sp_result** out_result, bool plan) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(document);
    SP_REQUIRE(out_result);
    const uint32_t threads = options == nullptr ? 0 : options->threads;
    if (threads > static_cast<uint32_t>(INT_MAX)) return InvalidArgument("threads is too large");
    auto result = std::make_unique<sp_result>();
    if (document->error) {
      result->result.diagnostics.push_back(*document->error);
    } else {
      absl::StatusOr<shardplan::Result> done =
          plan ? shardplan::PlanParsed(*document->document, static_cast<int>(threads))
               : shardplan::CheckParsed(document->document, static_cast<int>(threads));
      if (!done.ok()) return InvalidArgument(std::string(done.status().message()));
      result->result = *std::move(done);
    }
    if (const std::optional<shardplan::PlanView> plan = shardplan::PlanOf(result->result)) {
      for (size_t i = 0; i < plan->size(); ++i) {
        const shardplan::PlanEntry e = plan->entry(i);
        result->entries.push_back({std::string(e.fqn), absl::StrJoin(*e.provenance, ", ")});
      }
      for (size_t i = 0; i < plan->communication_size(); ++i) {
        const shardplan::CommunicationRecordView r = plan->communication(i);
        result->records.push_back({std::string(r.fqn), std::string(r.port), std::string(r.axis), r.from, r.to,
                                   std::string(r.collective)});
      }
      if (const shardplan::MemoryReport* memory = plan->memory()) result->memory = *memory;
    }
    *out_result = result.release();
    return nullptr;
  });
}

sp_error* OutOfRange(std::string_view what, size_t index, size_t size) {
  return Error(SP_ERROR_OUT_OF_RANGE, absl::StrCat(what, " index ", index, " out of range (the result has ", size, ")"));
}

}  // namespace

extern "C" {

uint32_t sp_abi_version(void) { return SP_ABI_VERSION; }

const char* sp_version_string(void) {
#define SP_STR2(x) #x
#define SP_STR(x) SP_STR2(x)
  return SP_STR(SP_VERSION_MAJOR) "." SP_STR(SP_VERSION_MINOR) "." SP_STR(SP_VERSION_PATCH);
}

sp_error_code sp_error_code_of(const sp_error* error) { return error == nullptr ? SP_OK : error->code; }

const char* sp_error_message(const sp_error* error) { return error == nullptr ? "" : error->message.c_str(); }

void sp_error_delete(sp_error* error) {
  if (error != &kOutOfMemory) delete error;
}

sp_error* sp_document_parse(sp_str json, const sp_parse_options* options, sp_document** out_document) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(out_document);
    std::string_view text;
    if (!ReadStr(json, &text)) return NullArgument("json.data");
    return Parse(text, options, out_document);
  });
}

sp_error* sp_document_is_valid(const sp_document* document, int* out_valid) {
  SP_REQUIRE(document);
  SP_REQUIRE(out_valid);
  *out_valid = document->document != nullptr ? 1 : 0;
  return nullptr;
}

void sp_document_delete(sp_document* document) { delete document; }

sp_error* sp_document_check(const sp_document* document, const sp_check_options* options, sp_result** out_result) {
  return Run(document, options, out_result, /*plan=*/false);
}

sp_error* sp_document_plan(const sp_document* document, const sp_check_options* options, sp_result** out_result) {
  return Run(document, options, out_result, /*plan=*/true);
}

sp_error* sp_result_ok(const sp_result* result, int* out_ok) {
  SP_REQUIRE(result);
  SP_REQUIRE(out_ok);
  *out_ok = result->result.ok ? 1 : 0;
  return nullptr;
}

sp_error* sp_result_diagnostic_count(const sp_result* result, size_t* out_count) {
  SP_REQUIRE(result);
  SP_REQUIRE(out_count);
  *out_count = result->result.diagnostics.size();
  return nullptr;
}

sp_error* sp_result_diagnostic(const sp_result* result, size_t index, sp_diagnostic* out_diagnostic) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(result);
    SP_REQUIRE(out_diagnostic);
    const std::vector<shardplan::Diagnostic>& all = result->result.diagnostics;
    if (index >= all.size()) {
      return Error(SP_ERROR_OUT_OF_RANGE,
                   absl::StrCat("diagnostic index ", index, " out of range (the result has ", all.size(), ")"));
    }
    const shardplan::Diagnostic& d = all[index];
    sp_diagnostic out;
    out.code = OutStr(d.code);
    switch (d.severity) {
      case shardplan::Severity::kError: out.severity = SP_SEVERITY_ERROR; break;
      case shardplan::Severity::kWarning: out.severity = SP_SEVERITY_WARNING; break;
      case shardplan::Severity::kInfo: out.severity = SP_SEVERITY_INFO; break;
    }
    out.message = OutStr(d.message);
    out.fqn = OutStr(d.fqn);
    out.parameter = OutStr(d.parameter);
    out.pointer = OutStr(d.pointer);
    *out_diagnostic = out;
    return nullptr;
  });
}

sp_error* sp_result_json(const sp_result* result, sp_str* out_json) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(result);
    SP_REQUIRE(out_json);
    auto* mutable_result = const_cast<sp_result*>(result);  // the cache only
    std::call_once(mutable_result->json_once,
                   [&] { mutable_result->json = shardplan::ResultToJson(mutable_result->result); });
    *out_json = OutStr(result->json);
    return nullptr;
  });
}

void sp_result_delete(sp_result* result) { delete result; }

sp_error* sp_result_memory(const sp_result* result, sp_memory* out_memory, int* out_present) {
  SP_REQUIRE(result);
  SP_REQUIRE(out_memory);
  SP_REQUIRE(out_present);
  if (!result->memory) {
    *out_present = 0;
    return nullptr;
  }
  const shardplan::MemoryReport& m = *result->memory;
  sp_memory out;
  out.devices = m.devices;
  out.unsharded_bytes = m.unsharded_bytes;
  out.max_bytes = m.max_bytes;
  out.min_bytes = m.min_bytes;
  out.mean_bytes = m.mean_bytes;
  out.max_device = m.max_device;
  out.per_device_bytes = m.per_device_bytes ? m.per_device_bytes->data() : nullptr;
  out.num_devices_listed = m.per_device_bytes ? m.per_device_bytes->size() : 0;
  *out_memory = out;
  *out_present = 1;
  return nullptr;
}

sp_error* sp_result_plan_entry_count(const sp_result* result, size_t* out_count) {
  SP_REQUIRE(result);
  SP_REQUIRE(out_count);
  *out_count = result->entries.size();
  return nullptr;
}

sp_error* sp_result_plan_entry(const sp_result* result, size_t index, sp_plan_entry* out_entry) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(result);
    SP_REQUIRE(out_entry);
    if (index >= result->entries.size()) return OutOfRange("plan entry", index, result->entries.size());
    *out_entry = {OutStr(result->entries[index][0]), OutStr(result->entries[index][1])};
    return nullptr;
  });
}

sp_error* sp_result_communication_count(const sp_result* result, size_t* out_count) {
  SP_REQUIRE(result);
  SP_REQUIRE(out_count);
  *out_count = result->records.size();
  return nullptr;
}

sp_error* sp_result_communication(const sp_result* result, size_t index, sp_communication* out_record) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(result);
    SP_REQUIRE(out_record);
    if (index >= result->records.size()) return OutOfRange("communication record", index, result->records.size());
    const std::array<std::string, 6>& r = result->records[index];
    *out_record = {OutStr(r[0]), OutStr(r[1]), OutStr(r[2]), OutStr(r[3]), OutStr(r[4]), OutStr(r[5])};
    return nullptr;
  });
}

// ---- Layouts ------------------------------------------------------------------

sp_error* sp_layout_create(sp_layout** out_layout) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(out_layout);
    *out_layout = new sp_layout();
    return nullptr;
  });
}

void sp_layout_delete(sp_layout* layout) { delete layout; }

sp_error* sp_layout_declare(sp_layout* layout, sp_port port) {
  SP_REQUIRE(layout);
  size_t index = 0;
  if (sp_error* e = PortIndex(port, &index)) return e;
  layout->ports[index].declared = true;
  return nullptr;
}

sp_error* sp_layout_add_entry(sp_layout* layout, sp_port port, sp_str name) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(layout);
    size_t index = 0;
    if (sp_error* e = PortIndex(port, &index)) return e;
    SP_TEXT(entry, name);
    Port& p = layout->ports[index];
    p.declared = true;
    p.entries.FindOrInsert(entry);
    return nullptr;
  });
}

sp_error* sp_layout_set_placement(sp_layout* layout, sp_port port, sp_str name, sp_str axis, sp_str placement) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(layout);
    size_t index = 0;
    if (sp_error* e = PortIndex(port, &index)) return e;
    SP_TEXT(entry, name);
    SP_TEXT(axis_name, axis);
    SP_TEXT(spelling, placement);
    if (!shardplan::ParsePlacement(spelling)) {
      return InvalidArgument(absl::StrCat("bad placement '", spelling,
                                          "' (expected S(dim), R, P or P(sum|avg|max|min|prod))"));
    }
    Port& p = layout->ports[index];
    Placements* placements = p.entries.Find(entry);
    if (placements != nullptr && placements->Find(axis_name) != nullptr) {
      return InvalidArgument(absl::StrCat("axis '", axis_name, "' is already placed for '", entry, "'"));
    }
    p.declared = true;
    if (placements == nullptr) placements = p.entries.Insert(entry);
    *placements->Insert(axis_name) = std::move(spelling);
    return nullptr;
  });
}

sp_error* sp_layout_set_out_names(sp_layout* layout, const sp_str* names, size_t count) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(layout);
    std::vector<std::string> list;
    if (sp_error* e = TextList(names, count, "names", &list)) return e;
    layout->out_names = std::move(list);
    return nullptr;
  });
}

// ---- Builder ------------------------------------------------------------------

sp_error* sp_builder_create(sp_builder** out_builder) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(out_builder);
    *out_builder = new sp_builder();
    return nullptr;
  });
}

void sp_builder_delete(sp_builder* builder) { delete builder; }

sp_error* sp_builder_add_axis(sp_builder* builder, sp_str name, int64_t size) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_TEXT(axis, name);
    if (size < 1) return InvalidArgument(absl::StrCat("mesh axis '", axis, "' must have at least 1 device"));
    int64_t* slot = builder->mesh.Insert(axis);
    if (slot == nullptr) return Duplicate("mesh axis", axis);
    *slot = size;
    return nullptr;
  });
}

sp_error* sp_builder_add_parameter(sp_builder* builder, sp_str id, const int64_t* shape, size_t rank,
                                   sp_str dtype) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_TEXT(param_id, id);
    SP_TEXT(dtype_name, dtype);
    if (shape == nullptr && rank > 0) return NullArgument("shape");
    ParameterData data;
    data.dtype = std::move(dtype_name);
    if (shape != nullptr) {
      data.shape.emplace(shape, shape + rank);
      for (int64_t d : *data.shape) {
        if (d < 0) return InvalidArgument(absl::StrCat("parameter '", param_id, "' has a negative dimension"));
      }
    }
    ParameterData* slot = builder->parameters.Insert(param_id);
    if (slot == nullptr) return Duplicate("parameter id", param_id);
    *slot = std::move(data);
    return nullptr;
  });
}

sp_error* sp_builder_add_module(sp_builder* builder, sp_str id, sp_str type) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_TEXT(module_id, id);
    SP_TEXT(type_name, type);
    ModuleData* slot = builder->modules.Insert(module_id);
    if (slot == nullptr) return Duplicate("module id", module_id);
    slot->type = std::move(type_name);
    return nullptr;
  });
}

sp_error* sp_builder_add_forward_arg(sp_builder* builder, sp_str module, sp_str name) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_TEXT(module_id, module);
    SP_TEXT(arg, name);
    sp_error* error = nullptr;
    ModuleData* m = FindModule(builder, module_id, &error);
    if (m == nullptr) return error;
    m->forward.push_back(std::move(arg));
    return nullptr;
  });
}

sp_error* sp_builder_add_child(sp_builder* builder, sp_str module, sp_str name, sp_str child) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_TEXT(module_id, module);
    SP_TEXT(child_name, name);
    SP_TEXT(child_id, child);
    sp_error* error = nullptr;
    ModuleData* m = FindModule(builder, module_id, &error);
    if (m == nullptr) return error;
    std::string* slot = m->children.Insert(child_name);
    if (slot == nullptr) return Duplicate(absl::StrCat("child name of module '", module_id, "':"), child_name);
    *slot = std::move(child_id);
    return nullptr;
  });
}

sp_error* sp_builder_add_module_param(sp_builder* builder, sp_str module, sp_str name, sp_str parameter) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_TEXT(module_id, module);
    SP_TEXT(param_name, name);
    SP_TEXT(param_id, parameter);
    sp_error* error = nullptr;
    ModuleData* m = FindModule(builder, module_id, &error);
    if (m == nullptr) return error;
    std::string* slot = m->params.Insert(param_name);
    if (slot == nullptr) {
      return Duplicate(absl::StrCat("parameter name of module '", module_id, "':"), param_name);
    }
    *slot = std::move(param_id);
    return nullptr;
  });
}

sp_error* sp_builder_set_module_parallel(sp_builder* builder, sp_str module, const sp_parallel_spec* parallel) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_TEXT(module_id, module);
    std::optional<ParallelData> spec;
    if (sp_error* e = ReadParallel(parallel, &spec)) return e;
    sp_error* error = nullptr;
    ModuleData* m = FindModule(builder, module_id, &error);
    if (m == nullptr) return error;
    m->parallel = std::move(spec);
    return nullptr;
  });
}

sp_error* sp_builder_set_family(sp_builder* builder, sp_str module, int parallel, const sp_layout* sharding) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_TEXT(module_id, module);
    sp_error* error = nullptr;
    ModuleData* m = FindModule(builder, module_id, &error);
    if (m == nullptr) return error;
    FamilyData& family = m->family ? *m->family : m->family.emplace();
    family.parallel = parallel != 0;
    if (sharding != nullptr) {
      family.sharding = *sharding;
    } else {
      family.sharding.reset();
    }
    return nullptr;
  });
}

sp_error* sp_builder_set_family_cached(sp_builder* builder, sp_str module, const sp_layout* sharding,
                                       const sp_parallel_spec* parallel) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_REQUIRE(sharding);
    SP_TEXT(module_id, module);
    std::optional<ParallelData> spec;
    if (sp_error* e = ReadParallel(parallel, &spec)) return e;
    sp_error* error = nullptr;
    ModuleData* m = FindModule(builder, module_id, &error);
    if (m == nullptr) return error;
    if (!m->family) {
      return InvalidArgument(absl::StrCat("module '", module_id, "' is not a family member (sp_builder_set_family)"));
    }
    m->family->has_cached = true;
    m->family->cached_sharding = *sharding;
    m->family->cached_parallel = std::move(spec);
    return nullptr;
  });
}

sp_error* sp_builder_set_root(sp_builder* builder, sp_str module) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_TEXT(module_id, module);
    builder->root = std::move(module_id);
    return nullptr;
  });
}

sp_error* sp_builder_add_provider(sp_builder* builder, sp_str fqn, const sp_layout* layout) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_REQUIRE(layout);
    SP_TEXT(path, fqn);
    sp_layout* slot = builder->providers.Insert(path);
    if (slot == nullptr) return Duplicate("provider FQN", path);
    *slot = *layout;
    return nullptr;
  });
}

sp_error* sp_builder_add_native(sp_builder* builder, const sp_str* globs, size_t num_globs,
                                const sp_layout* sharding, const sp_parallel_spec* parallel) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_REQUIRE(sharding);
    NativeData native;
    if (sp_error* e = TextList(globs, num_globs, "globs", &native.match)) return e;
    if (sp_error* e = ReadParallel(parallel, &native.parallel)) return e;
    native.sharding = *sharding;
    builder->natives.push_back(std::move(native));
    return nullptr;
  });
}

sp_error* sp_builder_declare_plan(sp_builder* builder) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    if (!builder->plan) builder->plan.emplace();
    return nullptr;
  });
}

sp_error* sp_builder_add_plan_entry(sp_builder* builder, sp_str fqn, const sp_layout* layout) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_REQUIRE(layout);
    SP_TEXT(path, fqn);
    if (!builder->plan) builder->plan.emplace();
    sp_layout* slot = builder->plan->Insert(path);
    if (slot == nullptr) return Duplicate("plan FQN", path);
    *slot = *layout;
    return nullptr;
  });
}

sp_error* sp_builder_to_json(sp_builder* builder, sp_str* out_json) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_REQUIRE(out_json);
    builder->json = ToJson(*builder);
    *out_json = OutStr(builder->json);
    return nullptr;
  });
}

sp_error* sp_builder_build(const sp_builder* builder, const sp_parse_options* options, sp_document** out_document) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_REQUIRE(out_document);
    return Parse(ToJson(*builder), options, out_document);
  });
}

}  // extern "C"
