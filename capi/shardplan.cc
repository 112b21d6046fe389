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
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/engine.h"
#include "core/builder.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

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
  // Spelled out on the first request for them (a check does not pay for
  // what few callers read): what sp_owner and sp_owned_parameter point into.
  struct Owner {
    std::string fqn;
    std::string_view kind;  // a string literal
    size_t native_request;
    std::optional<std::string> native_pattern;
    size_t layout;  // in owner_layouts
    std::string pointer;
  };
  struct Parameter {
    std::string name;
    std::string canonical;
    size_t owner;
    size_t placements;  // in placements
  };
  std::once_flag owners_once;
  std::vector<Owner> owners;
  std::vector<std::string> owner_layouts;
  std::once_flag parameters_once;
  std::vector<Parameter> parameters;
  std::vector<std::string> placements;  // each distinct JSON object once
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

// Reads a string argument that must be present and valid UTF-8; returns an
// error or null.
sp_error* Text(sp_str s, const char* name, std::string* out) {
  std::string_view view;
  if (!ReadStr(s, &view)) return NullArgument(name);
  if (!shardplan::IsValidUtf8(view)) return InvalidArgument(absl::StrCat("argument '", name, "' is not valid UTF-8"));
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

sp_severity SeverityOf(shardplan::Severity severity) {
  switch (severity) {
    case shardplan::Severity::kError: return SP_SEVERITY_ERROR;
    case shardplan::Severity::kWarning: return SP_SEVERITY_WARNING;
    case shardplan::Severity::kInfo: return SP_SEVERITY_INFO;
  }
  return SP_SEVERITY_ERROR;
}

// Diagnostic `index` of `result`, or the out-of-range error.
sp_error* DiagnosticAt(const sp_result& result, size_t index, const shardplan::Diagnostic** out) {
  const std::vector<shardplan::Diagnostic>& all = result.result.diagnostics;
  if (index >= all.size()) {
    return Error(SP_ERROR_OUT_OF_RANGE,
                 absl::StrCat("diagnostic index ", index, " out of range (the result has ", all.size(), ")"));
  }
  *out = &all[index];
  return nullptr;
}

// The operations of `d`'s fix; none when it has no fix-it.
const std::vector<shardplan::FixOperation>& FixOf(const shardplan::Diagnostic& d) {
  static const std::vector<shardplan::FixOperation> kNone;
  return d.fix_it ? d.fix_it->fix : kNone;
}

// ---- Builder arguments ------------------------------------------------------

// The views of `strings`, for the core builder (which copies them).
std::vector<std::string_view> Views(const std::vector<std::string>& strings) {
  return std::vector<std::string_view>(strings.begin(), strings.end());
}

// A parallel spec argument, checked and copied.
struct Parallel {
  std::string binding_kind;
  std::vector<std::string> axes;
  std::vector<std::string_view> axis_views;
  shardplan::ParallelDraft draft;
};

// Reads `spec` (NULL: none, `out` stays empty).
sp_error* ReadParallel(const sp_parallel_spec* spec, std::optional<Parallel>* out) {
  if (spec == nullptr) return nullptr;
  Parallel& p = out->emplace();
  if (sp_error* e = Text(spec->binding_kind, "parallel->binding_kind", &p.binding_kind)) return e;
  if (sp_error* e = TextList(spec->axes, spec->num_axes, "parallel->axes", &p.axes)) return e;
  p.axis_views = Views(p.axes);
  p.draft = {p.binding_kind, p.axis_views};
  return nullptr;
}

const shardplan::ParallelDraft* DraftOf(const std::optional<Parallel>& parallel) {
  return parallel ? &parallel->draft : nullptr;
}

// The error of a failed core builder call; null for success. The builder
// refuses only arguments (InvalidArgument); anything else is a bug.
sp_error* FromStatus(const absl::Status& status) {
  if (status.ok()) return nullptr;
  const sp_error_code code =
      status.code() == absl::StatusCode::kInvalidArgument ? SP_ERROR_INVALID_ARGUMENT : SP_ERROR_INTERNAL;
  return Error(code, std::string(status.message()));
}

}  // namespace

