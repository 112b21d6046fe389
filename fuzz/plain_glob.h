// The glob fuzz target's reference: Python's fnmatch.fnmatchcase written
// the plain way, as fnmatch.translate's regular expression reads, and
// matched by trying every split (memoized), with none of core/text/glob's
// compilation into segments or its ASCII shortcuts. Checked against
// Python's verdicts in plain_glob_test.
#ifndef SHARDPLAN_FUZZ_PLAIN_GLOB_H_
#define SHARDPLAN_FUZZ_PLAIN_GLOB_H_

#include <string_view>

namespace shardplan {

// Whether `text` matches `pattern` (both valid UTF-8).
bool PlainGlobMatch(std::string_view pattern, std::string_view text);

}  // namespace shardplan

#endif  // SHARDPLAN_FUZZ_PLAIN_GLOB_H_
