// UTF-8 (RFC 3629), the one place the engine reads or writes it: validation
// of a document's text and of names given through the API, decoding of valid
// text into code points (Python's repr and fnmatch work on code points), the
// encoding of a code point, and the ASCII test that lets callers skip
// decoding.
//
// Well-formed means what RFC 3629 allows: no overlong form, no UTF-16
// surrogate (U+D800..U+DFFF), nothing past U+10FFFF, no sequence cut short.
// U+0000 (a NUL byte) is well-formed; ValidNulFreePrefix stops at it.
//
//   utf8::ValidPrefix("ab\xc3\xa9\xff")  == 4   (the bad byte's offset)
//   utf8::IsValid("\xed\xa0\x80")        == false  (a surrogate)
//   size_t i = 0; utf8::Decode("\xc3\xa9", i) == 0xE9, i == 2
#ifndef SHARDPLAN_CORE_TEXT_UTF8_H_
#define SHARDPLAN_CORE_TEXT_UTF8_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace shardplan::utf8 {

// The length of the longest well-formed prefix of `text`: text.size() when
// all of it is, else the offset of the first byte of the first sequence that
// is not.
size_t ValidPrefix(std::string_view text);

// The length of the longest prefix of `text` that is well-formed and holds no
// NUL byte, as a JSON text must: ValidPrefix of the text before its first
// NUL byte, in one reading.
size_t ValidNulFreePrefix(std::string_view text);

// Whether all of `text` is well-formed.
inline bool IsValid(std::string_view text) { return ValidPrefix(text) == text.size(); }

// Whether every byte of `text` is below 0x80 (then each byte is one code
// point).
bool IsAscii(std::string_view text);

// The code point that starts at text[i], for well-formed `text`; moves i past
// it. On a sequence cut short by the end of `text` it reads what is there and
// stops at the end.
uint32_t Decode(std::string_view text, size_t& i);

// Appends the encoding of `cp`, a code point below U+110000, to `out`.
void Append(std::string& out, uint32_t cp);

}  // namespace shardplan::utf8

#endif  // SHARDPLAN_CORE_TEXT_UTF8_H_
