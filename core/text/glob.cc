#include "core/text/glob.h"

#include <string>

#include "core/text/bytes.h"
#include "core/text/utf8.h"

namespace shardplan {
namespace {

// The code points of `text` (valid UTF-8).
std::vector<uint32_t> Decode(std::string_view text) {
  std::vector<uint32_t> out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) out.push_back(utf8::Decode(text, i));
  return out;
}

// One element of the regular-expression set text that fnmatch.translate
// builds: a character, or (range_op) an unescaped '-' that joins two chunks.
struct SetItem {
  uint32_t cp;
  bool range_op;
};

}  // namespace

Glob::Glob(std::string_view pattern) {
  const std::vector<uint32_t> pat = Decode(pattern);
  const size_t n = pat.size();
  size_t i = 0;
  while (i < n) {
    uint32_t c = pat[i++];
    if (c == '*') {
      literal_ = false;
      if (tokens_.empty() || tokens_.back().kind != Kind::kStar) tokens_.push_back({Kind::kStar});
    } else if (c == '?') {
      literal_ = false;
      tokens_.push_back({Kind::kAny});
    } else if (c == '[') {
      size_t j = i;
      if (j < n && pat[j] == '!') ++j;
      if (j < n && pat[j] == ']') ++j;
      while (j < n && pat[j] != ']') ++j;
      if (j >= n) {
        tokens_.push_back({Kind::kLiteral, false, '['});
      } else {
        literal_ = false;
        CompileSet(pat, i, j);
        i = j + 1;
      }
    } else {
      tokens_.push_back({Kind::kLiteral, false, c});
    }
  }
  BuildSegments();
}

// Mirrors fnmatch.translate's handling of pat[i:j] (the text between '[' and
// ']'), then the way Python's regular-expression parser reads the set text.
void Glob::CompileSet(const std::vector<uint32_t>& pat, size_t i, size_t j) {
  std::vector<SetItem> stuff;
  bool has_hyphen = false;
  for (size_t k = i; k < j; ++k) has_hyphen |= pat[k] == '-';
  if (!has_hyphen) {
    for (size_t k = i; k < j; ++k) stuff.push_back({pat[k], false});
  } else {
    std::vector<std::vector<uint32_t>> chunks;
    size_t k = (pat[i] == '!') ? i + 2 : i + 1;
    while (true) {
      size_t found = j;
      for (size_t q = k; q < j; ++q) {
        if (pat[q] == '-') {
          found = q;
          break;
        }
      }
      if (k >= j || found == j) break;
      chunks.emplace_back(pat.begin() + i, pat.begin() + found);
      i = found + 1;
      k = found + 3;
    }
    if (i < j) {
      chunks.emplace_back(pat.begin() + i, pat.begin() + j);
    } else if (!chunks.empty()) {  // a trailing '-' is literal
      chunks.back().push_back('-');
    }
    // Remove empty ranges (lo > hi), as fnmatch does.
    for (size_t q = chunks.size() - 1; q > 0; --q) {
      std::vector<uint32_t>& prev = chunks[q - 1];
      const std::vector<uint32_t>& cur = chunks[q];
      if (!prev.empty() && !cur.empty() && prev.back() > cur.front()) {
        prev.pop_back();
        prev.insert(prev.end(), cur.begin() + 1, cur.end());
        chunks.erase(chunks.begin() + static_cast<std::ptrdiff_t>(q));
      }
    }
    for (size_t q = 0; q < chunks.size(); ++q) {
      if (q > 0) stuff.push_back({'-', true});
      for (uint32_t cp : chunks[q]) stuff.push_back({cp, false});
    }
  }

  Token token{Kind::kSet};
  if (stuff.empty()) {
    tokens_.push_back({Kind::kNever});
    return;
  }
  if (stuff.size() == 1 && stuff[0].cp == '!' && !stuff[0].range_op) {
    tokens_.push_back({Kind::kAny});
    return;
  }
  size_t pos = 0;
  if (stuff[0].cp == '!' && !stuff[0].range_op) {
    token.negate = true;
    pos = 1;
  }
  token.ranges_begin = static_cast<uint32_t>(ranges_.size());
  while (pos < stuff.size()) {
    uint32_t lo = stuff[pos++].cp;
    if (pos < stuff.size() && stuff[pos].range_op) {
      ++pos;
      if (pos >= stuff.size()) {
        ranges_.push_back({lo, lo});
        ranges_.push_back({'-', '-'});
        break;
      }
      uint32_t hi = stuff[pos++].cp;
      if (lo <= hi) ranges_.push_back({lo, hi});
    } else {
      ranges_.push_back({lo, lo});
    }
  }
  token.ranges_end = static_cast<uint32_t>(ranges_.size());
  tokens_.push_back(token);
}

bool Glob::TokenMatches(const Token& token, uint32_t cp) const {
  switch (token.kind) {
    case Kind::kLiteral:
      return token.cp == cp;
    case Kind::kAny:
      return true;
    case Kind::kSet: {
      bool in = false;
      for (uint32_t r = token.ranges_begin; r < token.ranges_end && !in; ++r) {
        in = ranges_[r].lo <= cp && cp <= ranges_[r].hi;
      }
      return in != token.negate;
    }
    case Kind::kStar:
    case Kind::kNever:
      return false;
  }
  return false;
}

