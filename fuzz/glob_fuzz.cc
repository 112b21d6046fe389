// Fuzz target (d): core/text/glob's matcher against the plain one
// (plain_glob.h). The input is a pattern and a text separated by the first
// NUL byte (without one, the text is the pattern itself); inputs that are
// not valid UTF-8 are skipped, as documents holding them are refused.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/text/glob.h"
#include "core/text/utf8.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/plain_glob.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace shardplan;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string pattern(input.substr(0, nul));
  const std::string text(nul == std::string_view::npos ? input : input.substr(nul + 1));
  // The plain matcher's table is pattern x text: keep it small.
  if (pattern.size() > 256 || text.size() > 1024) return 0;
  if (!utf8::IsValid(pattern) || !utf8::IsValid(text)) return 0;

  const Glob glob(pattern);
  const bool want = PlainGlobMatch(pattern, text);
  FUZZ_CHECK(glob.Matches(text) == want, "Glob('%s').Matches('%s') != %d", pattern.c_str(), text.c_str(), want);
  if (utf8::IsAscii(text)) {
    FUZZ_CHECK(glob.MatchesAscii(text) == want, "Glob('%s').MatchesAscii('%s') != %d", pattern.c_str(),
               text.c_str(), want);
  }
  if (glob.is_literal()) {
    FUZZ_CHECK(want == (text == pattern), "literal '%s' against '%s'", pattern.c_str(), text.c_str());
  }
  if (want) {
    FUZZ_CHECK(std::string_view(text).starts_with(glob.literal_prefix()), "'%s' matches '%s' without prefix '%s'",
               text.c_str(), pattern.c_str(), glob.literal_prefix().c_str());
    FUZZ_CHECK(std::string_view(text).ends_with(glob.literal_tail()), "'%s' matches '%s' without tail '%s'",
               text.c_str(), pattern.c_str(), glob.literal_tail().c_str());
  }
  return 0;
}
