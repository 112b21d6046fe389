#include "core/text/json_locate.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "core/text/bytes.h"
#include "core/text/utf8.h"

namespace shardplan {
namespace {

// No node, no offset.
constexpr size_t kNone = SIZE_MAX;

// The pointers as a trie of their decoded reference tokens: node 0 is the
// whole document, and each valid pointer ends at one node.
struct Node {
  std::vector<size_t> targets;                          // the pointers that end here
  std::map<std::string, size_t, std::less<>> children;  // by token
  // The children whose token is an array index, by increasing index.
  std::vector<std::pair<size_t, size_t>> elements;
  size_t subtree = 0;    // how many pointers end here or below
  bool reached = false;  // its declaration was found (the first, of duplicate keys)
};

// Appends `pointer`'s reference tokens, decoded ("~1" -> '/', "~0" -> '~'),
// to `tokens`; false when it is not an RFC 6901 pointer.
bool SplitPointer(std::string_view pointer, std::vector<std::string>& tokens) {
  if (pointer.empty()) return true;
  if (pointer[0] != '/') return false;
  for (size_t i = 0; i < pointer.size(); ++i) {
    char c = pointer[i];
    if (c == '/') {
      tokens.emplace_back();
      continue;
    }
    if (c == '~') {
      if (i + 1 == pointer.size() || (pointer[i + 1] != '0' && pointer[i + 1] != '1')) return false;
      c = pointer[++i] == '0' ? '~' : '/';
    }
    tokens.back() += c;
  }
  return true;
}

// The array index `token` names: decimal digits without a leading zero.
// nullopt for any other token, and for numbers past size_t (no text has
// that many elements).
std::optional<size_t> ArrayIndex(std::string_view token) {
  if (token.empty() || (token[0] == '0' && token.size() > 1)) return std::nullopt;
  size_t index = 0;
  for (char c : token) {
    if (c < '0' || c > '9') return std::nullopt;
    const size_t digit = static_cast<size_t>(c - '0');
    if (index > (SIZE_MAX - digit) / 10) return std::nullopt;
    index = index * 10 + digit;
  }
  return index;
}

std::vector<Node> BuildTrie(const std::vector<std::string_view>& pointers) {
  std::vector<Node> nodes(1);
  std::vector<std::string> tokens;
  for (size_t i = 0; i < pointers.size(); ++i) {
    tokens.clear();
    if (!SplitPointer(pointers[i], tokens)) continue;
    size_t node = 0;
    ++nodes[node].subtree;
    for (std::string& token : tokens) {
      const size_t fresh = nodes.size();
      const auto [it, added] = nodes[node].children.try_emplace(std::move(token), fresh);
      node = it->second;
      if (added) nodes.emplace_back();  // after the last use of `it`: this moves the maps
      ++nodes[node].subtree;
    }
    nodes[node].targets.push_back(i);
  }
  for (Node& node : nodes) {
    for (const auto& [token, child] : node.children) {
      if (const std::optional<size_t> index = ArrayIndex(token)) node.elements.emplace_back(*index, child);
    }
    std::sort(node.elements.begin(), node.elements.end());
  }
  return nodes;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

bool IsHex(char c) { return IsDigit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'); }

// The value of four hex digits.
uint32_t Hex4(std::string_view digits) {
  uint32_t value = 0;
  for (char c : digits.substr(0, 4)) value = value * 16 + (IsDigit(c) ? c - '0' : (c | 0x20) - 'a' + 10);
  return value;
}

// Decodes the escapes of `raw`, the contents of a string StringEnd passed
// (so every escape is complete), into `out`; false where a \u escape is a
// lone surrogate, which no UTF-8 token can match.
bool Unescape(std::string_view raw, std::string& out) {
  out.clear();
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '\\') {
      out += raw[i];
      continue;
    }
    const char e = raw[++i];
    if (e != 'u') {
      // b f n r t stand for control characters; '"', '\\' and '/' for themselves.
      static constexpr std::string_view kLetters = "bfnrt";
      const size_t k = kLetters.find(e);
      out += k == std::string_view::npos ? e : "\b\f\n\r\t"[k];
      continue;
    }
    uint32_t cp = Hex4(raw.substr(i + 1));
    i += 4;
    if (cp >= 0xD800 && cp <= 0xDFFF) {
      // A high surrogate, then a \u escape of a low one.
      if (cp >= 0xDC00 || raw.substr(i + 1, 2) != "\\u") return false;
      const uint32_t low = Hex4(raw.substr(i + 3));
      if (low < 0xDC00 || low > 0xDFFF) return false;
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
      i += 6;
    }
    utf8::Append(out, cp);
  }
  return true;
}

// The scanners below take the text and the offset to read from, and return
// the offset past what they read, or kNone where it is not JSON (RFC 8259).

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

size_t SpaceEnd(std::string_view s, size_t p) {
  while (p < s.size() && IsSpace(s[p])) ++p;
  return p;
}

bool StartsValue(char c) {
  return c == '{' || c == '[' || c == '"' || c == 't' || c == 'f' || c == 'n' || c == '-' || IsDigit(c);
}

// The first offset at or after `p` of a byte that ends a run of plain string
// contents: '"', '\\' or a control character; s.size() if none.
size_t StringStop(std::string_view s, size_t p) {
  static constexpr auto kIsStop = [](char c) { return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20; };
  // Eight bytes at a time while none is a stop: per byte, x - k borrows
  // (sets the high bit) where x < k, and ~x keeps those below 0x80.
  constexpr uint64_t kOnes = 0x0101010101010101ull;
  constexpr uint64_t kHighs = 0x8080808080808080ull;
  const auto below = [](uint64_t w, uint64_t k) { return (w - k * kOnes) & ~w & kHighs; };
  for (; p + 8 <= s.size(); p += 8) {
    const uint64_t w = bytes::Load8(s.data() + p);
    if ((below(w, 0x20) | below(w ^ ('"' * kOnes), 1) | below(w ^ ('\\' * kOnes), 1)) != 0) break;
  }
  while (p < s.size() && !kIsStop(s[p])) ++p;
  return p;
}

// A string: no control character, only JSON's escapes, a closing quote.
size_t StringEnd(std::string_view s, size_t p) {
  if (p == s.size() || s[p] != '"') return kNone;
  ++p;
  while (true) {
    p = StringStop(s, p);
    if (p == s.size()) return kNone;
    const char c = s[p++];
    if (c == '"') return p;
    if (c != '\\' || p == s.size()) return kNone;
    const char e = s[p++];
    if (e == 'u') {
      if (s.size() - p < 4 || !std::all_of(s.begin() + p, s.begin() + p + 4, IsHex)) return kNone;
      p += 4;
    } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
      return kNone;
    }
  }
}

// One or more digits.
size_t DigitsEnd(std::string_view s, size_t p) {
  const size_t start = p;
  while (p < s.size() && IsDigit(s[p])) ++p;
  return p > start ? p : kNone;
}

// A number: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
size_t NumberEnd(std::string_view s, size_t p) {
  if (p < s.size() && s[p] == '-') ++p;
  p = p < s.size() && s[p] == '0' ? p + 1 : DigitsEnd(s, p);
  if (p != kNone && p < s.size() && s[p] == '.') p = DigitsEnd(s, p + 1);
  if (p != kNone && p < s.size() && (s[p] == 'e' || s[p] == 'E')) {
    ++p;
    if (p < s.size() && (s[p] == '+' || s[p] == '-')) ++p;
    p = DigitsEnd(s, p);
  }
  return p;
}

// A string, number, true, false or null.
size_t ScalarEnd(std::string_view s, size_t p) {
  const auto word = [&](std::string_view w) { return s.substr(p, w.size()) == w ? p + w.size() : kNone; };
  if (p == s.size()) return kNone;
  switch (s[p]) {
    case '"':
      return StringEnd(s, p);
    case 't':
      return word("true");
    case 'f':
      return word("false");
    case 'n':
      return word("null");
    default:
      return NumberEnd(s, p);
  }
}

// After an object's key: whitespace, the colon, whitespace.
size_t ColonEnd(std::string_view s, size_t p) {
  p = SpaceEnd(s, p);
  return p < s.size() && s[p] == ':' ? SpaceEnd(s, p + 1) : kNone;
}

// A value, arrays and objects whole, from its first character at `p`. The
// open containers nest in `open` (true: an object), a bit a level, so any
// depth costs no call stack.
size_t ValueEnd(std::string_view s, size_t p, std::vector<bool>& open) {
  open.clear();
  while (true) {
    // A value starts at p.
    if (p < s.size() && (s[p] == '{' || s[p] == '[')) {
      const bool object = s[p] == '{';
      p = SpaceEnd(s, p + 1);
      if (p < s.size() && s[p] == (object ? '}' : ']')) {
        ++p;
      } else {
        open.push_back(object);
        if (object) p = ColonEnd(s, StringEnd(s, p));
        if (p == kNone) return kNone;
        continue;
      }
    } else {
      p = ScalarEnd(s, p);
      if (p == kNone) return kNone;
    }
    // After a value: close containers until a comma leads to the next value.
    while (true) {
      if (open.empty()) return p;
      p = SpaceEnd(s, p);
      if (p == s.size()) return kNone;
      if (s[p] == ',') {
        p = SpaceEnd(s, p + 1);
        if (open.back()) p = ColonEnd(s, StringEnd(s, p));
        if (p == kNone) return kNone;
        break;
      }
      if (s[p] != (open.back() ? '}' : ']')) return kNone;
      ++p;
      open.pop_back();
    }
  }
}

// One pass over the text for all pointers: it descends into the values
// whose nodes have children, keeping a Frame for each on the heap (no
// deeper than the pointers go), and skips all other values whole.
class Locator {
 public:
  // Sets offsets[i] to where pointer i's declaration starts in `text`, for
  // the pointers found; `offsets` starts all kNone.
  Locator(std::string_view text, std::vector<Node>& nodes, std::vector<size_t>& offsets)
      : text_(text), nodes_(nodes), offsets_(offsets), remaining_(nodes[0].subtree) {}