struct sp_layout {
  shardplan::LayoutDraft draft;
};

struct sp_builder {
  shardplan::DocumentBuilder builder;
  std::string json;  // sp_builder_to_json's text
};

namespace {

// The limits `options` give (NULL: the defaults).
sp_error* ReadLimits(const sp_parse_options* options, shardplan::Limits* out) {
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
  *out = limits;
  return nullptr;
}

// A document handle for a parsed or built document.
sp_document* NewDocument(shardplan::ParsedDocument parsed) {
  auto document = std::make_unique<sp_document>();
  if (parsed.error) {
    document->error = std::move(parsed.error);
  } else {
    document->document = std::move(parsed.document);
  }
  return document.release();
}

sp_error* Parse(std::string_view json, const sp_parse_options* options, sp_document** out_document) {
  shardplan::Limits limits;
  if (sp_error* e = ReadLimits(options, &limits)) return e;
  *out_document = NewDocument(shardplan::Parse(json, limits));
  return nullptr;
}

// The layout map a port argument names, or an error. A C caller may pass
// any int as an sp_port; reading its bytes as an int (not as the enum, whose
// out-of-range values C++ does not allow) keeps that defined.
sp_error* PortIndex(const sp_port& port, shardplan::LayoutDraft::Map* map) {
  using Draft = shardplan::LayoutDraft;
  constexpr auto same = [](sp_port port, Draft::Map map) { return static_cast<int>(port) == static_cast<int>(map); };
  static_assert(same(SP_PORT_PARAMS, Draft::kParams) && same(SP_PORT_IN_SRC, Draft::kInSrc) &&
                same(SP_PORT_IN_DST, Draft::kInDst) && same(SP_PORT_OUT_SRC, Draft::kOutSrc) &&
                same(SP_PORT_OUT_DST, Draft::kOutDst) && Draft::kMaps == 5);
  int raw = 0;
  static_assert(sizeof raw == sizeof port);
  std::memcpy(&raw, &port, sizeof raw);
  if (raw < 0 || static_cast<size_t>(raw) >= Draft::kMaps) {
    return InvalidArgument(absl::StrCat("unknown port ", raw));
  }
  *map = static_cast<Draft::Map>(raw);
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
      result->result = shardplan::InvalidDocumentResult(*document->error);
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

// The owners of `result`, spelled out once.
const std::vector<sp_result::Owner>& OwnersOf(const sp_result* result) {
  auto* r = const_cast<sp_result*>(result);  // the cache only
  // Spelled into locals and moved in last: if memory runs out, call_once
  // rethrows and a later call starts over from nothing.
  std::call_once(r->owners_once, [r] {
    const std::optional<shardplan::OwnersView> view = shardplan::OwnersOf(r->result);
    if (!view) return;
    shardplan::OwnerLayouts layouts = view->Layouts();
    std::vector<sp_result::Owner> owners;
    owners.reserve(view->size());
    for (size_t i = 0; i < view->size(); ++i) {
      shardplan::OwnerView o = view->owner(i);
      sp_result::Owner& out = owners.emplace_back();
      out.fqn = std::string(o.fqn);
      for (std::string_view kind : {"model", "family", "native"}) {
        if (kind == o.kind) out.kind = kind;
      }
      out.native_request = o.native_request.value_or(SIZE_MAX);
      if (o.native_pattern_index) out.native_pattern = std::string(o.native_pattern);
      out.layout = layouts.of_owner[i];
      out.pointer = std::move(o.pointer);
    }
    r->owner_layouts = std::move(layouts.texts);
    r->owners = std::move(owners);
  });
  return result->owners;
}

// The placements of one parameter as a compact JSON object, spelled as the
// result spells a layout entry's.
std::string PlacementsJson(const std::vector<std::pair<std::string_view, std::string>>& placements) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> json(buffer);
  json.StartObject();
  for (const auto& [axis, placement] : placements) {
    json.Key(axis.data(), static_cast<rapidjson::SizeType>(axis.size()));
    json.String(placement.data(), static_cast<rapidjson::SizeType>(placement.size()));
  }
  json.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

// The owned parameters of `result`, spelled out once.
const std::vector<sp_result::Parameter>& ParametersOf(const sp_result* result) {
  auto* r = const_cast<sp_result*>(result);  // the cache only
  std::call_once(r->parameters_once, [r] {  // as OwnersOf's: locals, moved in last
    const std::optional<shardplan::OwnedParametersView> view = shardplan::OwnedParametersOf(r->result);
    if (!view) return;
    absl::flat_hash_map<std::string, size_t> index;  // JSON -> its index in `placements`
    std::vector<std::string> placements;
    std::vector<sp_result::Parameter> parameters;
    parameters.reserve(view->size());
    for (size_t i = 0; i < view->size(); ++i) {
      shardplan::OwnedParameterView p = view->parameter(i);
      auto [it, added] = index.try_emplace(PlacementsJson(p.placements), placements.size());
      if (added) placements.push_back(it->first);
      parameters.push_back({std::move(p.name), std::move(p.canonical), p.owner, it->second});
    }
    r->placements = std::move(placements);
    r->parameters = std::move(parameters);
  });
  return result->parameters;
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
    const shardplan::Diagnostic* found = nullptr;
    if (sp_error* e = DiagnosticAt(*result, index, &found)) return e;
    const shardplan::Diagnostic& d = *found;
    sp_diagnostic out;
    out.code = OutStr(d.code);
    out.severity = SeverityOf(d.severity);
    out.message = OutStr(d.message);
    out.fqn = OutStr(d.fqn);
    out.parameter = OutStr(d.parameter);
    out.pointer = OutStr(d.pointer);
    *out_diagnostic = out;
    return nullptr;
  });
}

