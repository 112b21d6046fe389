// The validating walk of a shardplan.v1 document (spec section 2) over the
// values json_reader.h reads: it checks each value against the format as it
// builds the Document, and stops at the first thing wrong, keeping its
// message and the JSON pointer of the value at fault. Internal to parsing:
//   parse.cc          the entry point, the top level and the mesh;
//   parse_modules.cc  parameters and modules (forward, children, params,
//                     families);
//   parse_layouts.cc  layouts and their placement maps, parallel specs,
//                     providers, the plan, templates and overrides.
// The checks that need the whole document are document_checks.h's.
#ifndef SHARDPLAN_CORE_MODEL_PARSER_H_
#define SHARDPLAN_CORE_MODEL_PARSER_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "core/limits.h"
#include "core/model/document.h"
#include "core/model/document_checks.h"
#include "core/model/json_reader.h"
#include "core/model/name_set.h"
#include "core/text/bytes.h"
#include "core/text/pyrepr.h"

namespace shardplan::parse_internal {

using json::Value;

// "null", "a boolean", "a number", "a string", "an array" or "an object".
std::string_view TypeName(const Value& v);
inline std::string_view Str(const Value& v) { return v.str(); }

class Parser {
 public:
  // plan_room: the entries a plan gets room for when it starts (its count
  // is not known before its members are read).
  Parser(Document& doc, const Limits& limits, size_t plan_room) : doc_(doc), limits_(limits), plan_room_(plan_room) {}

  // Members of a streamed map (json_reader.h), parsed before ParseRoot
  // sees the rest of the document (where the map then stands empty), with
  // the names Prepare listed for them.
  bool StreamItems(json::Section section, absl::Span<const json::Item> items, absl::Span<const HashedName> names);
  // The json::NamePrepare of StreamItems: the names StreamItem interns from
  // these members first, in the order it interns them: each member's key
  // (an id or FQN), and the ids a module's children, then its params, refer
  // to. It reads nothing of a Parser's state, so it may run beside
  // StreamItems on another thread.
  static void Prepare(json::Section section, absl::Span<const json::Item> items, std::vector<HashedName>& names);
  // The top level; the streamed maps' members came through StreamItem.
  bool ParseRoot(const Value& root);
  // A `training` section alone, as the top level's `training` member
  // (parse.h's ParseTrainingSection).
  bool ParseTrainingSection(const Value& v);
  const std::string& error() const { return error_; }
  const std::string& error_pointer() const { return error_pointer_; }
  const std::shared_ptr<const FixIt>& error_fix_it() const { return error_fix_it_; }

 private:
  // One reference token of the current pointer: a key, or an array index
  // when `key.data()` is null. Tokens are kept as views and only spelled
  // out when a pointer is needed (an error, or a stored pointer).
  struct Token {
    std::string_view key;
    size_t index = 0;
  };
  // Appends one reference token to the current pointer for its lifetime.
  class At {
   public:
    At(Parser& parser, std::string_view key) : parser_(parser) { parser_.tokens_.emplace_back().key = key; }
    At(Parser& parser, size_t index) : parser_(parser) { parser_.tokens_.emplace_back().index = index; }
    ~At() { parser_.tokens_.pop_back(); }

   private:
    Parser& parser_;
  };

  // The current JSON pointer, spelled out.
  std::string Pointer() const;
  bool Fail(std::string message, std::shared_ptr<const FixIt> fix_it = nullptr) {
    error_ = std::move(message);
    error_pointer_ = Pointer();
    error_fix_it_ = std::move(fix_it);
    return false;
  }
  // A whole-document check's failure, which names its own pointer.
  bool Fail(DocumentError error) {
    error_ = std::move(error.message);
    error_pointer_ = std::move(error.pointer);
    error_fix_it_ = std::move(error.fix_it);
    return false;
  }
  bool Expect(const Value& v, bool ok, std::string_view what) {
    return ok || Fail(absl::StrCat("expected ", what, ", got ", TypeName(v)));
  }
  bool ExpectObject(const Value& v) { return Expect(v, v.IsObject(), "an object"); }
  bool ExpectArray(const Value& v) { return Expect(v, v.IsArray(), "an array"); }
  bool ExpectString(const Value& v) { return Expect(v, v.IsString(), "a string"); }

  // The members of an object of known shape, by the index of their key in
  // `allowed`, read in one pass; unknown and duplicate keys are refused.
  template <size_t N>
  struct Fields {
    std::array<const Value*, N> values{};
    const Value* operator[](size_t k) const { return values[k]; }
  };
  template <size_t N>
  bool ReadFields(const Value& obj, const std::array<std::string_view, N>& allowed, Fields<N>& out);
  bool Required(const Value* v, std::string_view key) { return v != nullptr || Fail(MissingKeyMessage(key)); }
  // Every key of `obj` unique.
  bool CheckUniqueKeys(const Value& obj);
  // Fails on a duplicate key anywhere inside `v` (values we do not model).
  bool CheckUniqueKeysDeep(const Value& v);
  bool NonEmptyName(const Value& key, std::string_view what);
  bool NonNegativeInts(const Value& v, bool positive, SmallVector<int64_t>& out);

