// Fuzz target (e): JSON pointers round trip. The input gives up to four
// names (separated by NUL bytes): a mesh axis, a parameter slot, a
// parameter the provider names that does not exist, and the FQN of a
// provider for a module that does not exist. Each name escaped as a pointer
// token must name itself in an object (through the RFC 6901 resolver of
// tests/support), and the document built with them must get diagnostics
// whose pointers name the very declarations at fault.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/engine.h"
#include "core/text/json_pointer.h"
#include "fuzz/fuzz_check.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "tests/support/resolve_pointer.h"

namespace {

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

void Key(Writer& w, std::string_view key) { w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size())); }
void String(Writer& w, std::string_view s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); }

// A one-entry placement map {name: {axis: placement}}.
void Entry(Writer& w, std::string_view name, std::string_view axis, std::string_view placement) {
  Key(w, name);
  w.StartObject();
  Key(w, axis);
  String(w, placement);
  w.EndObject();
}

// Root module "m" with parameter slot `slot` -> identity "p"; a root
// provider placing `slot` and `ghost_param`; a provider for `ghost_fqn`.
std::string TestDocument(std::string_view axis, std::string_view slot, std::string_view ghost_param,
                     std::string_view ghost_fqn) {
  rapidjson::StringBuffer buffer;
  Writer w(buffer);
  w.StartObject();
  Key(w, "schema");
  String(w, "shardplan.v1");
  Key(w, "mesh");
  w.StartObject();
  Key(w, axis);
  w.Int(2);
  w.EndObject();
  Key(w, "parameters");
  w.StartObject();
  Key(w, "p");
  w.StartObject();
  Key(w, "shape");
  w.StartArray();
  w.Int(4);
  w.EndArray();
  w.EndObject();
  w.EndObject();
  Key(w, "modules");
  w.StartObject();
  Key(w, "m");
  w.StartObject();
  Key(w, "params");
  w.StartObject();
  Key(w, slot);
  String(w, "p");
  w.EndObject();
  w.EndObject();
  w.EndObject();
  Key(w, "root");
  String(w, "m");
  Key(w, "providers");
  w.StartObject();
  Key(w, "sharding");
  w.StartObject();
  for (std::string_view fqn : {std::string_view(), ghost_fqn}) {
    Key(w, fqn);
    w.StartObject();
    Key(w, "params");
    w.StartObject();
    Entry(w, slot, axis, "S(0)");
    if (ghost_param != slot) Entry(w, ghost_param, axis, "R");
    w.EndObject();
    Key(w, "in_src");
    w.StartObject();
    w.EndObject();
    Key(w, "in_dst");
    w.StartObject();
    w.EndObject();
    w.EndObject();
  }
  w.EndObject();
  w.EndObject();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardplan;
  std::vector<std::string> names = {"tp", "w", "x", "f"};
  std::string_view input(reinterpret_cast<const char*>(data), size);
  for (size_t i = 0; i < names.size() && !input.empty(); ++i) {
    const size_t nul = input.find('\0');
    names[i] = std::string(input.substr(0, nul));
    input = nul == std::string_view::npos ? std::string_view() : input.substr(nul + 1);
  }

  rapidjson::Document object(rapidjson::kObjectType);
  for (const std::string& name : names) {
    rapidjson::Value key(name.data(), static_cast<rapidjson::SizeType>(name.size()), object.GetAllocator());
    if (object.FindMember(key) == object.MemberEnd()) {
      object.AddMember(key, rapidjson::Value(object.MemberCount()), object.GetAllocator());
    }
  }
  for (const std::string& name : names) {
    const rapidjson::Value key(rapidjson::StringRef(name.data(), name.size()));
    const std::string pointer = "/" + JsonPointerToken(name);
    FUZZ_CHECK(ResolvePointer(object, pointer) == &object.FindMember(key)->value, "'%s' does not name '%s'",
               pointer.c_str(), name.c_str());
  }

  const std::string& ghost_fqn = names[3];
  const std::string text = TestDocument(names[0], names[1], names[2], ghost_fqn);
  rapidjson::Document dom;
  dom.Parse(text.data(), text.size());
  FUZZ_CHECK(!dom.HasParseError(), "the test document is malformed: %s", text.c_str());
  CheckOptions options;
  options.threads = 1;
  absl::StatusOr<Result> result = Check(text, options);
  FUZZ_CHECK(result.ok(), "the engine refused the call");
  bool invalid = false, ghost_reported = false;
  const rapidjson::Value key(rapidjson::StringRef(ghost_fqn.data(), ghost_fqn.size()));
  const rapidjson::Value* ghost = &dom["providers"]["sharding"].FindMember(key)->value;
  for (const Diagnostic& d : result->diagnostics) {
    invalid |= d.code == "invalid-document";
    if (!d.pointer || d.pointer->empty()) continue;
    const rapidjson::Value* named = ResolvePointer(dom, *d.pointer);
    FUZZ_CHECK(named != nullptr, "[%s] pointer '%s' names nothing in %s", d.code.c_str(), d.pointer->c_str(),
               text.c_str());
    if (d.code == "unknown-module") ghost_reported |= named == ghost;
  }
  // The root's FQN is "", which exists: any other FQN names no module.
  if (!invalid && !ghost_fqn.empty()) {
    FUZZ_CHECK(ghost_reported, "no unknown-module pointing at provider '%s' in %s", ghost_fqn.c_str(), text.c_str());
  }
  return 0;
}
