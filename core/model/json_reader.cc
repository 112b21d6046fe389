#include "core/model/json_reader.h"

#include <atomic>
#include <iterator>
#include <memory>
#include <utility>
#include <vector>

#include "core/exec/parallel.h"

namespace shardplan::json {
namespace {

// The steps of reading an object around streamed members, taken as
// RapidJSON's own object parser takes them (whitespace skipped after '{',
// ':' and ','), each false on a syntax error, recorded in `r`.
//
// Past the '{' at the cursor of an object that `depth` arrays and objects
// enclose, itself included; `empty` when its '}' follows at once (and was
// read).
bool OpenObject(Reader& r, int depth, int max_depth, bool& empty) {
  r.Skip();  // '{'
  if (depth > max_depth) return r.Fail(Error::kTooDeep);
  r.SkipSpace();
  empty = r.Peek() == '}';
  if (empty) r.Skip();
  return true;
}

// A member's name and colon; the cursor is left on its value.
bool ReadName(Reader& r, std::string_view& name) {
  if (r.Peek() != '"') return r.Fail(Error::kObjectMissName);
  if (!r.ReadString(name)) return false;
  r.SkipSpace();
  if (r.Peek() != ':') return r.Fail(Error::kObjectMissColon);
  r.Skip();
  r.SkipSpace();
  return true;
}

// What follows a member's value: ',' (then `last` is false) or the object's
// '}' (true).
bool ReadSeparator(Reader& r, bool& last) {
  r.SkipSpace();
  last = r.Peek() == '}';
  if (r.Peek() != ',' && !last) return r.Fail(Error::kObjectMissCommaOrCurlyBracket);
  r.Skip();
  if (!last) r.SkipSpace();
  return true;
}

// Members of a streamed map read together, with the reader whose arena
// holds them.
struct Batch {
  Batch(std::string_view text, int max_depth) : reader(text, max_depth), mark(reader.GetMark()) {}

  Reader reader;
  Reader::Mark mark;  // the arena's start, released for the next batch
  std::vector<Item> items;
  std::vector<HashedName> names;  // NamePrepare's for the items
  bool failed = false;  // the batch ends at reader's syntax error
};

// One reading of a document: the top level, and the streamed maps.
class Walk {
 public:
  Walk(std::string_view text, int max_depth, bool skip_repeats, Reader& reader, NamePrepare prepare,
       PreparedSink sink)
      : text_(text),
        max_depth_(max_depth),
        skip_repeats_(skip_repeats),
        reader_(reader),
        prepare_(prepare),
        sink_(sink) {}

  // False on a syntax error (in the reader) or when the sink refused a
  // member (sink_failed()).
  bool Run(Value& skeleton) {
    reader_.SkipSpace();
    if (reader_.Peek() == '\0') return reader_.Fail(Error::kDocumentEmpty);
    if (reader_.Peek() != '{') {
      // Not an object: one value, which the parser then refuses.
      if (!reader_.ReadValue(skeleton, 0)) return false;
    } else {
      std::vector<Member> members;
      const bool ok = ReadMembers(1, [&](std::string_view name) {
        Value value;
        if (!TopLevelValue(name, value)) return false;
        members.push_back({Value::String(name), value});
        return true;
      });
      if (!ok) return false;
      skeleton = reader_.MakeObject(members);
    }
    reader_.SkipSpace();
    return reader_.Peek() == '\0' || reader_.Fail(Error::kRootNotSingular);
  }

  bool sink_failed() const { return sink_failed_; }

 private:
  // Reads the object at the cursor, which `depth` arrays and objects
  // enclose, itself included, calling member(name) with the cursor on each
  // member's value, which it reads.
  template <typename MemberFn>
  bool ReadMembers(int depth, MemberFn&& member) {
    bool last = false;
    if (!OpenObject(reader_, depth, max_depth_, last)) return false;
    while (!last) {
      std::string_view name;
      if (!ReadName(reader_, name) || !member(name) || !ReadSeparator(reader_, last)) return false;
    }
    return true;
  }

  // The value of top-level member `name`: a streamed map is handed to the
  // sink and stands empty; providers and plan are read member by member, to
  // stream their map. A name given again is a duplicate key, which parsing
  // reports at it: its value is read whole instead, so that nothing inside
  // it is reported first, at a JSON pointer that names the first value.
  bool TopLevelValue(std::string_view name, Value& value) {
    if (!FirstTime(name)) return reader_.ReadValue(value, 1);
    if ((name == "parameters" || name == "modules") && reader_.Peek() == '{') {
      if (!StreamMap(name == "parameters" ? Section::kParameters : Section::kModules, 2)) return false;
      value = Value::Object(nullptr, 0);
      return true;
    }
    if ((name == "providers" || name == "plan") && reader_.Peek() == '{') {
      const bool plan = name == "plan";
      std::vector<Member> members;
      bool map_read = false;
      const bool ok = ReadMembers(2, [&](std::string_view inner) {
        Value member;
        const bool map = inner == (plan ? "modules" : "sharding") && !std::exchange(map_read, true);
        if (map && reader_.Peek() == '{') {
          if (!StreamMap(plan ? Section::kPlan : Section::kProviders, 3)) return false;
          member = Value::Object(nullptr, 0);
        } else if (!reader_.ReadValue(member, 2)) {
          return false;
        }
        members.push_back({Value::String(inner), member});
        return true;
      });
      if (!ok) return false;
      value = reader_.MakeObject(members);
      return true;
    }
    return reader_.ReadValue(value, 1);
  }

