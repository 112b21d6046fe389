// Reading a shardplan.v1 document's JSON text (RFC 8259) with RapidJSON,
// member by member.
//
// The document is never one DOM. The members of the four maps that grow with
// the model (parameters, modules, providers.sharding and plan.modules) are
// each read into a small Value and handed to a sink, in document order, in
// batches whose memory is reused once the sink is done with them; the rest of
// the document becomes a skeleton Value in which those maps stand empty.
//
// RapidJSON's SAX reader reads every value and every member name; this
// reader walks only the objects around the streamed members (names, colons
// and commas) as RapidJSON's own object parser does, so that a syntax error
// anywhere carries the English message and the offset RapidJSON gives for
// the whole text. Two rules are added: arrays and objects nest at most
// `max_depth` deep (refused just past the opening bracket that goes deeper),
// and a number that strtod reads as infinite is too big, as later RapidJSON
// versions report. The text must be valid UTF-8 without NUL bytes (the
// caller checks, utf8.h): RapidJSON does not validate it again, and takes the
// end of the text for the end of its input.
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

namespace shardplan::json {

struct Member;

// A JSON value as read: 16 bytes, trivially copyable. Strings (decoded),
// arrays' elements and objects' members are in the reader's memory. Object
// members keep their order, duplicates included.
class Value {
 public:
  enum class Type : uint8_t { kNull, kBool, kNumber, kString, kArray, kObject };

  Value() = default;  // null
  static Value Bool(bool b) {
    Value v(Type::kBool, 0);
    v.flag_ = b;
    return v;
  }
  // An integer within int64's range, spelled without fraction or exponent.
  static Value Int64(int64_t i) {
    Value v(Type::kNumber, 0);
    v.flag_ = true;
    v.int_ = i;
    return v;
  }
  // Any other number that fits a double.
  static Value Number() { return Value(Type::kNumber, 0); }
  static Value String(std::string_view s) {
    Value v(Type::kString, s.size());
    v.str_ = s.data();
    return v;
  }
  static Value Array(const Value* elements, size_t count) {
    Value v(Type::kArray, count);
    v.elements_ = elements;
    return v;
  }
  static Value Object(const Member* members, size_t count) {
    Value v(Type::kObject, count);
    v.members_ = members;
    return v;
  }

  Type type() const { return type_; }
  bool IsNull() const { return type_ == Type::kNull; }
  bool IsBool() const { return type_ == Type::kBool; }
  bool IsNumber() const { return type_ == Type::kNumber; }
  bool IsString() const { return type_ == Type::kString; }
  bool IsArray() const { return type_ == Type::kArray; }
  bool IsObject() const { return type_ == Type::kObject; }
  bool IsInt64() const { return type_ == Type::kNumber && flag_; }

  bool GetBool() const { return flag_; }
  int64_t GetInt64() const { return int_; }
  std::string_view str() const { return {str_, size_}; }
  size_t Size() const { return size_; }  // of an array
  const Value& operator[](size_t i) const { return elements_[i]; }
  size_t MemberCount() const { return size_; }
  const Member* MemberBegin() const { return members_; }
  const Member* MemberEnd() const;

 private:
  Value(Type type, size_t size) : type_(type), size_(static_cast<uint32_t>(size)) {}

  Type type_ = Type::kNull;
  bool flag_ = false;  // kBool: the value; kNumber: IsInt64
  uint32_t size_ = 0;  // string bytes, array elements or object members
  union {
    int64_t int_ = 0;
    const char* str_;
    const Value* elements_;
    const Member* members_;
  };
};

struct Member {
  Value name;  // a string
  Value value;
};

inline const Member* Value::MemberEnd() const { return members_ + size_; }

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

// Why the text is no JSON, and where.
struct SyntaxError {
  // Nesting deeper than max_depth; else a syntax error, in RapidJSON's words.
  bool too_deep = false;
  // RapidJSON's English message ("Missing a colon after a name of object
  // member.").
  std::string_view message;
  size_t offset = 0;  // in bytes from the start of the text
};

class DocumentReader {
 public:
  // Reads `text` (which must outlive the reader), its arrays and objects
  // nesting at most `max_depth` deep.
  DocumentReader(std::string_view text, int max_depth);
  ~DocumentReader();
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
  const std::optional<SyntaxError>& error() const { return error_; }

 private:
  struct Memory;  // the skeleton's (json_reader.cc)

  const std::string_view text_;
  const int max_depth_;
  std::unique_ptr<Memory> memory_;
  std::optional<SyntaxError> error_;
};

}  // namespace shardplan::json

#endif  // SHARDPLAN_CORE_MODEL_JSON_READER_H_
