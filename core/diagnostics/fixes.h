// The fix-its checkers attach to diagnostics (Where::fix_it), spelled once.
#ifndef SHARDPLAN_CORE_DIAGNOSTICS_FIXES_H_
#define SHARDPLAN_CORE_DIAGNOSTICS_FIXES_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/diagnostic.h"

namespace shardplan {

// A fix-it to share among the diagnostics it applies to.
std::shared_ptr<const FixIt> MakeFixIt(std::string help, std::vector<FixOperation> fix = {});

// The fix-it of names that do not exist where they are used (`unknown`):
// each one's nearest among `candidates` (NearestName), then `listing`
// ("the forward takes 'x', 'y'"). The fix renames, for each unknown name,
// the object members at `pointers(name)`, when every one has a nearest
// candidate of its own.
std::shared_ptr<const FixIt> RenameUnknownFixIt(const std::vector<std::string_view>& unknown,
                                                const std::vector<std::string_view>& candidates,
                                                std::string_view listing,
                                                const std::function<std::vector<std::string>(std::string_view)>& pointers);

// "'a', 'b'": names as Python's repr quotes them.
std::string QuotedList(const std::vector<std::string_view>& names);

// "did you mean 'NAME'?" (NAME as Python's repr quotes it, as messages do).
std::string DidYouMean(std::string_view name);

// The JSON Patch operation that renames the object member at `pointer` to
// `key`: a move to the pointer with its last token replaced.
FixOperation RenameMember(std::string_view pointer, std::string_view key);

// The operation that replaces the value at `pointer` by the string `text`.
FixOperation ReplaceWithString(std::string_view pointer, std::string_view text);

// The operation that replaces the value at `pointer` by the integer `value`.
FixOperation ReplaceWithInteger(std::string_view pointer, uint64_t value);

// The operation that replaces the value at `pointer` by an object of
// string members, in order.
FixOperation ReplaceWithObject(std::string_view pointer,
                               const std::vector<std::pair<std::string_view, std::string>>& members);

// The operation that replaces the value at `pointer` by an array of
// strings.
FixOperation ReplaceWithStrings(std::string_view pointer, const std::vector<std::string>& texts);

}  // namespace shardplan

#endif  // SHARDPLAN_CORE_DIAGNOSTICS_FIXES_H_
