#include "core/text/utf8.h"

#include <cstring>

namespace shardplan::utf8 {
namespace {

constexpr uint64_t kOnes = 0x0101010101010101ull;
constexpr uint64_t kHighBits = 0x8080808080808080ull;

uint64_t Load8(const unsigned char* p) {
  uint64_t word;
  std::memcpy(&word, p, 8);
  return word;
}

// ValidPrefix, or with `kNulEnds` ValidNulFreePrefix: one loop, so that a
// document's text is read once.
template <bool kNulEnds>
size_t Prefix(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  // Bit 7 of a byte of the result is set where the word holds a byte from
  // 0x80 up, or a NUL byte when kNulEnds (the lowest set bit marks the first
  // such byte; bits above it may be spurious).
  const auto stops = [](uint64_t word) {
    return kNulEnds ? (word | ((word - kOnes) & ~word)) & kHighBits : word & kHighBits;
  };
  while (i < n) {
    // Runs of ASCII (without NUL when kNulEnds), most of a document, a word
    // at a time: four words tested together, then one.
    while (i + 32 <= n &&
           (stops(Load8(s + i)) | stops(Load8(s + i + 8)) | stops(Load8(s + i + 16)) | stops(Load8(s + i + 24))) == 0) {
      i += 32;
    }
    while (i + 8 <= n && stops(Load8(s + i)) == 0) i += 8;
    if (i == n) break;
    const unsigned char lead = s[i];
    if (lead < 0x80) {
      if (kNulEnds && lead == 0) return i;
      ++i;
      continue;
    }
    // The sequence's length and the range of its second byte, which rules
    // out overlong forms (after E0 and F0), surrogates (after ED) and code
    // points past U+10FFFF (after F4); C0, C1 and F5..FF never lead.
    size_t length;
    unsigned char lo = 0x80, hi = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      if (lead == 0xE0) lo = 0xA0;
      if (lead == 0xED) hi = 0x9F;
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      if (lead == 0xF0) lo = 0x90;
      if (lead == 0xF4) hi = 0x8F;
    } else {
      return i;
    }
    if (n - i < length || s[i + 1] < lo || s[i + 1] > hi) return i;
    for (size_t k = 2; k < length; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return i;
    }
    i += length;
  }
  return n;
}

}  // namespace

size_t ValidPrefix(std::string_view text) { return Prefix<false>(text); }

size_t ValidNulFreePrefix(std::string_view text) { return Prefix<true>(text); }

bool IsAscii(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  size_t i = 0;
  for (; i + 8 <= text.size(); i += 8) {
    if ((Load8(s + i) & kHighBits) != 0) return false;
  }
  for (; i < text.size(); ++i) {
    if (s[i] >= 0x80) return false;
  }
  return true;
}

uint32_t Decode(std::string_view text, size_t& i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  if (lead < 0x80) {
    ++i;
    return lead;
  }
  const size_t extra = lead >= 0xF0 ? 3 : lead >= 0xE0 ? 2 : 1;
  uint32_t cp = lead & (0x3F >> extra);
  size_t k = i + 1;
  for (; k <= i + extra && k < text.size(); ++k) cp = (cp << 6) | (byte(k) & 0x3F);
  i = k;
  return cp;
}

void Append(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace shardplan::utf8
