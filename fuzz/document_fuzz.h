// Fuzz targets (a) and (b): document text -> check, document text -> plan.
#ifndef SHARDPLAN_FUZZ_DOCUMENT_FUZZ_H_
#define SHARDPLAN_FUZZ_DOCUMENT_FUZZ_H_

#include <cstddef>
#include <cstdint>

namespace shardplan {

enum class Job { kCheck, kPlan };

// Runs `job` on the text and holds the result to what every result owes,
// whatever the input: the engine answers (a malformed text is a diagnostic,
// not an error), its JSON is well formed, every diagnostic's pointer names a
// value of the document, and a plan's memory is ordered (min <= mean <= max
// <= unsharded).
void FuzzDocument(const uint8_t* data, size_t size, Job job);

}  // namespace shardplan

#endif  // SHARDPLAN_FUZZ_DOCUMENT_FUZZ_H_
