// Did you mean: the name nearest to a misspelt one (the engine's help, the
// CLI's commands and options).
//
//   shardplan::NearestName near("chek");
//   for (std::string_view command : {"check", "plan"}) near.Consider(command);
//   near.best() == "check"
#ifndef SHARDPLAN_CORE_SUGGEST_H_
#define SHARDPLAN_CORE_SUGGEST_H_

#include "core/text/suggest.h"  // EditDistance, NearestName

#endif  // SHARDPLAN_CORE_SUGGEST_H_
