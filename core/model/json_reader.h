// Reading a shardplan.v1 document's JSON text member by member.
//
// The document is never one DOM. The members of the four maps that grow with
// the model (parameters, modules, providers.sharding and plan.modules) are
// each read into a small Value and handed to a sink, in document order, in
// batches whose memory is reused once the sink is done with them; the rest of
// the document becomes a skeleton Value in which those maps stand empty.
// Values are read by json.h's reader, which gives RapidJSON's syntax errors
// and offsets; this file walks the objects around the streamed members
// (names, colons and commas) as RapidJSON's own object parser does, so that a
// syntax error anywhere carries the English message and the offset RapidJSON
// gives for the whole text. Arrays and objects nest at most `max_depth` deep
// (refused just past the opening bracket that goes deeper). The text must be
// valid UTF-8 without NUL bytes to be a document, but any bytes are safe to
// read (the caller checks, utf8.h, and may read while it does).
//
//   DocumentReader reader(text, /*max_depth=*/64);
//   Value root;
//   if (!reader.Read([&](Section s, absl::Span<const Item> items) { return Take(s, items); }, root)) {
//     if (reader.error()) ...  // reader.error()->message, ->offset
//   }
#ifndef SHARDPLAN_CORE_MODEL_JSON_READER_H_
#define SHARDPLAN_CORE_MODEL_JSON_READER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/types/span.h"
#include "core/model/interner.h"
#include "core/model/json.h"

namespace shardplan::json {

// The maps whose members are streamed.
enum class Section : uint8_t { kParameters, kModules, kProviders, kPlan };

// One member of a streamed map: its name and its value, valid until the
// sink that takes it returns.
struct Item {
  std::string_view key;
  Value value;
  // The value is spelled byte for byte as the map's previous member's value,
  // an object, and was not read again (`value` is null): the same text
  // parses to the same thing.
  bool unread = false;
};

// Takes members of a streamed map read together, in document order; false
// when it refused one, which stops the reading.
using ItemSink = absl::FunctionRef<bool(Section, absl::Span<const Item>)>;

// Lists in `names` (empty at the call) the names a sink will intern from a
// batch of members, hashed. It runs in the reading stage, before the sink
// takes the batch, on the reading thread where threads are allowed: hashing
// needs nothing of the sink's state, and is then off the sink's stage,
// which does the rest of the parsing.
using NamePrepare = absl::FunctionRef<void(Section, absl::Span<const Item>, std::vector<HashedName>&)>;
// An ItemSink that also takes the names NamePrepare listed for the batch.
using PreparedSink = absl::FunctionRef<bool(Section, absl::Span<const Item>, absl::Span<const HashedName>)>;

// Why the text is no JSON, and where.
struct SyntaxError {
  // Nesting deeper than max_depth; else a syntax error, in RapidJSON's words.
  bool too_deep = false;
  // RapidJSON's English message ("Missing a colon after a name of object
  // member."), ErrorMessage's.
  std::string_view message;
  size_t offset = 0;  // in bytes from the start of the text
};

class DocumentReader {
 public:
  // Reads `text` (which must outlive the reader), its arrays and objects
  // nesting at most `max_depth` deep. `skip_repeats`: whether a layout map's
  // member spelled as the one before it is compared, not read (Item::unread);
  // off, every value is read.
  DocumentReader(std::string_view text, int max_depth, bool skip_repeats = true);
  DocumentReader(const DocumentReader&) = delete;
  DocumentReader& operator=(const DocumentReader&) = delete;

  // Reads the whole text once, handing the members of the streamed maps to
  // `sink` in batches, from another thread than the reading where threads
  // are allowed (exec/parallel.h), but always in document order, and every
  // member before a syntax error that follows it. True when the text is
  // one JSON value and the sink took every member: then `skeleton` is that
  // value, the streamed maps empty, valid as long as the reader. False on a
  // syntax error (error() says which) or when the sink refused a member
  // (error() is empty).
  bool Read(ItemSink sink, Value& skeleton);
  // Read, where `prepare` lists each batch's names for `sink`.
  bool Read(NamePrepare prepare, PreparedSink sink, Value& skeleton);
  const std::optional<SyntaxError>& error() const { return error_; }

 private:
  const std::string_view text_;
  const int max_depth_;
  const bool skip_repeats_;
  // Reads the top level, and holds the skeleton.
  Reader reader_;
  std::optional<SyntaxError> error_;
};

}  // namespace shardplan::json

#endif  // SHARDPLAN_CORE_MODEL_JSON_READER_H_
