// A JSON reader made for shardplan documents (RFC 8259 syntax).
//
// It reads the document's text where it lies, never copying or changing it:
// strings without escapes are views into the text, so the text stays intact
// for line/column messages, and needs no padded copy. Values are small
// (16 bytes) and allocated in an arena that can be released back to a mark,
// so that the members of a large map can be read one at a time, each into
// the same memory. Any bytes are safe to read, a NUL byte or ill-formed
// UTF-8 included (it never reads past the text); the caller refuses such a
// text whatever the reading gives (utf8::ValidNulFreePrefix, parse.cc).
//
// Syntax errors carry the code and the offset RapidJSON would report, and
// RapidJSON's English messages, which earlier versions of shardplan printed.
#ifndef SHARDPLAN_CORE_MODEL_JSON_H_
#define SHARDPLAN_CORE_MODEL_JSON_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace shardplan::json {

enum class Error : uint8_t {
  kNone,
  kDocumentEmpty,
  kRootNotSingular,
  kValueInvalid,
  kObjectMissName,
  kObjectMissColon,
  kObjectMissCommaOrCurlyBracket,
  kArrayMissCommaOrSquareBracket,
  kStringUnicodeEscapeInvalidHex,
  kStringUnicodeSurrogateInvalid,
  kStringEscapeInvalid,
  kStringMissQuotationMark,
  kNumberTooBig,
  kNumberMissFraction,
  kNumberMissExponent,
  kTooDeep,  // nesting beyond the reader's limit
};
std::string_view ErrorMessage(Error error);

struct Member;

class Value {
 public:
  enum class Type : uint8_t { kNull, kBool, kNumber, kString, kArray, kObject };

  Value() = default;  // null
  static Value String(std::string_view s) {
    Value v(Type::kString, s.size());
    v.str_ = s.data();
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
  // An integer literal (no fraction or exponent) within int64's range.
  bool IsInt64() const { return type_ == Type::kNumber && flag_; }

  bool GetBool() const { return flag_; }
  int64_t GetInt64() const { return int_; }
  // A number's value: an int64 exactly, any other number the nearest double.
  double GetDouble() const;
  std::string_view str() const { return {str_, size_}; }
  size_t Size() const { return size_; }  // of an array
  const Value& operator[](size_t i) const { return elements_[i]; }
  size_t MemberCount() const { return size_; }
  const Member* MemberBegin() const { return members_; }
  const Member* MemberEnd() const;

 private:
  friend class Reader;
  Value(Type type, size_t size) : type_(type), size_(static_cast<uint32_t>(size)) {}

  Type type_ = Type::kNull;
  bool flag_ = false;  // kBool: the value; kNumber: IsInt64
  uint32_t size_ = 0;  // string or non-int64 number bytes, array elements or object members
  union {
    int64_t int_ = 0;
    const char* str_;  // a string's, or a number's that is not an int64
    const Value* elements_;
    const Member* members_;
  };
};

struct Member {
  Value name;  // a string
  Value value;
};

inline const Member* Value::MemberEnd() const { return members_ + size_; }

class Reader {
 public:
  // Values nest at most `max_depth` arrays and objects deep, counting the
  // containers the cursor is in (see Enter) and the value's own.
  Reader(std::string_view text, int max_depth);
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // The cursor: the byte under it ('\0' at the end), moving past spaces.
  char Peek() const { return p_ < end_ ? *p_ : '\0'; }
  void Skip() { ++p_; }
  void SkipSpace() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  size_t offset() const { return static_cast<size_t>(p_ - begin_); }
  void Seek(size_t offset) { p_ = begin_ + offset; }

  // Reads the string at the cursor (on its '"'); false on an error.
  bool ReadString(std::string_view& out);
  // Reads the value at the cursor, `depth` containers deep; false on an
  // error.
  bool ReadValue(Value& out, int depth);
  // Records a syntax error at the cursor, or at `offset`; returns false.
  bool Fail(Error error) { return FailAt(error, p_); }
  bool FailAt(Error error, size_t offset) { return FailAt(error, begin_ + offset); }

  // A copy of `members` in the arena.
  Value MakeObject(const std::vector<Member>& members);
  // Arena marks: Release frees everything allocated since the Mark.
  struct Mark {
    size_t block, used;
  };
  Mark GetMark() const { return {block_, used_}; }
  void Release(Mark mark) {
    block_ = mark.block;
    used_ = mark.used;
  }

  Error error() const { return error_; }
  size_t error_offset() const { return error_offset_; }

 private:
  bool FailAt(Error error, const char* at);
  // The value readers return what they read (16 trivially copyable bytes,
  // in registers); on an error, a null Value with failed_ set. Written to
  // the caller's stack, a value was read back at once as one 16-byte load
  // of two narrower stores, which the store buffer cannot forward.
  Value Failed(Error error) {
    Fail(error);
    return Value();
  }
  Value Read(int depth);
  Value ReadNumber();
  Value ReadLiteral(std::string_view word);
  Value ReadArray(int depth);
  Value ReadObject(int depth);
  // Decodes the escapes of the string whose body starts at `body`, from the
  // first backslash at the cursor.
  bool ReadEscapedString(const char* body, std::string_view& out);
  void* Allocate(size_t bytes);
  template <typename T>
  const T* CopyToArena(const T* items, size_t count);

  const char* const begin_;
  const char* p_;
  const char* const end_;
  const int max_depth_;
  Error error_ = Error::kNone;
  bool failed_ = false;  // since ReadValue began
  size_t error_offset_ = 0;
  // Containers being read hold their items here until they end.
  std::vector<Value> elements_;
  std::vector<Member> members_;
  std::string decoded_;
  // The arena: blocks are kept once allocated and reused after a Release.
  std::vector<std::pair<std::unique_ptr<char[]>, size_t>> blocks_;
  size_t block_ = 0;  // the block allocations come from
  size_t used_ = 0;   // bytes used in it
};

}  // namespace shardplan::json

#endif  // SHARDPLAN_CORE_MODEL_JSON_H_
