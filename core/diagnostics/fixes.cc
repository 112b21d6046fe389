#include "core/diagnostics/fixes.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "core/text/json_pointer.h"
#include "core/text/pyrepr.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace shardplan {

std::shared_ptr<const FixIt> MakeFixIt(std::string help, std::vector<FixOperation> fix) {
  return std::make_shared<const FixIt>(FixIt{.help = std::move(help), .fix = std::move(fix)});
}

std::string DidYouMean(std::string_view name) { return absl::StrCat("did you mean ", PyRepr(name), "?"); }

FixOperation RenameMember(std::string_view pointer, std::string_view key) {
  const std::string_view parent = pointer.substr(0, pointer.rfind('/'));
  return {.op = "move", .path = absl::StrCat(parent, "/", JsonPointerToken(key)), .from = std::string(pointer)};
}

FixOperation ReplaceWithStrings(std::string_view pointer, const std::vector<std::string>& texts) {
  rapidjson::StringBuffer json;
  rapidjson::Writer<rapidjson::StringBuffer> w(json);
  w.StartArray();
  for (const std::string& text : texts) w.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
  w.EndArray();
  return {.op = "replace", .path = std::string(pointer), .value = std::string(json.GetString(), json.GetSize())};
}

FixOperation ReplaceWithInteger(std::string_view pointer, uint64_t value) {
  return {.op = "replace", .path = std::string(pointer), .value = absl::StrCat(value)};
}

FixOperation ReplaceWithString(std::string_view pointer, std::string_view text) {
  rapidjson::StringBuffer json;
  rapidjson::Writer<rapidjson::StringBuffer> w(json);
  w.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
  return {.op = "replace", .path = std::string(pointer), .value = std::string(json.GetString(), json.GetSize())};
}

}  // namespace shardplan
