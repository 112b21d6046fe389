#include "core/model/json_reader.h"

#include <atomic>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/exec/parallel.h"
#include "rapidjson/allocators.h"
#include "rapidjson/error/en.h"
#include "rapidjson/reader.h"

namespace shardplan::json {
namespace {

using Arena = rapidjson::MemoryPoolAllocator<>;

// Every value is read with RapidJSON's defaults (RFC 8259, nothing more; the
// text not validated as UTF-8 again), stopping at the value's end (the walk
// below reads what follows it), and with numbers handed over as spelled:
// whether one is an int64, and whether it fits a double, is decided on its
// spelling.
constexpr unsigned kParseFlags = rapidjson::kParseStopWhenDoneFlag | rapidjson::kParseNumbersAsStringsFlag;

static_assert(sizeof(Member) == 2 * sizeof(Value) && offsetof(Member, value) == sizeof(Value),
              "an object's members are its name and value events, copied as they come");

// The text from a cursor, as a RapidJSON input stream (its Stream concept).
// Peek and Take give '\0' at the end of the text, which the text never holds
// itself, so RapidJSON reads the end of the text as the end of its input.
class TextStream {
 public:
  using Ch = char;

  TextStream(std::string_view text, size_t offset)
      : begin_(text.data()), p_(text.data() + offset), end_(text.data() + text.size()) {}

  char Peek() const { return p_ == end_ ? '\0' : *p_; }
  char Take() { return p_ == end_ ? '\0' : *p_++; }
  size_t Tell() const { return static_cast<size_t>(p_ - begin_); }
  void Seek(size_t offset) { p_ = begin_ + offset; }

  // Writing, which RapidJSON does only when it parses in place: never.
  char* PutBegin() {
    assert(false);
    return nullptr;
  }
  void Put(char) { assert(false); }
  void Flush() { assert(false); }
  size_t PutEnd(char*) {
    assert(false);
    return 0;
  }

 private:
  const char* begin_;
  const char* p_;
  const char* end_;
};

}  // namespace
}  // namespace shardplan::json

// RapidJSON copies a TextStream (three pointers) into registers while it
// reads a string or a number, as it does its own string streams.
template <>
struct rapidjson::StreamTraits<shardplan::json::TextStream> {
  enum { copyOptimization = 1 };
};

namespace shardplan::json {
namespace {

// Builds a Value from RapidJSON's events (its Handler concept), in an arena:
// scalars and member names are pushed on a stack, and an array or object
// takes its items off the stack into the arena when it ends. Refuses (returns
// false, which stops RapidJSON with kParseErrorTermination) a container that
// nests too deep and a number too big for a double.
class ValueBuilder {
 public:
  ValueBuilder(int max_depth, Arena& arena) : max_depth_(max_depth), arena_(arena) {}

  // Readies the builder for a value that `depth` arrays and objects enclose.
  void Start(int depth) {
    depth_ = depth;
    too_deep_ = too_big_ = false;
    stack_.clear();
  }
  // The value built (after a successful read).
  Value Result() const { return stack_.back(); }
  bool too_deep() const { return too_deep_; }
  bool too_big() const { return too_big_; }

  bool Null() { return Push(Value()); }
  bool Bool(bool b) { return Push(Value::Bool(b)); }
  // A number as spelled, NUL-terminated (kParseNumbersAsStringsFlag): an
  // int64 when it is an integer literal in range, else any number whose
  // value strtod finds finite.
  bool RawNumber(const char* s, rapidjson::SizeType n, bool) {
    const std::string_view spelled(s, n);
    if (spelled.find_first_of(".eE") == std::string_view::npos) {
      int64_t i;
      const auto [end, error] = std::from_chars(s, s + n, i);
      if (error == std::errc() && end == s + n) return Push(Value::Int64(i));
    }
    if (std::isinf(std::strtod(s, nullptr))) {
      too_big_ = true;
      return false;
    }
    return Push(Value::Number());
  }
  // Numbers come as spelled (RawNumber).
  bool Int(int) { return false; }
  bool Uint(unsigned) { return false; }
  bool Int64(int64_t) { return false; }
  bool Uint64(uint64_t) { return false; }
  bool Double(double) { return false; }
  bool String(const char* s, rapidjson::SizeType n, bool) { return Push(Value::String(Keep(s, n))); }
  bool Key(const char* s, rapidjson::SizeType n, bool) { return Push(Value::String(Keep(s, n))); }
  bool StartObject() { return Enter(); }
  bool StartArray() { return Enter(); }
  bool EndObject(rapidjson::SizeType count) {
    --depth_;
    auto* members = static_cast<Member*>(Copy(2 * size_t{count}));
    return Push(Value::Object(members, count));
  }
  bool EndArray(rapidjson::SizeType count) {
    --depth_;
    auto* elements = static_cast<Value*>(Copy(count));
    return Push(Value::Array(elements, count));
  }

