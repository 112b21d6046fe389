// Strict parsing of a shardplan.v1 document (spec section 2).
//
// Anything malformed (JSON syntax, wrong types, unknown keys, unknown module or
// parameter ids, cycles, bad placements, non-positive mesh sizes, duplicate
// keys) yields one `invalid-document` diagnostic whose message names the JSON
// pointer of the offending value. Limits refuse hostile input: JSON nesting
// depth, and the number (and total name length) of module paths, which shared
// submodules can make exponential in the document's size. The checks that
// need the whole document (references, root, cycles, path limits) are
// document_checks.h's, which the builder (builder.h) shares.
#ifndef SHARDPLAN_CORE_MODEL_PARSE_H_
#define SHARDPLAN_CORE_MODEL_PARSE_H_

#include <optional>
#include <string_view>

#include "core/limits.h"
#include "core/model/document.h"
#include "core/model/document_checks.h"

namespace shardplan {

// `skip_repeats`: json::DocumentReader's, a fast path (core/fast_paths.h).
ParseResult ParseDocument(std::string_view json, const Limits& limits, bool skip_repeats = true);

// ParseDocument less its first step, the check that `json` is valid UTF-8
// without NUL bytes: safe on any bytes, which ParseDocument reads while it
// checks them; for a text that fails the check, what it returns means
// nothing. (The fuzz targets run it on such texts.)
ParseResult ReadDocument(std::string_view json, const Limits& limits, bool skip_repeats = true);

// Parses `json`, the value of a document's `training` key, into
// doc.training as ParseDocument would, less the checks that need the rest
// of the document (training.h's CompleteTraining): for the builder.
std::optional<DocumentError> ParseTrainingSection(Document& doc, std::string_view json, const Limits& limits);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_MODEL_PARSE_H_