  void Run() {
    if (remaining_ == 0) return;
    p_ = SpaceEnd(text_, 0);
    if (p_ == text_.size() || !StartsValue(text_[p_])) return;
    Record(0, p_);
    if (!Value(0)) return;
    // Each turn reads one member or element of the innermost container it
    // descended into, or closes it. Returns at the first error, or once no
    // pointer is left to find.
    while (remaining_ > 0 && !frames_.empty()) {
      Frame& frame = frames_.back();
      p_ = SpaceEnd(text_, p_);
      if (p_ == text_.size()) return;
      if (text_[p_] == (frame.object ? '}' : ']')) {
        ++p_;
        Close();
        continue;
      }
      if (frame.count > 0) {
        if (text_[p_] != ',') return;
        p_ = SpaceEnd(text_, p_ + 1);
      }
      // The node of the value that follows (kNone: no pointer goes there),
      // and where its declaration starts.
      size_t want;
      const size_t declared_at = p_;
      if (frame.object) {
        const size_t key_end = StringEnd(text_, p_);
        if (key_end == kNone) return;
        want = MatchKey(frame.node, text_.substr(p_ + 1, key_end - p_ - 2));
        p_ = ColonEnd(text_, key_end);
        if (p_ == kNone) return;
      } else {
        want = MatchElement(frame);
      }
      ++frame.count;
      if (want != kNone) {
        if (p_ == text_.size() || !StartsValue(text_[p_])) return;
        Record(want, declared_at);
      }
      if (!Value(want)) return;
    }
  }

