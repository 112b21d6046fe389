// Parsing a shardplan.v1 document (parse.h): the entry point (the UTF-8
// check, the reader and the walk, the invalid-document diagnostic), the
// walk's shared steps, the top level and the mesh. Modules and parameters
// are parse_modules.cc's, layouts and what holds them parse_layouts.cc's.
#include "core/model/parse.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/diagnostics/sink.h"
#include "core/exec/parallel.h"
#include "core/model/document_checks.h"
#include "core/model/json_reader.h"
#include "core/model/parser.h"
#include "core/model/training.h"
#include "core/text/json_pointer.h"
#include "core/text/pyrepr.h"
#include "core/text/utf8.h"

namespace shardplan {
namespace parse_internal {

std::string_view TypeName(const Value& v) {
  if (v.IsNull()) return "null";
  if (v.IsBool()) return "a boolean";
  if (v.IsNumber()) return "a number";
  if (v.IsString()) return "a string";
  if (v.IsArray()) return "an array";
  return "an object";
}

std::string Parser::Pointer() const {
  std::string out;
  for (const Token& t : tokens_) {
    out += '/';
    if (t.key.data() == nullptr) {
      out += std::to_string(t.index);
    } else {
      out += JsonPointerToken(t.key);
    }
  }
  return out;
}

bool Parser::CheckUniqueKeys(const Value& obj) {
  const auto n = obj.MemberCount();
  if (n <= 16) {
    for (auto a = obj.MemberBegin(); a != obj.MemberEnd(); ++a) {
      for (auto b = obj.MemberBegin(); b != a; ++b) {
        if (Str(a->name) == Str(b->name)) {
          At at(*this, Str(a->name));
          return Fail(absl::StrCat("duplicate key ", PyRepr(Str(a->name))));
        }
      }
    }
    return true;
  }
  absl::flat_hash_set<std::string_view> seen;
  seen.reserve(n);
  for (auto m = obj.MemberBegin(); m != obj.MemberEnd(); ++m) {
    if (!seen.insert(Str(m->name)).second) {
      At at(*this, Str(m->name));
      return Fail(absl::StrCat("duplicate key ", PyRepr(Str(m->name))));
    }
  }
  return true;
}

bool Parser::CheckUniqueKeysDeep(const Value& v) {
  if (v.IsObject()) {
    if (!CheckUniqueKeys(v)) return false;
    for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
      At at(*this, Str(m->name));
      if (!CheckUniqueKeysDeep(m->value)) return false;
    }
  } else if (v.IsArray()) {
    for (size_t i = 0; i < v.Size(); ++i) {
      At at(*this, i);
      if (!CheckUniqueKeysDeep(v[i])) return false;
    }
  }
  return true;
}

bool Parser::NonEmptyName(const Value& key, std::string_view what) {
  std::string_view name = Str(key);
  if (name.empty()) return Fail(absl::StrCat(what, " must not be empty"));
  if (name.find('.') != std::string_view::npos) {
    return Fail(absl::StrCat(what, " ", PyRepr(name), " must not contain '.'"));
  }
  return true;
}

bool Parser::NonNegativeInts(const Value& v, bool positive, SmallVector<int64_t>& out) {
  if (!ExpectArray(v)) return false;
  out.reserve(v.Size());
  for (size_t i = 0; i < v.Size(); ++i) {
    At at(*this, i);
    const Value& x = v[i];
    if (!x.IsInt64() || x.GetInt64() < (positive ? 1 : 0)) {
      return Fail(absl::StrCat("expected a ", positive ? "positive" : "non-negative",
                               " integer below 2^63, got ", x.IsNumber() ? "another number" : TypeName(x)));
    }
    out.push_back(x.GetInt64());
  }
  return true;
}

bool Parser::StreamItems(json::Section section, absl::Span<const json::Item> items,
                         absl::Span<const HashedName> names) {
  // A large model's table is larger than the caches. The parts where the
  // next kAhead names are found are fetched while the members before them
  // are parsed, so that their misses overlap with one another and with the
  // work instead of following one another.
  constexpr size_t kAhead = 32;
  listed_ = names;
  listed_next_ = 0;
  size_t prefetched = 0;
  for (const json::Item& item : items) {
    const size_t end = std::min(names.size(), listed_next_ + kAhead);
    if (prefetched < end) doc_.names.Prefetch(names.subspan(prefetched, end - prefetched));
    prefetched = std::max(prefetched, end);
    if (!StreamItem(section, item)) return false;
  }
  return true;
}

void Parser::Prepare(json::Section section, absl::Span<const json::Item> items, std::vector<HashedName>& names) {
  // The string values of a module's `children` or `params` member, in
  // member order, as ParseModule interns them.
  auto references = [&](const Value& module, std::string_view key) {
    for (auto m = module.MemberBegin(); m != module.MemberEnd(); ++m) {
      if (Str(m->name) != key || !m->value.IsObject()) continue;
      for (auto r = m->value.MemberBegin(); r != m->value.MemberEnd(); ++r) {
        if (r->value.IsString()) names.push_back(Interner::Hashed(Str(r->value)));
      }
      return;
    }
  };
  for (const json::Item& item : items) {
    names.push_back(Interner::Hashed(item.key));
    if (section != json::Section::kModules || !item.value.IsObject()) continue;
    references(item.value, "children");
    references(item.value, "params");
  }
}

bool Parser::StreamItem(json::Section section, const json::Item& item) {
  const auto& [key, v, unread] = item;
  switch (section) {
    case json::Section::kParameters: {
      At at(*this, "parameters");
      return ParameterItem(key, v);
    }
    case json::Section::kModules: {
      At at(*this, "modules");
      return ModuleItem(key, v);
    }
    case json::Section::kProviders: {
      At at(*this, "providers");
      At at_map(*this, "sharding");
      return FqnLayoutItem(/*in_plan=*/false, key, v, unread);
    }
    case json::Section::kPlan: {
      At at(*this, "plan");
      At at_map(*this, "modules");
      return FqnLayoutItem(/*in_plan=*/true, key, v, unread);
    }
  }
  return false;
}

// The members of parameters, modules, providers.sharding and plan.modules
// came through StreamItem; `root` holds those maps empty, so only their type
// is checked here.
bool Parser::ParseRoot(const Value& root) {
  enum {
    kSchema,
    kMesh,
    kParameters,
    kRoot,
    kModules,
    kProviders,
    kPlan,
    kTemplates,
    kOverrides,
    kPipeline,
    kTraining,
    kCount
  };
  static constexpr std::array<std::string_view, kCount> kKeys = {
      "schema", "mesh",      "parameters", "root",     "modules", "providers",
      "plan",   "templates", "overrides",  "pipeline", "training"};
  Fields<kCount> f;
  if (!ReadFields(root, kKeys, f)) return false;
  for (int k : {kSchema, kMesh, kParameters, kRoot, kModules}) {
    if (!Required(f[k], kKeys[k])) return false;
  }
  {
    At at(*this, "schema");
    if (!ExpectString(*f[kSchema])) return false;
    if (Str(*f[kSchema]) != "shardplan.v1") {
      return Fail(absl::StrCat("unsupported schema ", PyRepr(Str(*f[kSchema])), " (expected 'shardplan.v1')"));
    }
  }
  {
    At at(*this, "mesh");
    if (!ParseMesh(*f[kMesh])) return false;
  }
  {
    At at(*this, "parameters");
    if (!ExpectObject(*f[kParameters])) return false;
  }
  {
    At at(*this, "modules");
    if (!ExpectObject(*f[kModules])) return false;
  }
  if (auto error = ResolveReferences(doc_, module_by_name_, param_by_name_)) return Fail(*std::move(error));
  {
    At at(*this, "root");
    if (!ExpectString(*f[kRoot])) return false;
    if (auto error = ResolveRoot(doc_, Str(*f[kRoot]), module_by_name_)) return Fail(*std::move(error));
  }
  if (auto error = CheckTree(doc_, limits_)) return Fail(*std::move(error));
  if (f[kProviders]) {
    At at(*this, "providers");
    if (!ParseProviders(*f[kProviders])) return false;
  }
  if (f[kPlan]) {
    At at(*this, "plan");
    if (!ParsePlan(*f[kPlan])) return false;
  }
  for (int k : {kTemplates, kOverrides}) {
    if (f[k] && f[kPlan]) {
      At at(*this, kKeys[k]);
      return Fail(absl::StrCat("a document gives either 'plan' (a final plan to check) or 'templates'/'overrides' "
                               "(a plan to make), not both"));
    }
  }
  if (f[kTemplates]) {
    At at(*this, "templates");
    if (!ParseTemplates(*f[kTemplates])) return false;
  }
  if (f[kOverrides]) {
    At at(*this, "overrides");
    if (!ParseOverrides(*f[kOverrides])) return false;
  }
  if (f[kPipeline]) {
    At at(*this, "pipeline");
    if (!ParsePipeline(*f[kPipeline])) return false;
  }
  if (f[kTraining]) {
    At at(*this, "training");
    if (!ParseTraining(*f[kTraining])) return false;
    if (auto error = CompleteTraining(doc_, *doc_.training)) return Fail(*std::move(error));
  }
  return true;
}

bool Parser::ParseMesh(const Value& v) {
  if (!ExpectObject(v) || !CheckUniqueKeys(v)) return false;
  for (auto m = v.MemberBegin(); m != v.MemberEnd(); ++m) {
    At at(*this, Str(m->name));
    if (!m->value.IsInt64() || m->value.GetInt64() < 1) {
      return Fail("mesh axis size must be a positive integer below 2^63");
    }
    const NameId axis = doc_.names.Intern(Str(m->name));
    doc_.mesh.push_back({axis, m->value.GetInt64()});
    doc_.mesh_names.Insert(axis);
  }
  return true;
}

}  // namespace parse_internal