sp_error* sp_result_diagnostic_help(const sp_result* result, size_t index, sp_str* out_help) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(result);
    SP_REQUIRE(out_help);
    const shardplan::Diagnostic* d = nullptr;
    if (sp_error* e = DiagnosticAt(*result, index, &d)) return e;
    *out_help = d->fix_it ? OutStr(d->fix_it->help) : sp_str{nullptr, 0};
    return nullptr;
  });
}

sp_error* sp_result_diagnostic_fix_count(const sp_result* result, size_t index, size_t* out_count) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(result);
    SP_REQUIRE(out_count);
    const shardplan::Diagnostic* d = nullptr;
    if (sp_error* e = DiagnosticAt(*result, index, &d)) return e;
    *out_count = FixOf(*d).size();
    return nullptr;
  });
}

sp_error* sp_result_diagnostic_fix(const sp_result* result, size_t index, size_t operation,
                                   sp_fix_operation* out_operation) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(result);
    SP_REQUIRE(out_operation);
    const shardplan::Diagnostic* d = nullptr;
    if (sp_error* e = DiagnosticAt(*result, index, &d)) return e;
    const std::vector<shardplan::FixOperation>& fix = FixOf(*d);
    if (operation >= fix.size()) {
      return Error(SP_ERROR_OUT_OF_RANGE, absl::StrCat("fix operation ", operation, " out of range (diagnostic ", index,
                                                       "'s fix has ", fix.size(), ")"));
    }
    const shardplan::FixOperation& op = fix[operation];
    *out_operation = {OutStr(op.op), OutStr(op.path), OutStr(op.from), OutStr(op.value)};
    return nullptr;
  });
}

sp_error* sp_result_group_count(const sp_result* result, size_t* out_count) {
  SP_REQUIRE(result);
  SP_REQUIRE(out_count);
  *out_count = result->result.groups.size();
  return nullptr;
}

sp_error* sp_result_group(const sp_result* result, size_t index, sp_diagnostic_group* out_group) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(result);
    SP_REQUIRE(out_group);
    const std::vector<shardplan::DiagnosticGroup>& groups = result->result.groups;
    if (index >= groups.size()) {
      return Error(SP_ERROR_OUT_OF_RANGE,
                   absl::StrCat("group index ", index, " out of range (the result has ", groups.size(), ")"));
    }
    const shardplan::DiagnosticGroup& g = groups[index];
    *out_group = {OutStr(g.code), SeverityOf(g.severity), OutStr(g.pointer), g.count, g.listed.data(), g.listed.size()};
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