 private:
  struct Frame {
    size_t node;
    bool object;
    size_t count = 0;         // the members or elements read
    size_t next_element = 0;  // in an array: the first of the node's elements not passed
  };

  // The declaration of `node`'s value starts at `at`; the value's first
  // character has been seen.
  void Record(size_t node, size_t at) {
    Node& n = nodes_[node];
    n.reached = true;
    for (size_t target : n.targets) offsets_[target] = at;
    remaining_ -= n.targets.size();
  }

  // Reads the value at p_, of `want` (kNone: of no pointer): descends into
  // it where pointers go below it (its contents are the loop's next turns),
  // else skips it. False where it is not JSON.
  bool Value(size_t want) {
    if (want != kNone && !nodes_[want].children.empty() && p_ < text_.size() &&
        (text_[p_] == '{' || text_[p_] == '[')) {
      frames_.push_back({want, text_[p_] == '{'});
      ++p_;
      return true;
    }
    // The pointers below a value not descended into name nothing (it is a
    // scalar, or none goes below it).
    if (want != kNone) remaining_ -= nodes_[want].subtree - nodes_[want].targets.size();
    p_ = ValueEnd(text_, p_, open_);
    return p_ != kNone;
  }

  // Leaves the innermost container descended into, just closed.
  void Close() {
    // The pointers through children not reached name nothing: a later
    // duplicate key would not count.
    for (const auto& [token, child] : nodes_[frames_.back().node].children) {
      if (!nodes_[child].reached) remaining_ -= nodes_[child].subtree;
    }
    frames_.pop_back();
  }

