#include "core/model/json.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/text/utf8.h"

namespace shardplan::json {
namespace {

constexpr size_t kBlockSize = 64 * 1024;

bool IsSpecial(char c) { return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20; }

// The first '"', '\\' or control byte in [p, end), or end: sixteen bytes at
// a time (most strings end within the first sixteen), then one by one.
// The sixteen are one vector of GCC's and Clang's vector extension, which
// each target computes with its SIMD instructions where it has them (SSE2,
// NEON, WebAssembly SIMD) and element by element elsewhere.
const char* FindSpecial(const char* p, const char* end) {
  using Bytes = unsigned char __attribute__((vector_size(16)));
  for (; end - p >= 16; p += 16) {
    Bytes bytes;
    std::memcpy(&bytes, p, sizeof bytes);
    // Each byte of `special` is 0xFF where bytes has a special byte, else 0.
    const auto special = (bytes == '"') | (bytes == '\\') | (bytes < 0x20);
    // Byte k of the sixteen is byte k % 8 of halves[k / 8], counted from
    // the least significant on a little-endian target.
    static_assert(std::endian::native == std::endian::little);
    uint64_t halves[2];
    std::memcpy(halves, &special, sizeof halves);
    if (halves[0] != 0) return p + std::countr_zero(halves[0]) / 8;
    if (halves[1] != 0) return p + 8 + std::countr_zero(halves[1]) / 8;
  }
  for (; p < end; ++p) {
    if (IsSpecial(*p)) return p;
  }
  return end;
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string_view ErrorMessage(Error error) {
  switch (error) {
    case Error::kNone:
      return "No error.";
    case Error::kDocumentEmpty:
      return "The document is empty.";
    case Error::kRootNotSingular:
      return "The document root must not be followed by other values.";
    case Error::kValueInvalid:
      return "Invalid value.";
    case Error::kObjectMissName:
      return "Missing a name for object member.";
    case Error::kObjectMissColon:
      return "Missing a colon after a name of object member.";
    case Error::kObjectMissCommaOrCurlyBracket:
      return "Missing a comma or '}' after an object member.";
    case Error::kArrayMissCommaOrSquareBracket:
      return "Missing a comma or ']' after an array element.";
    case Error::kStringUnicodeEscapeInvalidHex:
      return "Incorrect hex digit after \\u escape in string.";
    case Error::kStringUnicodeSurrogateInvalid:
      return "The surrogate pair in string is invalid.";
    case Error::kStringEscapeInvalid:
      return "Invalid escape character in string.";
    case Error::kStringMissQuotationMark:
      return "Missing a closing quotation mark in string.";
    case Error::kNumberTooBig:
      return "Number too big to be stored in double.";
    case Error::kNumberMissFraction:
      return "Miss fraction part in number.";
    case Error::kNumberMissExponent:
      return "Miss exponent in number.";
    case Error::kTooDeep:
      return "Nesting too deep.";
  }
  return "Unknown error.";
}

Reader::Reader(std::string_view text, int max_depth)
    : begin_(text.data()), p_(text.data()), end_(text.data() + text.size()), max_depth_(max_depth) {}

bool Reader::FailAt(Error error, const char* at) {
  failed_ = true;
  error_ = error;
  error_offset_ = static_cast<size_t>(at - begin_);
  return false;
}

void* Reader::Allocate(size_t bytes) {
  bytes = (bytes + 7) & ~size_t{7};
  while (true) {
    if (block_ < blocks_.size()) {
      auto& [block, size] = blocks_[block_];
      if (size - used_ >= bytes) {
        void* at = block.get() + used_;
        used_ += bytes;
        return at;
      }
      if (block_ + 1 < blocks_.size()) {
        ++block_;
        used_ = 0;
        continue;
      }
    }
    const size_t size = std::max(kBlockSize, bytes);
    blocks_.emplace_back(std::make_unique<char[]>(size), size);
    block_ = blocks_.size() - 1;
    used_ = 0;
  }
}

template <typename T>
const T* Reader::CopyToArena(const T* items, size_t count) {
  if (count == 0) return nullptr;
  void* at = Allocate(count * sizeof(T));
  std::memcpy(at, items, count * sizeof(T));
  return static_cast<const T*>(at);
}

Value Reader::MakeObject(const std::vector<Member>& members) {
  return Value::Object(CopyToArena(members.data(), members.size()), members.size());
}

bool Reader::ReadString(std::string_view& out) {
  const char* const body = ++p_;  // past the opening '"'
  p_ = FindSpecial(p_, end_);
  if (p_ == end_) return Fail(Error::kStringMissQuotationMark);
  if (*p_ == '"') {
    out = std::string_view(body, static_cast<size_t>(p_ - body));
    ++p_;
    return true;
  }
  if (*p_ == '\\') return ReadEscapedString(body, out);
  return Fail(Error::kStringEscapeInvalid);  // a control character
}

bool Reader::ReadEscapedString(const char* body, std::string_view& out) {
  decoded_.assign(body, p_);
  while (true) {
    if (p_ == end_) return Fail(Error::kStringMissQuotationMark);
    const char c = *p_;
    if (c == '"') break;
    if (static_cast<unsigned char>(c) < 0x20) return Fail(Error::kStringEscapeInvalid);
    if (c != '\\') {
      decoded_ += c;
      ++p_;
      continue;
    }
    const char* const escape = p_++;
    const char e = Peek();
    char simple = 0;
    switch (e) {
      case '"':
      case '\\':
      case '/':
        simple = e;
        break;
      case 'b':
        simple = '\b';
        break;
      case 'f':
        simple = '\f';
        break;
      case 'n':
        simple = '\n';
        break;
      case 'r':
        simple = '\r';
        break;
      case 't':
        simple = '\t';
        break;
      case 'u':
        break;
      default:
        return FailAt(Error::kStringEscapeInvalid, escape);
    }
    ++p_;
    if (e != 'u') {
      decoded_ += simple;
      continue;
    }
    auto hex4 = [&](uint32_t& cp) {
      cp = 0;
      for (int i = 0; i < 4; ++i) {
        const int digit = HexDigit(Peek());
        if (digit < 0) return FailAt(Error::kStringUnicodeEscapeInvalidHex, escape);
        cp = cp * 16 + static_cast<uint32_t>(digit);
        ++p_;
      }
      return true;
    };
    uint32_t cp;
    if (!hex4(cp)) return false;
    if (cp >= 0xD800 && cp <= 0xDBFF) {  // a high surrogate: a low one must follow
      uint32_t low;
      if (Peek() != '\\') return FailAt(Error::kStringUnicodeSurrogateInvalid, escape);
      ++p_;
      if (Peek() != 'u') return FailAt(Error::kStringUnicodeSurrogateInvalid, escape);
      ++p_;
      if (!hex4(low)) return false;
      if (low < 0xDC00 || low > 0xDFFF) return FailAt(Error::kStringUnicodeSurrogateInvalid, escape);
      cp = (((cp - 0xD800) << 10) | (low - 0xDC00)) + 0x10000;
    }
    utf8::Append(decoded_, cp);  // a lone low surrogate too, as RapidJSON does
  }
  ++p_;  // the closing '"'
  char* copy = static_cast<char*>(Allocate(std::max<size_t>(decoded_.size(), 1)));
  if (!decoded_.empty()) std::memcpy(copy, decoded_.data(), decoded_.size());
  out = std::string_view(copy, decoded_.size());
  return true;
}

// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
Value Reader::ReadNumber() {
  const char* const start = p_;
  const bool negative = Peek() == '-';
  if (negative) ++p_;
  auto digit = [&] { return p_ < end_ && *p_ >= '0' && *p_ <= '9'; };
  if (!digit()) return Failed(Error::kValueInvalid);
  uint64_t magnitude = 0;
  bool overflow = false;
  if (*p_ == '0') {
    ++p_;
  } else {
    const char* const digits = p_;
    for (; digit(); ++p_) magnitude = magnitude * 10 + static_cast<uint64_t>(*p_ - '0');
    // 19 digits always fit 64 bits; only longer runs need the careful sum.
    if (p_ - digits > 19) {
      magnitude = 0;
      for (const char* q = digits; q < p_; ++q) {
        const uint64_t d = static_cast<uint64_t>(*q - '0');
        if (magnitude > (UINT64_MAX - d) / 10) overflow = true;
        magnitude = magnitude * 10 + d;
      }
    }
  }
  bool integer = true;
  if (Peek() == '.') {
    integer = false;
    ++p_;
    if (!digit()) return Failed(Error::kNumberMissFraction);
    while (digit()) ++p_;
  }
  if (Peek() == 'e' || Peek() == 'E') {
    integer = false;
    ++p_;
    if (Peek() == '+' || Peek() == '-') ++p_;
    if (!digit()) return Failed(Error::kNumberMissExponent);
    while (digit()) ++p_;
  }
  Value out(Value::Type::kNumber, 0);
  constexpr uint64_t kInt64Max = static_cast<uint64_t>(INT64_MAX);
  if (integer && !overflow && magnitude <= kInt64Max + (negative ? 1 : 0)) {
    out.flag_ = true;
    out.int_ = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
    return out;
  }
  // Not an int64: it must fit a double; its text is kept for GetDouble.
  const std::string text(start, p_);
  if (std::isinf(std::strtod(text.c_str(), nullptr))) {
    FailAt(Error::kNumberTooBig, start);
    return Value();
  }
  out.size_ = static_cast<uint32_t>(p_ - start);
  out.str_ = start;
  return out;
}

double Value::GetDouble() const {
  if (flag_) return static_cast<double>(int_);
  return std::strtod(std::string(str_, size_).c_str(), nullptr);
}

Value Reader::ReadLiteral(std::string_view word) {
  for (char c : word) {
    if (Peek() != c) return Failed(Error::kValueInvalid);
    ++p_;
  }
  if (word == "null") return Value();
  Value out(Value::Type::kBool, 0);
  out.flag_ = word == "true";
  return out;
}

bool Reader::ReadValue(Value& out, int depth) {
  failed_ = false;
  out = Read(depth);
  return !failed_;
}

Value Reader::Read(int depth) {
  switch (Peek()) {
    case '{':
      return ReadObject(depth + 1);
    case '[':
      return ReadArray(depth + 1);
    case '"': {
      std::string_view s;
      if (!ReadString(s)) return Value();
      return Value::String(s);
    }
    case 'n':
      return ReadLiteral("null");
    case 't':
      return ReadLiteral("true");
    case 'f':
      return ReadLiteral("false");
    default:
      return ReadNumber();
  }
}

Value Reader::ReadArray(int depth) {
  ++p_;
  if (depth > max_depth_) return Failed(Error::kTooDeep);
  const size_t base = elements_.size();
  SkipSpace();
  if (Peek() != ']') {
    while (true) {
      const Value element = Read(depth);
      if (failed_) return Value();
      elements_.push_back(element);
      SkipSpace();
      if (Peek() == ',') {
        ++p_;
        SkipSpace();
      } else if (Peek() == ']') {
        break;
      } else {
        return Failed(Error::kArrayMissCommaOrSquareBracket);
      }
    }
  }
  ++p_;
  const size_t count = elements_.size() - base;
  Value out(Value::Type::kArray, count);
  out.elements_ = CopyToArena(elements_.data() + base, count);
  elements_.resize(base);
  return out;
}

Value Reader::ReadObject(int depth) {
  ++p_;
  if (depth > max_depth_) return Failed(Error::kTooDeep);
  const size_t base = members_.size();
  SkipSpace();
  if (Peek() != '}') {
    while (true) {
      if (Peek() != '"') return Failed(Error::kObjectMissName);
      std::string_view name;
      if (!ReadString(name)) return Value();
      SkipSpace();
      if (Peek() != ':') return Failed(Error::kObjectMissColon);
      ++p_;
      SkipSpace();
      const Value value = Read(depth);
      if (failed_) return Value();
      // Fields set in place: a Member built first went through the stack.
      Member& member = members_.emplace_back();
      member.name = Value::String(name);
      member.value = value;
      SkipSpace();
      if (Peek() == ',') {
        ++p_;
        SkipSpace();
      } else if (Peek() == '}') {
        break;
      } else {
        return Failed(Error::kObjectMissCommaOrCurlyBracket);
      }
    }
  }
  ++p_;
  const size_t count = members_.size() - base;
  const Value out = Value::Object(CopyToArena(members_.data() + base, count), count);
  members_.resize(base);
  return out;
}

}  // namespace shardplan::json
