#include "fuzz/plain_glob.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/text/utf8.h"

namespace shardplan {
namespace {

using Text = std::u32string;

Text Decode(std::string_view s) {
  Text out;
  for (size_t i = 0; i < s.size();) out.push_back(utf8::Decode(s, i));
  return out;
}

// One element of the pattern as fnmatch.translate writes it.
struct Element {
  enum Kind { kChar, kAny, kStar, kClass, kNever } kind = kChar;
  char32_t c = 0;                                    // kChar
  bool negate = false;                               // kClass
  std::vector<std::pair<char32_t, char32_t>> items;  // kClass: ranges, lo <= hi
};

Element Make(Element::Kind kind, char32_t c = 0) {
  Element e;
  e.kind = kind;
  e.c = c;
  return e;
}

// A character of the set text translate gives to the regular expression
// parser, and whether translate escaped it (an escaped '-' is no range).
struct SetChar {
  char32_t c;
  bool escaped;
};

// fnmatch.translate on the text between '[' and its ']' (pattern[i, j)).
std::vector<SetChar> SetText(const Text& pat, size_t i, size_t j) {
  std::vector<SetChar> stuff;
  if (pat.substr(i, j - i).find(U'-') == Text::npos) {
    for (size_t k = i; k < j; ++k) stuff.push_back({pat[k], pat[k] == U'\\'});
  } else {
    std::vector<Text> chunks;
    size_t k = pat[i] == U'!' ? i + 2 : i + 1;
    while (true) {
      const size_t found = k < j ? pat.find(U'-', k) : Text::npos;
      if (found == Text::npos || found >= j) break;
      chunks.push_back(pat.substr(i, found - i));
      i = found + 1;
      k = found + 3;
    }
    const Text last = pat.substr(i, j - i);
    if (!last.empty()) {
      chunks.push_back(last);
    } else {
      chunks.back() += U'-';
    }
    for (size_t q = chunks.size() - 1; q > 0; --q) {  // empty ranges go
      if (chunks[q - 1].back() > chunks[q].front()) {
        chunks[q - 1] = chunks[q - 1].substr(0, chunks[q - 1].size() - 1) + chunks[q].substr(1);
        chunks.erase(chunks.begin() + static_cast<long>(q));
      }
    }
    for (size_t q = 0; q < chunks.size(); ++q) {
      if (q > 0) stuff.push_back({U'-', false});  // the range operator
      for (char32_t c : chunks[q]) stuff.push_back({c, c == U'-' || c == U'\\'});
    }
  }
  return stuff;
}

// The element translate makes of a set, as the regular expression parser
// reads "[" + stuff + "]".
Element SetElement(const std::vector<SetChar>& stuff) {
  if (stuff.empty()) return Make(Element::kNever);
  if (stuff.size() == 1 && stuff[0].c == U'!') return Make(Element::kAny);
  Element e = Make(Element::kClass);
  size_t p = 0;
  if (stuff[0].c == U'!') {  // translate writes '^'
    e.negate = true;
    p = 1;
  }
  while (p < stuff.size()) {
    const char32_t lo = stuff[p++].c;
    const bool range = p < stuff.size() && stuff[p].c == U'-' && !stuff[p].escaped;
    if (range && p + 1 < stuff.size()) {
      const char32_t hi = stuff[p + 1].c;
      p += 2;
      e.items.push_back({lo, hi});
    } else if (range) {  // "x-" at the end: both literal
      e.items.push_back({lo, lo});
      e.items.push_back({U'-', U'-'});
      ++p;
    } else {
      e.items.push_back({lo, lo});
    }
  }
  return e;
}

std::vector<Element> Translate(const Text& pat) {
  std::vector<Element> out;
  size_t i = 0;
  const size_t n = pat.size();
  while (i < n) {
    const char32_t c = pat[i++];
    if (c == U'*') {
      if (out.empty() || out.back().kind != Element::kStar) out.push_back(Make(Element::kStar));
    } else if (c == U'?') {
      out.push_back(Make(Element::kAny));
    } else if (c == U'[') {
      size_t j = i;
      if (j < n && pat[j] == U'!') ++j;
      if (j < n && pat[j] == U']') ++j;
      while (j < n && pat[j] != U']') ++j;
      if (j >= n) {
        out.push_back(Make(Element::kChar, U'['));
      } else {
        out.push_back(SetElement(SetText(pat, i, j)));
        i = j + 1;
      }
    } else {
      out.push_back(Make(Element::kChar, c));
    }
  }
  return out;
}

bool ElementMatches(const Element& e, char32_t c) {
  switch (e.kind) {
    case Element::kChar:
      return e.c == c;
    case Element::kAny:
      return true;
    case Element::kClass: {
      bool in = false;
      for (const auto& [lo, hi] : e.items) in |= lo <= c && c <= hi;
      return in != e.negate;
    }
    default:
      return false;
  }
}

class Matcher {
 public:
  Matcher(std::vector<Element> pattern, Text text)
      : pattern_(std::move(pattern)), text_(std::move(text)), memo_((pattern_.size() + 1) * (text_.size() + 1)) {}

  // Whether text_[t:] matches pattern_[p:].
  bool Match(size_t p, size_t t) {
    std::optional<bool>& memo = memo_[p * (text_.size() + 1) + t];
    if (!memo) memo = Compute(p, t);
    return *memo;
  }

 private:
  bool Compute(size_t p, size_t t) {
    if (p == pattern_.size()) return t == text_.size();
    if (pattern_[p].kind == Element::kStar) {
      for (size_t u = t; u <= text_.size(); ++u) {
        if (Match(p + 1, u)) return true;
      }
      return false;
    }
    return t < text_.size() && ElementMatches(pattern_[p], text_[t]) && Match(p + 1, t + 1);
  }

  std::vector<Element> pattern_;
  Text text_;
  std::vector<std::optional<bool>> memo_;
};

}  // namespace

bool PlainGlobMatch(std::string_view pattern, std::string_view text) {
  return Matcher(Translate(Decode(pattern)), Decode(text)).Match(0, 0);
}

}  // namespace shardplan