sp_error* sp_result_training(const sp_result* result, sp_training* out_training, int* out_present) {
  SP_REQUIRE(result);
  SP_REQUIRE(out_training);
  SP_REQUIRE(out_present);
  const std::optional<shardplan::TrainingView> view = shardplan::TrainingOf(result->result);
  if (!view) {
    *out_present = 0;
    return nullptr;
  }
  const shardplan::TrainingReport& t = *view->report;
  const shardplan::TrainingBreakdown& w = t.worst;
  sp_training out;
  out.worst_device = w.device;
  out.worst_coordinates = w.coordinates.data();
  out.num_axes = w.coordinates.size();
  out.params = w.params;
  out.grads = w.grads;
  out.master = w.master;
  out.optimizer = w.optimizer;
  out.gathered = w.gathered;
  out.activations = w.activations;
  out.total = w.total;
  out.max_total_bytes = t.max_total_bytes;
  out.min_total_bytes = t.min_total_bytes;
  out.mean_total_bytes = t.mean_total_bytes;
  out.per_device_total_bytes = t.per_device_total_bytes ? t.per_device_total_bytes->data() : nullptr;
  out.num_devices_listed = t.per_device_total_bytes ? t.per_device_total_bytes->size() : 0;
  *out_training = out;
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

sp_error* sp_result_owner_count(const sp_result* result, size_t* out_count) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(result);
    SP_REQUIRE(out_count);
    *out_count = OwnersOf(result).size();
    return nullptr;
  });
}

sp_error* sp_result_owner(const sp_result* result, size_t index, sp_owner* out_owner) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(result);
    SP_REQUIRE(out_owner);
    const std::vector<sp_result::Owner>& owners = OwnersOf(result);
    if (index >= owners.size()) return OutOfRange("owner", index, owners.size());
    const sp_result::Owner& o = owners[index];
    *out_owner = {OutStr(o.fqn),
                  {o.kind.data(), o.kind.size()},
                  o.native_request,
                  OutStr(o.native_pattern),
                  OutStr(result->owner_layouts[o.layout]),
                  OutStr(o.pointer)};
    return nullptr;
  });
}

sp_error* sp_result_owned_parameter_count(const sp_result* result, size_t* out_count) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(result);
    SP_REQUIRE(out_count);
    *out_count = ParametersOf(result).size();
    return nullptr;
  });
}

sp_error* sp_result_owned_parameter(const sp_result* result, size_t index, sp_owned_parameter* out_parameter) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(result);
    SP_REQUIRE(out_parameter);
    const std::vector<sp_result::Parameter>& parameters = ParametersOf(result);
    if (index >= parameters.size()) return OutOfRange("owned parameter", index, parameters.size());
    const sp_result::Parameter& p = parameters[index];
    *out_parameter = {OutStr(p.name), OutStr(p.canonical), p.owner, OutStr(result->placements[p.placements])};
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
  shardplan::LayoutDraft::Map map{};
  if (sp_error* e = PortIndex(port, &map)) return e;
  layout->draft.Declare(map);
  return nullptr;
}

sp_error* sp_layout_add_entry(sp_layout* layout, sp_port port, sp_str name) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(layout);
    shardplan::LayoutDraft::Map map{};
    if (sp_error* e = PortIndex(port, &map)) return e;
    SP_TEXT(entry, name);
    layout->draft.AddEntry(map, entry);
    return nullptr;
  });
}

sp_error* sp_layout_set_placement(sp_layout* layout, sp_port port, sp_str name, sp_str axis, sp_str placement) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(layout);
    shardplan::LayoutDraft::Map map{};
    if (sp_error* e = PortIndex(port, &map)) return e;
    SP_TEXT(entry, name);
    SP_TEXT(axis_name, axis);
    SP_TEXT(spelling, placement);
    return FromStatus(layout->draft.Place(map, entry, axis_name, spelling));
  });
}