  // parse.cc
  bool StreamItem(json::Section section, const json::Item& item);
  // The id of `name`, a key or reference Prepare listed: its hash is taken
  // from the list when `name` is the next one there (the same bytes in the
  // same place: a batch's text does not change while it is parsed), else
  // computed. Either way the same id.
  NameId Listed(std::string_view name) {
    if (listed_next_ < listed_.size() && listed_[listed_next_].text.data() == name.data() &&
        listed_[listed_next_].text.size() == name.size()) {
      return doc_.names.Intern(listed_[listed_next_++]);
    }
    return doc_.names.Intern(name);
  }
  bool ParseMesh(const Value& v);
  // parse_modules.cc. ParameterItem and ModuleItem take one member of the
  // parameters or modules map (the current pointer names the map).
  bool ParameterItem(std::string_view id, const Value& v);
  bool ModuleItem(std::string_view id, const Value& v);
  // `index`: the module's index in the document.
  bool ParseModule(const Value& v, ModuleId index, Module& module);
  bool ParseForward(const Value& v, Module& module);
  bool ParseFamily(const Value& v, ModuleId index, Family& family);
  // parse_layouts.cc
  bool ParseParallel(const Value& v, Origin origin, std::optional<ParallelSpec>& out);
  bool ParseLayout(const Value& v, bool in_plan, Origin origin, Layout& out);
  bool ParsePlacementMap(const Value& v, PlacementMap& out);
  bool ParseNamedPlacements(const Value& v, NamedPlacements& out);
  // One member of the providers.sharding or plan.modules map (the current
  // pointer names the map). `unread`: the value is spelled as the previous
  // member's of the map and gets its layout (json::Item::unread).
  bool FqnLayoutItem(bool in_plan, std::string_view fqn, const Value& v, bool unread);
  bool ParseProviders(const Value& v);
  bool ParsePlan(const Value& v);
  bool ParseTemplates(const Value& v);
  bool ParseOverrides(const Value& v);
  bool ParsePipeline(const Value& v);
  // An array of strings into `out`.
  bool ParseNames(const Value& v, std::vector<std::string>& out);
  // parse_training.cc. The *Field helpers read an optional member `v`
  // named `key` (absent: `out` is unchanged).
  bool ParseTraining(const Value& v);
  bool ParseActivations(const Value& v, ActivationSettings& out, bool& tensor_axis_given);
  bool ParseModelDescription(const Value& v, ModelDescription& out);
  bool IntField(const Value* v, std::string_view key, int64_t low, int64_t high, int64_t& out);
  bool BoolField(const Value* v, std::string_view key, bool& out);
  bool DtypeField(const Value* v, std::string_view key, bool nullable, std::optional<Dtype>& out);
  bool Patterns(const Value* v, std::string_view key, std::vector<TrainingPattern>& out);

  // The id of a name that recurs throughout a document (a type, or a
  // child, parameter, port or axis name): a small cache of recent ones is
  // looked up before the interner, whose hashing and lookup cost several
  // times more. Ids and unique names go to the interner directly.
  NameId Common(std::string_view name) {
    Recent& r = recent_[name.empty() ? 0
                                     : (name.size() * 7 + static_cast<uint8_t>(name.front()) * 3 +
                                        static_cast<uint8_t>(name.back())) % recent_.size()];
    if (r.id == kNoName || !SameText(r.text, name)) {
      r.id = doc_.names.Intern(name);
      r.text = doc_.names.View(r.id);
    }
    return r.id;
  }
  struct Recent {
    std::string_view text;  // the interner's copy
    NameId id = kNoName;
  };

  // Creates the plan, once, with room for plan_room_ entries.
  void StartPlan() {
    if (doc_.plan) return;
    doc_.plan.emplace().reserve(plan_room_);
  }

  Document& doc_;
  const Limits& limits_;
  const size_t plan_room_;
  std::array<Recent, 64> recent_{};
  // The names Prepare listed for the batch StreamItems is taking, and the
  // next one Listed expects.
  absl::Span<const HashedName> listed_;
  size_t listed_next_ = 0;
  // The layout of the last member FqnLayoutItem took.
  Layout last_layout_;
  std::vector<Token> tokens_;
  std::string error_;
  std::string error_pointer_;
  std::shared_ptr<const FixIt> error_fix_it_;
  // Parameter and module indexes by the NameId of their id: one lookup of
  // the id string per reference.
  IdIndex param_by_name_;
  IdIndex module_by_name_;
  NameBits provider_fqns_, plan_fqns_;
  // The bytes of the parameters read so far, at most kMaxParameterBytes.
  uint64_t parameter_bytes_ = 0;
};

template <size_t N>
bool Parser::ReadFields(const Value& obj, const std::array<std::string_view, N>& allowed, Fields<N>& out) {
  if (!ExpectObject(obj)) return false;
  for (auto m = obj.MemberBegin(); m != obj.MemberEnd(); ++m) {
    const std::string_view key = Str(m->name);
    size_t k = 0;
    while (k < N && !SameText(allowed[k], key)) ++k;
    if (k == N) {
      At at(*this, key);
      std::string list;
      for (std::string_view a : allowed) absl::StrAppend(&list, list.empty() ? "" : ", ", a);
      return Fail(absl::StrCat("unknown key ", PyRepr(key), " (expected one of: ", list, ")"));
    }
    if (out[k] != nullptr) {
      At at(*this, key);
      return Fail(absl::StrCat("duplicate key ", PyRepr(key)));
    }
    out.values[k] = &m->value;
  }
  return true;
}

}  // namespace shardplan::parse_internal

#endif  // SHARDPLAN_CORE_MODEL_PARSER_H_