 private:
  bool Push(const Value& v) {
    stack_.push_back(v);
    return true;
  }
  bool Enter() {
    if (++depth_ > max_depth_) {
      too_deep_ = true;
      return false;
    }
    return true;
  }
  // Moves the last `count` values off the stack into the arena (null for
  // none).
  void* Copy(size_t count) {
    void* items = arena_.Malloc(count * sizeof(Value));
    if (count > 0) std::memcpy(items, stack_.data() + stack_.size() - count, count * sizeof(Value));
    stack_.resize(stack_.size() - count);
    return items;
  }
  // A copy in the arena of the string RapidJSON decoded into `s`, which is
  // its own until the next event. An empty one is never null: a name's
  // view with null data stands for an array index in the parser's pointers.
  std::string_view Keep(const char* s, size_t n) {
    if (n == 0) return std::string_view("", 0);
    auto* copy = static_cast<char*>(arena_.Malloc(n));
    std::memcpy(copy, s, n);
    return {copy, n};
  }

  const int max_depth_;
  Arena& arena_;
  int depth_ = 0;
  bool too_deep_ = false;
  bool too_big_ = false;
  std::vector<Value> stack_;
};

// Reads values and member names at a cursor with RapidJSON, into an arena,
// and holds the first syntax error met (by it or by the walk that uses it).
class ValueReader {
 public:
  ValueReader(int max_depth, Arena& arena)
      : max_depth_(max_depth), arena_(arena), builder_(max_depth, arena) {}

  // Reads the value at the cursor, which `depth` arrays and objects
  // enclose; false on an error.
  bool ReadValue(TextStream& is, int depth, Value& out) {
    // In an object or array, RapidJSON reads a value missing at the end as
    // an invalid one, not as an empty document.
    if (is.Peek() == '\0') return Fail(rapidjson::kParseErrorValueInvalid, is.Tell());
    builder_.Start(depth);
    const rapidjson::ParseResult result = reader_.Parse<kParseFlags>(is, builder_);
    if (result.IsError()) {
      if (result.Code() == rapidjson::kParseErrorTermination && builder_.too_deep()) {
        return FailTooDeep(result.Offset());
      }
      if (result.Code() == rapidjson::kParseErrorTermination && builder_.too_big()) {
        return Fail(rapidjson::kParseErrorNumberTooBig, result.Offset());
      }
      return Fail(result.Code(), result.Offset());
    }
    out = builder_.Result();
    return true;
  }
  // Reads the string at the cursor (on its '"'), a member's name.
  bool ReadName(TextStream& is, std::string_view& name) {
    Value v;
    if (!ReadValue(is, 0, v)) return false;
    name = v.str();
    return true;
  }
  // A copy of `members` in the arena, as an object.
  Value MakeObject(const std::vector<Member>& members) {
    auto* copy = static_cast<Member*>(arena_.Malloc(members.size() * sizeof(Member)));
    if (!members.empty()) std::memcpy(copy, members.data(), members.size() * sizeof(Member));
    return Value::Object(copy, members.size());
  }

  // Record an error; return false.
  bool Fail(rapidjson::ParseErrorCode code, size_t offset) {
    error_ = {false, rapidjson::GetParseError_En(code), offset};
    return false;
  }
  bool FailTooDeep(size_t offset) {
    error_ = {true, "", offset};
    return false;
  }
  bool Fail(const SyntaxError& error) {
    error_ = error;
    return false;
  }
  const SyntaxError& error() const { return error_; }
  int max_depth() const { return max_depth_; }

