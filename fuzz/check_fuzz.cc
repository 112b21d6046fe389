// Fuzz target (a): document text -> check.
#include "fuzz/document_fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  shardplan::FuzzDocument(data, size, shardplan::Job::kCheck);
  return 0;
}
