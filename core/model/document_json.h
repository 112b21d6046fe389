// A Document printed as shardplan.v1 JSON (spec section 2, planner-v1
// section 1): text that parses to the same document, every list and map in
// the document's order.
//
//   ParsedDocument parsed = ParseDocument(text, Limits{});
//   std::string again = DocumentToJson(*parsed.document);
//   // ParseDocument(again, Limits{}) gives a document equal to parsed's.
//
// What a document does not keep is spelled canonically: placements as the
// result spells them ("P(sum)" is "P"), the default dtype float32 and an
// empty template prefix left out, a legacy compute-injection field as
// `true` (only the first one set is kept). A forward signature keeps its
// names, its first plain name and whether one is var-keyword, not every
// marker: entries before the first plain name are written "*name", one
// entry after it "**name" when the module has a var-keyword parameter (the
// last, as Python signatures end with it), the others plain; the document
// read back is the same.
#ifndef SHARDPLAN_CORE_MODEL_DOCUMENT_JSON_H_
#define SHARDPLAN_CORE_MODEL_DOCUMENT_JSON_H_

#include <optional>
#include <string>

#include "core/model/document.h"

namespace shardplan {

// The JSON of a parsed or built document (references resolved), pretty
// printed with a two-space indent.
std::string DocumentToJson(const Document& doc);

// The JSON of a document still being built (DocumentBuilder): its modules'
// children and params hold the NameId of the id they name, not an index,
// and `root` is the id of the root module (nullopt: none yet, and no "root"
// key is written).
std::string UnresolvedDocumentToJson(const Document& doc, std::optional<NameId> root);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_MODEL_DOCUMENT_JSON_H_