void Glob::BuildSegments() {
  for (const Token& t : tokens_) {
    if (t.kind != Kind::kLiteral) break;
    utf8::Append(literal_prefix_, t.cp);
  }
  size_t tail_begin = tokens_.size();
  while (tail_begin > 0 && tokens_[tail_begin - 1].kind == Kind::kLiteral) --tail_begin;
  for (size_t t = tail_begin; t < tokens_.size(); ++t) utf8::Append(literal_tail_, tokens_[t].cp);
  uint32_t begin = 0;
  for (uint32_t t = 0; t <= tokens_.size(); ++t) {
    if (t == tokens_.size() || tokens_[t].kind == Kind::kStar) {
      Segment seg{begin, t, begin, static_cast<uint32_t>(ascii_literals_.size())};
      while (seg.literal_end < t && tokens_[seg.literal_end].kind == Kind::kLiteral &&
             tokens_[seg.literal_end].cp < 0x80) {
        ascii_literals_ += static_cast<char>(tokens_[seg.literal_end++].cp);
      }
      segments_.push_back(seg);
      begin = t + 1;
    }
  }
  for (const Token& t : tokens_) min_size_ += t.kind != Kind::kStar;
  const Segment& last = segments_.back();
  for (uint32_t i = 0; i < 8 && i < last.end - last.begin; ++i) {
    const Token& t = tokens_[last.end - 1 - i];
    if (t.kind != Kind::kLiteral || t.cp >= 0x80) continue;
    tail_mask_ |= uint64_t{0xff} << (8 * (7 - i));
    tail_value_ |= uint64_t{t.cp} << (8 * (7 - i));
  }
  // Which ASCII characters can end a match: those the last token takes,
  // unless it is a star (or there is none).
  const bool ends_with_token = !tokens_.empty() && tokens_.back().kind != Kind::kStar;
  for (uint32_t c = 0; c < 128; ++c) {
    if (!ends_with_token || TokenMatches(tokens_.back(), c)) last_ascii_[c / 64] |= uint64_t{1} << (c % 64);
  }
}

template <typename Char>
bool Glob::SegmentMatchesAt(const Segment& seg, const Char* text) const {
  uint32_t t = seg.begin;
  if constexpr (sizeof(Char) == 1) {  // ASCII text
    const size_t n = seg.literal_end - seg.begin;
    if (!SameText(std::string_view(reinterpret_cast<const char*>(text), n),
                  std::string_view(ascii_literals_.data() + seg.literal_offset, n))) {
      return false;
    }
    t = seg.literal_end;
  }
  for (; t < seg.end; ++t) {
    const Token& token = tokens_[t];
    const uint32_t c = static_cast<uint32_t>(text[t - seg.begin]);
    // Literals, by far the most common tokens, without the general dispatch.
    if (token.kind == Kind::kLiteral ? token.cp != c : !TokenMatches(token, c)) return false;
  }
  return true;
}

// Every token but '*' consumes exactly one character, so with the pattern
// split at its stars into segments S0 * S1 * ... * Sn: S0 must match at the
// start, Sn at the end, and each middle segment at its leftmost position
// after the previous one (leftmost is never worse for what follows).
template <typename Char>
bool Glob::MatchText(const Char* text, size_t size) const {
  const Segment& first = segments_.front();
  const size_t first_len = first.end - first.begin;
  if (segments_.size() == 1) return size == first_len && SegmentMatchesAt(first, text);
  const Segment& last = segments_.back();
  const size_t last_len = last.end - last.begin;
  // The end first: matches share their start more often (a model's paths
  // share their first names, and callers look below the literal prefix).
  if (size < first_len + last_len || !SegmentMatchesAt(last, text + size - last_len) ||
      !SegmentMatchesAt(first, text)) {
    return false;
  }
  size_t pos = first_len;
  const size_t limit = size - last_len;
  for (size_t s = 1; s + 1 < segments_.size(); ++s) {
    const Segment& seg = segments_[s];
    const size_t len = seg.end - seg.begin;
    const Token& lead = tokens_[seg.begin];
    bool found = false;
    for (; pos + len <= limit; ++pos) {
      if (lead.kind == Kind::kLiteral && static_cast<uint32_t>(text[pos]) != lead.cp) continue;
      if (SegmentMatchesAt(seg, text + pos)) {
        found = true;
        break;
      }
    }
    if (!found) return false;
    pos += len;
  }
  return true;
}

bool Glob::MatchAscii(std::string_view text) const {
  return MatchText(reinterpret_cast<const uint8_t*>(text.data()), text.size());
}

bool Glob::Matches(std::string_view text) const {
  if (utf8::IsAscii(text)) return MatchesAscii(text);
  const std::vector<uint32_t> cps = Decode(text);
  return MatchText(cps.data(), cps.size());
}

}  // namespace shardplan