  // The child of `node` that the member with key `raw` (undecoded) declares,
  // or kNone: none, or a duplicate key.
  size_t MatchKey(size_t node, std::string_view raw) {
    std::string_view key = raw;
    if (raw.find('\\') != std::string_view::npos) {
      if (!Unescape(raw, key_)) return kNone;
      key = key_;
    }
    const auto& children = nodes_[node].children;
    const auto it = children.find(key);
    if (it == children.end() || nodes_[it->second].reached) return kNone;
    return it->second;
  }

  // The child of the array `frame` that its next element is, or kNone.
  size_t MatchElement(Frame& frame) {
    const std::vector<std::pair<size_t, size_t>>& elements = nodes_[frame.node].elements;
    if (frame.next_element == elements.size() || elements[frame.next_element].first != frame.count) return kNone;
    return elements[frame.next_element++].second;
  }

  const std::string_view text_;
  std::vector<Node>& nodes_;
  std::vector<size_t>& offsets_;
  size_t remaining_;  // pointers neither found nor known to name nothing
  size_t p_ = 0;      // the next byte to read
  std::vector<Frame> frames_;
  std::vector<bool> open_;  // ValueEnd's stack (reused)
  std::string key_;         // a decoded key (reused)
};

// The positions of `offsets` (kNone: nullopt): the offsets in increasing
// order, counting the lines and code points between each and the previous.
std::vector<std::optional<TextPosition>> Positions(std::string_view text, const std::vector<size_t>& offsets) {
  std::vector<std::pair<size_t, size_t>> found;  // (offset, pointer)
  for (size_t i = 0; i < offsets.size(); ++i) {
    if (offsets[i] != kNone) found.emplace_back(offsets[i], i);
  }
  std::sort(found.begin(), found.end());
  std::vector<std::optional<TextPosition>> positions(offsets.size());
  TextPosition at{1, 1};  // of text[scanned]
  size_t scanned = 0;
  for (const auto& [offset, pointer] : found) {
    while (const void* newline = std::memchr(text.data() + scanned, '\n', offset - scanned)) {
      ++at.line;
      at.column = 1;
      scanned = static_cast<const char*>(newline) - text.data() + 1;
    }
    at.column += std::count_if(text.begin() + scanned, text.begin() + offset,
                               [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
    scanned = offset;
    positions[pointer] = at;
  }
  return positions;
}

}  // namespace

std::vector<std::optional<TextPosition>> LocatePointers(std::string_view json,
                                                        const std::vector<std::string_view>& pointers) {
  std::vector<Node> nodes = BuildTrie(pointers);
  std::vector<size_t> offsets(pointers.size(), kNone);
  Locator(json, nodes, offsets).Run();
  return Positions(json, offsets);
}

}  // namespace shardplan
