// Where RFC 6901 JSON pointers point in a JSON text, as line and column, for
// compiler-style diagnostics ("doc.json:12:7").
//
//   LocatePointers("{\n  \"a\": [1, 2]\n}", {"/a/1", "/b", ""})
//     == {TextPosition{2, 12}, nullopt, TextPosition{1, 1}}
#ifndef SHARDPLAN_CORE_TEXT_JSON_LOCATE_H_
#define SHARDPLAN_CORE_TEXT_JSON_LOCATE_H_

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace shardplan {

// A place in a text, both numbers 1-based. Lines end at '\n' (a "\r\n" is
// one line end: its '\r' is the last character of its line). The column
// counts code points from the line's start, as editors do: every byte that
// starts a UTF-8 sequence (any byte but 10xxxxxx) is one, and a tab is one.
struct TextPosition {
  size_t line = 0;
  size_t column = 0;
  friend bool operator==(const TextPosition&, const TextPosition&) = default;
};

// For each of `pointers`, in their order, where its value's declaration
// starts in `json`:
//   - an object member: the opening quote of its key;
//   - an array element: the element's first character;
//   - "" (the whole document): its first character after whitespace.
// nullopt where the pointer
//   - is not a pointer: non-empty and not starting with '/', or a '~' not
//     followed by '0' or '1';
//   - names nothing in the text: a missing member; an index past the end,
//     or not decimal digits without a leading zero ("01", "-", "+1"); a
//     token below a scalar;
//   - or where the text is not JSON (RFC 8259) from its start up to the
//     first character of that value: pointers whose values start before
//     the first error are still found, so a truncated text locates what it
//     holds.
// Keys are compared after decoding their escapes (\uXXXX, surrogate pairs
// included, then UTF-8) with the pointer's tokens after decoding "~1" to
// '/' and "~0" to '~'; a key with a lone surrogate escape matches no token.
// Where an object has a key twice, the first member wins, for the pointers
// below it too. Text bytes are not checked for UTF-8 well-formedness.
//
// One pass for all pointers: it descends only into values some pointer goes
// into, skips the others, and stops once every pointer is found or can no
// longer be. Nothing recurses: its stacks are on the heap, one entry a
// level it descends (no deeper than the pointers go) and one bit a level of
// nesting it skips, so any text and any pointers are safe.
std::vector<std::optional<TextPosition>> LocatePointers(std::string_view json,
                                                        const std::vector<std::string_view>& pointers);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_TEXT_JSON_LOCATE_H_
