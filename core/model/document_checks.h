// The checks of a shardplan.v1 document that need all of it (spec section
// 2): references resolved against every id, the root, cycles in children and
// the path limits. The parser (parse.h) runs them once it has read a
// document, the builder (builder.h) when it builds one: a document that
// fails them fails with the same invalid-document message and JSON pointer
// however it was made.
#ifndef SHARDPLAN_CORE_MODEL_DOCUMENT_CHECKS_H_
#define SHARDPLAN_CORE_MODEL_DOCUMENT_CHECKS_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/diagnostic.h"
#include "core/limits.h"
#include "core/exec/parallel.h"
#include "core/model/document.h"
#include "core/model/interner.h"

namespace shardplan {

// Why a document is invalid: the rule broken, and the RFC 6901 JSON pointer
// of the value at fault ("" for the document itself).
struct DocumentError {
  std::string message;
  std::string pointer;
  std::shared_ptr<const FixIt> fix_it = nullptr;  // Diagnostic::fix_it
};

// A document read or built: the document, or the one diagnostic that says
// why it is invalid.
struct ParseResult {
  std::unique_ptr<Document> document;  // set on success
  std::optional<Diagnostic> error;     // the invalid-document diagnostic
};

// The single invalid-document diagnostic of `error`: its message ends with
// the pointer it names, "(at /modules/m/children/c)", or "(at the document
// root)".
Diagnostic InvalidDocument(const DocumentError& error);

// "missing required key 'root'": a required member absent.
std::string MissingKeyMessage(std::string_view key);

// The modules' or parameters' indexes by the NameId of their id: what
// references are resolved against.
class IdIndex {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // Records `index` for `name`; false, recording nothing, when `name` has
  // an index already (a duplicate id).
  bool Define(NameId name, uint32_t index) {
    // Ids are defined in increasing order: grown by half at a time, not by
    // one name.
    if (name >= by_name_.size()) {
      by_name_.resize(std::max<size_t>(name + 1, by_name_.size() + by_name_.size() / 2), kNone);
    }
    if (by_name_[name] != kNone) return false;
    by_name_[name] = index;
    return true;
  }
  // The index of `name`, or kNone.
  uint32_t Find(NameId name) const { return name < by_name_.size() ? by_name_[name] : kNone; }
  // The index of the id spelled `id`, or kNone.
  uint32_t Find(const Interner& names, std::string_view id) const { return Find(names.Find(id)); }

 private:
  std::vector<uint32_t> by_name_;
};

// Resolves every module's child and parameter references: each holds, as
// read, the NameId of the id it names, and is replaced by the index of that
// module or parameter. Fails on the first module in document order with an
// id that `modules` or `parameters` does not know, its children before its
// params: "unknown module id 'x'" at /modules/<id>/children/<name>. On
// failure the document is partly resolved (to be discarded).
std::optional<DocumentError> ResolveReferences(Document& doc, const IdIndex& modules, const IdIndex& parameters);

// Sets doc.root to the module whose id is `id`; fails with "unknown module
// id 'x'" at /root.
std::optional<DocumentError> ResolveRoot(Document& doc, std::string_view id, const IdIndex& modules);

// Refuses a cycle anywhere in children (reachable from the root or not),
// and a tree whose expansion from the root exceeds `limits` (max_paths,
// max_fqn_bytes); sets doc.tree_paths and doc.tree_fqn_bytes. Both are
// computed over the module DAG, never by expanding it. References must be
// resolved and the root set.
std::optional<DocumentError> CheckTree(Document& doc, const Limits& limits);

// Sizes that byte counts could not hold (kMaxParameterBytes, document.h).
// A parameter of known shape larger than that is refused as it is read,
// with ParameterTooLargeMessage at its shape; a document whose parameters
// total more, with ParametersTooLarge once the parameter that crosses the
// limit is read (the builder: before the other checks of Build).
std::string ParameterTooLargeMessage(std::string_view id, Dtype dtype);
DocumentError ParametersTooLarge();

// The message for a dtype name that is none of document.h's.
std::string UnknownDtypeMessage(std::string_view name);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_MODEL_DOCUMENT_CHECKS_H_
