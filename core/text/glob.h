// Glob patterns with the semantics of Python's fnmatch.fnmatchcase, which the
// reference framework uses to match native binding requests against module
// FQNs: `*` matches any run of characters (dots included), `?` one character,
// `[...]` a set (`[!...]` negated, ranges `a-z`, an unclosed `[` is literal);
// matching is case-sensitive, over Unicode code points, of the whole string.
#ifndef SHARDPLAN_CORE_TEXT_GLOB_H_
#define SHARDPLAN_CORE_TEXT_GLOB_H_

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace shardplan {

class Glob {
 public:
  // Compiles `pattern` (valid UTF-8). Every pattern is valid, as in fnmatch.
  explicit Glob(std::string_view pattern);

  bool Matches(std::string_view text) const;
  // The same, for text known to be ASCII (not checked again). Its length,
  // its last eight characters against the pattern's literals there and its
  // last character, checked first and inline (MayMatchAscii), tell most
  // texts apart ("layers.*.experts.[0-9]" against "layers.3.experts.15" or
  // "layers.3.experts.5.up_proj").
  bool MatchesAscii(std::string_view text) const {
    return MayMatchAscii(text.size(), AsciiTail(text)) && MatchAscii(text);
  }
  // The last eight characters of ASCII text in one word, the last one in
  // the top byte (fewer, zeros below them, for a shorter text).
  static uint64_t AsciiTail(std::string_view text) {
    uint64_t tail = 0;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (text.size() >= 8) {
      std::memcpy(&tail, text.data() + text.size() - 8, 8);
      return tail;
    }
#endif
    for (size_t i = 0; i < 8 && i < text.size(); ++i) {
      tail |= uint64_t{static_cast<unsigned char>(text[text.size() - 1 - i])} << (8 * (7 - i));
    }
    return tail;
  }
  // False when no ASCII text of `size` characters with that AsciiTail
  // matches; true when MatchAscii must decide.
  bool MayMatchAscii(size_t size, uint64_t tail) const {
    if (size < min_size_ || (tail & tail_mask_) != tail_value_) return false;
    const uint64_t last = tail >> 56;
    return size == 0 || (last_ascii_[last / 64] >> (last % 64) & 1) != 0;
  }
  // MatchesAscii's verdict on a text MayMatchAscii let through.
  bool MatchAscii(std::string_view text) const;

  // True when the pattern has no wildcard: it matches exactly one string.
  bool is_literal() const { return literal_; }
  // The literal characters before the first wildcard: every match starts
  // with them.
  const std::string& literal_prefix() const { return literal_prefix_; }
  // The literal characters after the last wildcard (the whole pattern when
  // it has none): every match ends with them.
  const std::string& literal_tail() const { return literal_tail_; }

 private:
  struct Range {
    uint32_t lo, hi;
  };
  enum class Kind : uint8_t { kLiteral, kAny, kStar, kSet, kNever };
  struct Token {
    Kind kind;
    bool negate = false;
    uint32_t cp = 0;           // kLiteral
    uint32_t ranges_begin = 0;  // kSet: [begin, end) into ranges_
    uint32_t ranges_end = 0;
  };

  // A maximal run of single-character tokens between stars.
  struct Segment {
    uint32_t begin, end;  // [begin, end) into tokens_
    // Tokens [begin, literal_end) are ASCII literals, spelled at
    // ascii_literals_[literal_offset, + literal_end - begin): ASCII text
    // compares them with one memcmp.
    uint32_t literal_end, literal_offset;
  };

  void CompileSet(const std::vector<uint32_t>& pat, size_t open, size_t close);
  void BuildSegments();
  bool TokenMatches(const Token& token, uint32_t cp) const;
  template <typename Char>
  bool SegmentMatchesAt(const Segment& seg, const Char* text) const;
  template <typename Char>
  bool MatchText(const Char* text, size_t size) const;

  std::vector<Token> tokens_;
  std::vector<Range> ranges_;
  // The pattern is segments_[0] * segments_[1] * ... (no star when there is
  // one segment).
  std::vector<Segment> segments_;
  std::string literal_prefix_, literal_tail_;
  std::string ascii_literals_;
  // Bit c: a match may end with ASCII character c.
  uint64_t last_ascii_[2] = {0, 0};
  // The ASCII literals among the last eight tokens after the last star, as
  // bytes of an AsciiTail: 0xff in the mask where a literal is, the literal
  // in the value. Every text MayMatchAscii tests is at least as long as
  // those tokens.
  uint64_t tail_mask_ = 0, tail_value_ = 0;
  size_t min_size_ = 0;  // characters of a shortest match: the tokens but stars
  bool literal_ = true;
};

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_TEXT_GLOB_H_