sp_error* sp_layout_set_out_names(sp_layout* layout, const sp_str* names, size_t count) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(layout);
    std::vector<std::string> list;
    if (sp_error* e = TextList(names, count, "names", &list)) return e;
    layout->draft.SetOutNames(std::move(list));
    return nullptr;
  });
}

sp_error* sp_layout_set_legacy_field(sp_layout* layout, sp_str field) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(layout);
    SP_TEXT(name, field);
    return FromStatus(layout->draft.SetLegacyField(name));
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
    return FromStatus(builder->builder.AddAxis(axis, size));
  });
}

sp_error* sp_builder_add_parameter(sp_builder* builder, sp_str id, const int64_t* shape, size_t rank,
                                   sp_str dtype) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_TEXT(param_id, id);
    SP_TEXT(dtype_name, dtype);
    if (shape == nullptr && rank > 0) return NullArgument("shape");
    std::optional<absl::Span<const int64_t>> dims;
    if (shape != nullptr) dims = absl::MakeConstSpan(shape, rank);
    return FromStatus(builder->builder.AddParameter(param_id, dims, dtype_name));
  });
}

sp_error* sp_builder_set_parameter_blocks(sp_builder* builder, sp_str id, const int64_t* blocks, size_t rank) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_TEXT(param_id, id);
    if (blocks == nullptr && rank > 0) return NullArgument("blocks");
    return FromStatus(builder->builder.SetParameterBlocks(param_id, absl::MakeConstSpan(blocks, rank)));
  });
}

sp_error* sp_builder_add_module(sp_builder* builder, sp_str id, sp_str type) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_TEXT(module_id, id);
    SP_TEXT(type_name, type);
    return FromStatus(builder->builder.AddModule(module_id, type_name));
  });
}

sp_error* sp_builder_add_forward_arg(sp_builder* builder, sp_str module, sp_str name) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_TEXT(module_id, module);
    SP_TEXT(arg, name);
    return FromStatus(builder->builder.AddForwardArg(module_id, arg));
  });
}

sp_error* sp_builder_add_child(sp_builder* builder, sp_str module, sp_str name, sp_str child) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_TEXT(module_id, module);
    SP_TEXT(child_name, name);
    SP_TEXT(child_id, child);
    return FromStatus(builder->builder.AddChild(module_id, child_name, child_id));
  });
}

sp_error* sp_builder_add_module_param(sp_builder* builder, sp_str module, sp_str name, sp_str parameter) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_TEXT(module_id, module);
    SP_TEXT(param_name, name);
    SP_TEXT(param_id, parameter);
    return FromStatus(builder->builder.AddModuleParam(module_id, param_name, param_id));
  });
}

sp_error* sp_builder_set_module_parallel(sp_builder* builder, sp_str module, const sp_parallel_spec* parallel) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_TEXT(module_id, module);
    std::optional<Parallel> spec;
    if (sp_error* e = ReadParallel(parallel, &spec)) return e;
    return FromStatus(builder->builder.SetModuleParallel(module_id, DraftOf(spec)));
  });
}

sp_error* sp_builder_set_family(sp_builder* builder, sp_str module, int parallel, const sp_layout* sharding) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_TEXT(module_id, module);
    return FromStatus(
        builder->builder.SetFamily(module_id, parallel != 0, sharding != nullptr ? &sharding->draft : nullptr));
  });
}

sp_error* sp_builder_set_family_cached(sp_builder* builder, sp_str module, const sp_layout* sharding,
                                       const sp_parallel_spec* parallel) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_REQUIRE(sharding);
    SP_TEXT(module_id, module);
    std::optional<Parallel> spec;
    if (sp_error* e = ReadParallel(parallel, &spec)) return e;
    return FromStatus(builder->builder.SetFamilyCached(module_id, sharding->draft, DraftOf(spec)));
  });
}

sp_error* sp_builder_set_root(sp_builder* builder, sp_str module) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_TEXT(module_id, module);
    builder->builder.SetRoot(module_id);
    return nullptr;
  });
}