 private:
  const int max_depth_;
  Arena& arena_;
  rapidjson::Reader reader_;
  ValueBuilder builder_;
  SyntaxError error_;
};

// The steps of reading an object around streamed members, taken as
// RapidJSON's own object parser takes them (whitespace skipped after '{',
// ':' and ','), each false on a syntax error, recorded in `r`.
//
// Past the '{' at the cursor of an object that `depth` arrays and objects
// enclose, itself included; `empty` when its '}' follows at once (and was
// read).
bool OpenObject(ValueReader& r, TextStream& is, int depth, bool& empty) {
  is.Take();
  if (depth > r.max_depth()) return r.FailTooDeep(is.Tell());
  rapidjson::SkipWhitespace(is);
  empty = is.Peek() == '}';
  if (empty) is.Take();
  return true;
}

// A member's name and colon; the cursor is left on its value.
bool ReadName(ValueReader& r, TextStream& is, std::string_view& name) {
  if (is.Peek() != '"') return r.Fail(rapidjson::kParseErrorObjectMissName, is.Tell());
  if (!r.ReadName(is, name)) return false;
  rapidjson::SkipWhitespace(is);
  if (is.Peek() != ':') return r.Fail(rapidjson::kParseErrorObjectMissColon, is.Tell());
  is.Take();
  rapidjson::SkipWhitespace(is);
  return true;
}

// What follows a member's value: ',' (then `last` is false) or the
// object's '}' (true).
bool ReadSeparator(ValueReader& r, TextStream& is, bool& last) {
  rapidjson::SkipWhitespace(is);
  last = is.Peek() == '}';
  if (is.Peek() != ',' && !last) return r.Fail(rapidjson::kParseErrorObjectMissCommaOrCurlyBracket, is.Tell());
  is.Take();
  if (!last) rapidjson::SkipWhitespace(is);
  return true;
}

// Reads the object at the cursor, which `depth` arrays and objects enclose,
// itself included, calling member(name) with the cursor on each member's
// value, which it reads.
template <typename Member>
bool ReadMembers(ValueReader& r, TextStream& is, int depth, Member&& member) {
  bool last = false;
  if (!OpenObject(r, is, depth, last)) return false;
  while (!last) {
    std::string_view name;
    if (!ReadName(r, is, name) || !member(name) || !ReadSeparator(r, is, last)) return false;
  }
  return true;
}

// Members of a streamed map read together, with the reader and the memory
// they were read into.
struct Batch {
  // The arena's first block, kept when the arena is cleared for the next
  // batch.
  static constexpr size_t kBuffer = 64 * 1024;

  explicit Batch(int max_depth)
      : buffer(std::make_unique_for_overwrite<char[]>(kBuffer)), arena(buffer.get(), kBuffer), reader(max_depth, arena) {}

  std::unique_ptr<char[]> buffer;
  Arena arena;
  ValueReader reader;
  std::vector<Item> items;
  bool failed = false;  // the batch ends at reader's syntax error
};

// One reading of a document: the top level, and the streamed maps.
class Walk {
 public:
  Walk(std::string_view text, int max_depth, Arena& arena, ItemSink sink)
      : text_(text), max_depth_(max_depth), reader_(max_depth, arena), sink_(sink) {}

  // False on a syntax error (reader().error()) or when the sink refused a
  // member (sink_failed()).
  bool Run(Value& skeleton) {
    TextStream is(text_, 0);
    rapidjson::SkipWhitespace(is);
    if (is.Peek() == '\0') return reader_.Fail(rapidjson::kParseErrorDocumentEmpty, is.Tell());
    if (is.Peek() != '{') {
      // Not an object: one value, which the parser then refuses.
      if (!reader_.ReadValue(is, 0, skeleton)) return false;
    } else {
      std::vector<Member> members;
      const bool ok = ReadMembers(reader_, is, 1, [&](std::string_view name) {
        Value value;
        if (!TopLevelValue(is, name, value)) return false;
        members.push_back({Value::String(name), value});
        return true;
      });
      if (!ok) return false;
      skeleton = reader_.MakeObject(members);
    }
    rapidjson::SkipWhitespace(is);
    if (is.Peek() != '\0') return reader_.Fail(rapidjson::kParseErrorDocumentRootNotSingular, is.Tell());
    return true;
  }

  const ValueReader& reader() const { return reader_; }
  bool sink_failed() const { return sink_failed_; }

 private:
  // The value of top-level member `name`: a streamed map is handed to the
  // sink and stands empty; providers and plan are read member by member, to
  // stream their map.
  bool TopLevelValue(TextStream& is, std::string_view name, Value& value) {
    if ((name == "parameters" || name == "modules") && is.Peek() == '{') {
      if (!StreamMap(is, name == "parameters" ? Section::kParameters : Section::kModules, 2)) return false;
      value = Value::Object(nullptr, 0);
      return true;
    }
    if ((name == "providers" || name == "plan") && is.Peek() == '{') {
      const bool plan = name == "plan";
      std::vector<Member> members;
      const bool ok = ReadMembers(reader_, is, 2, [&](std::string_view inner) {
        Value member;
        if (inner == (plan ? "modules" : "sharding") && is.Peek() == '{') {
          if (!StreamMap(is, plan ? Section::kPlan : Section::kProviders, 3)) return false;
          member = Value::Object(nullptr, 0);
        } else if (!reader_.ReadValue(is, 2, member)) {
          return false;
        }
        members.push_back({Value::String(inner), member});
        return true;
      });
      if (!ok) return false;
      value = reader_.MakeObject(members);
      return true;
    }
    return reader_.ReadValue(is, 1, value);
  }

