// Fuzz target (b): document text -> plan.
#include "fuzz/document_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  shardplan::FuzzDocument(data, size, shardplan::Job::kPlan);
  return 0;
}
