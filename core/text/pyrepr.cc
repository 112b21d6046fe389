#include "core/text/pyrepr.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <cstdio>

#include "core/text/utf8.h"

namespace shardplan {
namespace {

struct Range {
  uint32_t lo, hi;
};

// Code points above ASCII that Python's str.isprintable() rejects.
constexpr Range kNonPrintable[] = {
#include "core/text/unicode_printable.inc"
};

bool IsPrintableNonAscii(uint32_t cp) {
  const Range* end = std::end(kNonPrintable);
  const Range* it = std::upper_bound(std::begin(kNonPrintable), end, cp,
                                     [](uint32_t value, const Range& r) { return value < r.lo; });
  return it == std::begin(kNonPrintable) || cp > (it - 1)->hi;
}

}  // namespace

std::string PyRepr(std::string_view text) {
  const bool has_single = text.find('\'') != std::string_view::npos;
  const bool has_double = text.find('"') != std::string_view::npos;
  const char quote = (has_single && !has_double) ? '"' : '\'';
  std::string out;
  out.reserve(text.size() + 2);
  out.push_back(quote);
  char buf[16];
  for (size_t i = 0; i < text.size();) {
    size_t start = i;
    uint32_t cp = utf8::Decode(text, i);
    if (cp == static_cast<uint32_t>(quote) || cp == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(cp));
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp < 0x20 || cp == 0x7F) {
      std::snprintf(buf, sizeof buf, "\\x%02x", cp);
      out += buf;
    } else if (cp < 0x80 || IsPrintableNonAscii(cp)) {
      out.append(text.substr(start, i - start));
    } else {
      if (cp <= 0xFF) {
        std::snprintf(buf, sizeof buf, "\\x%02x", cp);
      } else if (cp <= 0xFFFF) {
        std::snprintf(buf, sizeof buf, "\\u%04x", cp);
      } else {
        std::snprintf(buf, sizeof buf, "\\U%08x", cp);
      }
      out += buf;
    }
  }
  out.push_back(quote);
  return out;
}

std::string PyReprList(const std::vector<std::string_view>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    out += PyRepr(items[i]);
  }
  out += "]";
  return out;
}

}  // namespace shardplan