sp_error* sp_builder_add_provider(sp_builder* builder, sp_str fqn, const sp_layout* layout) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_REQUIRE(layout);
    SP_TEXT(path, fqn);
    return FromStatus(builder->builder.AddProvider(path, layout->draft));
  });
}

sp_error* sp_builder_add_native(sp_builder* builder, const sp_str* globs, size_t num_globs,
                                const sp_layout* sharding, const sp_parallel_spec* parallel) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_REQUIRE(sharding);
    std::vector<std::string> match;
    if (sp_error* e = TextList(globs, num_globs, "globs", &match)) return e;
    std::optional<Parallel> spec;
    if (sp_error* e = ReadParallel(parallel, &spec)) return e;
    return FromStatus(builder->builder.AddNative(Views(match), sharding->draft, DraftOf(spec)));
  });
}

sp_error* sp_builder_declare_plan(sp_builder* builder) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    return FromStatus(builder->builder.DeclarePlan());
  });
}

sp_error* sp_builder_add_plan_entry(sp_builder* builder, sp_str fqn, const sp_layout* layout) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_REQUIRE(layout);
    SP_TEXT(path, fqn);
    return FromStatus(builder->builder.AddPlanEntry(path, layout->draft));
  });
}

sp_error* sp_builder_add_template(sp_builder* builder, sp_str axis, sp_str prefix, size_t* out_index) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_REQUIRE(out_index);
    SP_TEXT(axis_name, axis);
    SP_TEXT(prefix_fqn, prefix);
    absl::StatusOr<size_t> index = builder->builder.AddTemplate(axis_name, prefix_fqn);
    if (!index.ok()) return FromStatus(index.status());
    *out_index = *index;
    return nullptr;
  });
}

sp_error* sp_builder_add_template_rule(sp_builder* builder, size_t template_index, sp_str pattern, sp_str style) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_TEXT(rule_pattern, pattern);
    SP_TEXT(style_name, style);
    return FromStatus(builder->builder.AddTemplateRule(template_index, rule_pattern, style_name));
  });
}

sp_error* sp_builder_add_override(sp_builder* builder, sp_str fqn, const sp_layout* layout) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_REQUIRE(layout);
    SP_TEXT(path, fqn);
    return FromStatus(builder->builder.AddOverride(path, layout->draft));
  });
}

sp_error* sp_builder_set_training(sp_builder* builder, sp_str json) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_TEXT(text, json);
    return FromStatus(builder->builder.SetTraining(text));
  });
}

sp_error* sp_builder_set_pipeline(sp_builder* builder, sp_str prefix) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_TEXT(prefix_fqn, prefix);
    return FromStatus(builder->builder.SetPipeline(prefix_fqn));
  });
}

sp_error* sp_builder_add_pipeline_module(sp_builder* builder, sp_str module, const sp_str* inputs, size_t num_inputs,
                                         const sp_str* outputs, size_t num_outputs) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_TEXT(module_name, module);
    std::vector<std::string> takes, gives;
    if (sp_error* e = TextList(inputs, num_inputs, "inputs", &takes)) return e;
    if (sp_error* e = TextList(outputs, num_outputs, "outputs", &gives)) return e;
    return FromStatus(builder->builder.AddPipelineModule(module_name, Views(takes), Views(gives)));
  });
}

sp_error* sp_builder_to_json(sp_builder* builder, sp_str* out_json) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_REQUIRE(out_json);
    builder->json = builder->builder.ToJson();
    *out_json = OutStr(builder->json);
    return nullptr;
  });
}

sp_error* sp_builder_build(const sp_builder* builder, const sp_parse_options* options, sp_document** out_document) {
  return Guard([&]() -> sp_error* {
    SP_REQUIRE(builder);
    SP_REQUIRE(out_document);
    shardplan::Limits limits;
    if (sp_error* e = ReadLimits(options, &limits)) return e;
    *out_document = NewDocument(builder->builder.Build(limits));
    return nullptr;
  });
}

}  // extern "C"
