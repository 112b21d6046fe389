// Where JSON pointers point in a document's text, as line and column: the
// CLI's DOC:LINE:COL next to a diagnostic's pointer.
//
//   std::vector<std::optional<TextPosition>> at = shardplan::LocatePointers(text, {"/modules/m1"});
#ifndef SHARDPLAN_CORE_LOCATE_H_
#define SHARDPLAN_CORE_LOCATE_H_

#include "core/text/json_locate.h"  // TextPosition, LocatePointers

#endif  // SHARDPLAN_CORE_LOCATE_H_
