// Python repr() of strings and lists of strings, as the reference framework's
// messages print names ('a.b', ['x', 'y']).
#ifndef SHARDPLAN_CORE_TEXT_PYREPR_H_
#define SHARDPLAN_CORE_TEXT_PYREPR_H_

#include <string>
#include <string_view>
#include <vector>

namespace shardplan {

// repr(text) for a valid UTF-8 `text`, exactly as Python prints it: code
// points that str.isprintable() rejects are escaped (table generated from
// Python's Unicode database by tools/gen_unicode_printable.py).
std::string PyRepr(std::string_view text);

// repr(list_of_str): "['a', 'b']".
std::string PyReprList(const std::vector<std::string_view>& items);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_TEXT_PYREPR_H_
