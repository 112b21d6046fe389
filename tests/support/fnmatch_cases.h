// Python's fnmatch.fnmatchcase verdicts on random patterns and texts
// (tests/core/testdata/fnmatch_cases.tsv, written by
// tools/gen_fnmatch_cases.py): the reference for every glob matcher here.
#ifndef SHARDPLAN_TESTS_SUPPORT_FNMATCH_CASES_H_
#define SHARDPLAN_TESTS_SUPPORT_FNMATCH_CASES_H_

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace shardplan {

struct FnmatchCase {
  std::string pattern, text;
  bool match;
};

// The cases, read from the runfiles; empty when the file is missing.
inline std::vector<FnmatchCase> ReadFnmatchCases() {
  std::vector<FnmatchCase> cases;
  std::ifstream in("tests/core/testdata/fnmatch_cases.tsv");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    FnmatchCase c;
    std::string verdict;
    std::getline(fields, c.pattern, '\t');
    std::getline(fields, c.text, '\t');
    std::getline(fields, verdict);
    c.match = verdict == "1";
    cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace shardplan

#endif  // SHARDPLAN_TESTS_SUPPORT_FNMATCH_CASES_H_
