// Byte-level helpers for short texts: names, FQNs and keys.
#ifndef SHARDPLAN_CORE_TEXT_BYTES_H_
#define SHARDPLAN_CORE_TEXT_BYTES_H_

#include <cstdint>
#include <cstring>
#include <string_view>

namespace shardplan {

namespace bytes {
inline uint64_t Load8(const char* p) {
  uint64_t word;
  std::memcpy(&word, p, 8);
  return word;
}
inline uint32_t Load4(const char* p) {
  uint32_t word;
  std::memcpy(&word, p, 4);
  return word;
}
}  // namespace bytes

// Whether `a` and `b` hold the same bytes. Names, FQNs and keys are short,
// and compared once or more per owner or per document member: fixed-size
// loads (overlapping where the size is not a multiple of their width) beat
// the call to memcmp that std::string_view's == makes for sizes not known
// at compile time.
inline bool SameText(std::string_view a, std::string_view b) {
  const size_t n = a.size();
  if (n != b.size()) return false;
  const char* x = a.data();
  const char* y = b.data();
  if (n >= 8) {
    for (size_t i = 0; i + 8 < n; i += 8) {
      if (bytes::Load8(x + i) != bytes::Load8(y + i)) return false;
    }
    return bytes::Load8(x + n - 8) == bytes::Load8(y + n - 8);
  }
  if (n >= 4) return bytes::Load4(x) == bytes::Load4(y) && bytes::Load4(x + n - 4) == bytes::Load4(y + n - 4);
  for (size_t i = 0; i < n; ++i) {
    if (x[i] != y[i]) return false;
  }
  return true;
}

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_TEXT_BYTES_H_
