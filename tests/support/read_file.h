// Reads a test's input file whole, for the tests and tools that check the
// engine against files on disk (golden, conformance, C ABI, ...).
#ifndef SHARDPLAN_TESTS_SUPPORT_READ_FILE_H_
#define SHARDPLAN_TESTS_SUPPORT_READ_FILE_H_

#include <filesystem>
#include <optional>
#include <string>

namespace shardplan {

// The bytes of the file at `path`, unchanged (read in binary mode), or
// nullopt when it cannot be opened. An empty file is "", not nullopt.
// Callers that need the file call .value() (a test fails with
// std::bad_optional_access instead of going on with "") or assert
// has_value() with their own message.
std::optional<std::string> ReadFile(const std::filesystem::path& path);

}  // namespace shardplan

#endif  // SHARDPLAN_TESTS_SUPPORT_READ_FILE_H_