  // Hands each member of the map at the cursor to the sink, the map nesting
  // `depth` deep. Reading the members and taking them overlap: a pipeline
  // reads batches of members, each with its own reader and arena, while the
  // sink takes the batches before them in document order. The first error
  // in document order wins, as in a serial read: a batch ends at a syntax
  // error, the sink takes the members before it first, and reading stops
  // once the sink has refused one.
  bool StreamMap(TextStream& is, Section section, int depth) {
    // What the reading stage reads and writes member after member, on a
    // cache line of its own: among this frame's other locals it could share
    // a line with what the sink's stage, on the other thread, writes.
    struct alignas(64) ProducerState {
      bool done = false;
      size_t next = 0, offset = 0;
      // The last member's value text: an object value spelled the same way
      // ends where its copy does and parses to the same value, so a layout
      // map's repeats are compared, not read (Item::unread).
      std::string_view previous;
    } state;
    if (!OpenObject(reader_, is, depth, state.done)) return false;
    if (state.done) return true;
    constexpr size_t kLive = 4, kBatchItems = 256;
    std::vector<std::unique_ptr<Batch>> ring;
    for (size_t i = 0; i < kLive; ++i) ring.push_back(std::make_unique<Batch>(max_depth_));
    state.offset = is.Tell();
    const bool layouts = section == Section::kProviders || section == Section::kPlan;
    const Batch* failed_batch = nullptr;
    std::atomic<bool> sink_failed{false};
    auto produce = [&]() -> Batch* {
      if (state.done || sink_failed.load(std::memory_order_relaxed)) return nullptr;
      Batch& batch = *ring[state.next++ % kLive];
      batch.arena.Clear();
      batch.items.clear();
      batch.failed = false;
      TextStream bs(text_, state.offset);
      while (batch.items.size() < kBatchItems && !state.done) {
        std::string_view key;
        if (!ReadName(batch.reader, bs, key)) {
          batch.failed = true;
          break;
        }
        const size_t start = bs.Tell();
        const bool repeat = layouts && !state.previous.empty() && state.previous.front() == '{' &&
                            text_.substr(start, state.previous.size()) == state.previous;
        Value value;
        if (repeat) {
          bs.Seek(start + state.previous.size());
        } else if (!batch.reader.ReadValue(bs, depth, value)) {
          batch.failed = true;
          break;
        }
        state.previous = text_.substr(start, bs.Tell() - start);
        // Taken by the sink even when a separator error follows.
        batch.items.push_back({key, value, repeat});
        if (!ReadSeparator(batch.reader, bs, state.done)) {
          batch.failed = true;
          break;
        }
      }
      state.done = state.done || batch.failed;
      state.offset = bs.Tell();
      return &batch;
    };
    auto consume = [&](Batch& batch) {
      if (sink_failed.load(std::memory_order_relaxed)) return;
      if (!sink_(section, batch.items)) {
        sink_failed.store(true, std::memory_order_relaxed);
        return;
      }
      if (batch.failed) failed_batch = &batch;
    };
    Pipeline<Batch>(kLive, produce, consume);
    if (sink_failed.load()) {
      sink_failed_ = true;
      return false;
    }
    if (failed_batch != nullptr) return reader_.Fail(failed_batch->reader.error());
    is.Seek(state.offset);
    return true;
  }

  const std::string_view text_;
  const int max_depth_;
  ValueReader reader_;
  ItemSink sink_;
  bool sink_failed_ = false;
};

}  // namespace

struct DocumentReader::Memory {
  Arena arena;
};

DocumentReader::DocumentReader(std::string_view text, int max_depth)
    : text_(text), max_depth_(max_depth), memory_(std::make_unique<Memory>()) {}

DocumentReader::~DocumentReader() = default;

bool DocumentReader::Read(ItemSink sink, Value& skeleton) {
  Walk walk(text_, max_depth_, memory_->arena, sink);
  if (walk.Run(skeleton)) return true;
  if (!walk.sink_failed()) error_ = walk.reader().error();
  return false;
}

}  // namespace shardplan::json