namespace {

std::string LineColumn(std::string_view text, size_t offset) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return absl::StrCat("line ", line, ", column ", column);
}

ParseResult InvalidDocumentResult(const std::string& message) {
  ParseResult result;
  result.error = MakeDiagnostic(Code::kInvalidDocument, Mode::kCheck, {.pointer = ""}, {message});
  return result;
}

}  // namespace

ParseResult ReadDocument(std::string_view json, const Limits& limits, bool skip_repeats) {
  auto document = std::make_unique<Document>();
  // Documents spell about one distinct name per 70 to 100 bytes, and one
  // parameter or module per 128 bytes or more: room made once saves
  // rehashing millions of names and copying the large vectors as they grow.
  document->names.Reserve(json.size() / 96);
  document->parameters.reserve(json.size() / 128);
  document->modules.reserve(json.size() / 128);
  // Providers, and plan entries if any: guessed at one per 256 bytes of text.
  const size_t fqn_layout_room = json.size() / 256;
  document->model_providers.reserve(fqn_layout_room);
  parse_internal::Parser parser(*document, limits, fqn_layout_room);
  json::DocumentReader reader(json, limits.max_json_depth, skip_repeats);
  json::Value skeleton;
  const bool read = reader.Read(
      parse_internal::Parser::Prepare,
      [&](json::Section section, absl::Span<const json::Item> items, absl::Span<const HashedName> names) {
        return parser.StreamItems(section, items, names);
      },
      skeleton);
  if (!read && reader.error()) {
    const json::SyntaxError& error = *reader.error();
    const std::string at = LineColumn(json, error.offset);
    if (error.too_deep) {
      return InvalidDocumentResult(absl::StrCat("the document nests arrays and objects deeper than ",
                                                limits.max_json_depth, " levels (at ", at, ")"));
    }
    return InvalidDocumentResult(absl::StrCat("malformed JSON at ", at, ": ", error.message));
  }
  ParseResult result;
  if (!read || !parser.ParseRoot(skeleton)) {
    result.error = InvalidDocument({parser.error(), parser.error_pointer(), parser.error_fix_it()});
    return result;
  }
  result.document = std::move(document);
  return result;
}

ParseResult ParseDocument(std::string_view json, const Limits& limits, bool skip_repeats) {
  // The first NUL byte or ill-formed sequence, whichever comes first,
  // refuses the document, before any error reading it would find. With
  // threads the text is checked while it is read, on another thread (the
  // check touches every page of the text first, a large part of a large
  // document's time); on one, first, and an invalid text is not read.
  size_t valid = json.size();
  ParseResult result;
  const auto check = [&] { valid = utf8::ValidNulFreePrefix(json); };
  const auto read = [&] { result = ReadDocument(json, limits, skip_repeats); };
  if (OnOneThread()) {
    check();
    if (valid == json.size()) read();
  } else {
    ParallelInvoke(check, read);
  }
  if (valid != json.size()) {
    return InvalidDocumentResult(absl::StrCat(json[valid] == '\0' ? "NUL byte" : "invalid UTF-8", " at ",
                                              LineColumn(json, valid), " (offset ", valid, ")"));
  }
  return result;
}

}  // namespace shardplan