  // False when `name` is a top-level member whose map is streamed and was
  // read before.
  bool FirstTime(std::string_view name) {
    static constexpr std::string_view kStreamed[] = {"parameters", "modules", "providers", "plan"};
    for (size_t i = 0; i < std::size(kStreamed); ++i) {
      if (name != kStreamed[i]) continue;
      const bool first = (streamed_seen_ & (1u << i)) == 0;
      streamed_seen_ |= 1u << i;
      return first;
    }
    return true;
  }

  // Hands each member of the map at the cursor to the sink, the map nesting
  // `depth` deep. Reading the members and taking them overlap: a pipeline
  // reads batches of members, each with its own reader and arena, while the
  // sink takes the batches before them in document order. The first error
  // in document order wins, as in a serial read: a batch ends at a syntax
  // error, the sink takes the members before it first, and reading stops
  // once the sink has refused one.
  bool StreamMap(Section section, int depth) {
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
    if (!OpenObject(reader_, depth, max_depth_, state.done)) return false;
    if (state.done) return true;
    constexpr size_t kLive = 4, kBatchItems = 256;
    std::vector<std::unique_ptr<Batch>> ring;
    for (size_t i = 0; i < kLive; ++i) ring.push_back(std::make_unique<Batch>(text_, max_depth_));
    state.offset = reader_.offset();
    const bool skip_repeats = skip_repeats_ && (section == Section::kProviders || section == Section::kPlan);
    const Batch* failed_batch = nullptr;
    std::atomic<bool> sink_failed{false};
    auto produce = [&]() -> Batch* {
      if (state.done || sink_failed.load(std::memory_order_relaxed)) return nullptr;
      Batch& batch = *ring[state.next++ % kLive];
      Reader& r = batch.reader;
      r.Release(batch.mark);
      r.Seek(state.offset);
      batch.items.clear();
      batch.failed = false;
      while (batch.items.size() < kBatchItems && !state.done) {
        std::string_view key;
        if (!ReadName(r, key)) {
          batch.failed = true;
          break;
        }
        const size_t start = r.offset();
        const bool repeat = skip_repeats && !state.previous.empty() && state.previous.front() == '{' &&
                            text_.substr(start, state.previous.size()) == state.previous;
        Value value;
        if (repeat) {
          r.Seek(start + state.previous.size());
        } else if (!r.ReadValue(value, depth)) {
          batch.failed = true;
          break;
        }
        state.previous = text_.substr(start, r.offset() - start);
        // Taken by the sink even when a separator error follows.
        batch.items.push_back({key, value, repeat});
        if (!ReadSeparator(r, state.done)) {
          batch.failed = true;
          break;
        }
      }
      state.done = state.done || batch.failed;
      state.offset = r.offset();
      batch.names.clear();
      prepare_(section, batch.items, batch.names);
      return &batch;
    };
    auto consume = [&](Batch& batch) {
      if (sink_failed.load(std::memory_order_relaxed)) return;
      if (!sink_(section, batch.items, batch.names)) {
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
    if (failed_batch != nullptr) {
      return reader_.FailAt(failed_batch->reader.error(), failed_batch->reader.error_offset());
    }
    reader_.Seek(state.offset);
    return true;
  }

  const std::string_view text_;
  const int max_depth_;
  const bool skip_repeats_;
  Reader& reader_;
  NamePrepare prepare_;
  PreparedSink sink_;
  bool sink_failed_ = false;
  unsigned streamed_seen_ = 0;  // bit i: FirstTime's kStreamed[i] was read
};

}  // namespace

DocumentReader::DocumentReader(std::string_view text, int max_depth, bool skip_repeats)
    : text_(text), max_depth_(max_depth), skip_repeats_(skip_repeats), reader_(text, max_depth) {}

bool DocumentReader::Read(ItemSink sink, Value& skeleton) {
  return Read([](Section, absl::Span<const Item>, std::vector<HashedName>&) {},
              [&](Section section, absl::Span<const Item> items, absl::Span<const HashedName>) {
                return sink(section, items);
              },
              skeleton);
}

bool DocumentReader::Read(NamePrepare prepare, PreparedSink sink, Value& skeleton) {
  Walk walk(text_, max_depth_, skip_repeats_, reader_, prepare, sink);
  if (walk.Run(skeleton)) return true;
  if (!walk.sink_failed()) {
    error_ = SyntaxError{reader_.error() == Error::kTooDeep, ErrorMessage(reader_.error()), reader_.error_offset()};
  }
  return false;
}

}  // namespace shardplan::json
