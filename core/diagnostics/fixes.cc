#include "core/diagnostics/fixes.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/text/json_pointer.h"
#include "core/text/pyrepr.h"
#include "core/text/suggest.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace shardplan {

std::shared_ptr<const FixIt> MakeFixIt(std::string help, std::vector<FixOperation> fix) {
  return std::make_shared<const FixIt>(FixIt{.help = std::move(help), .fix = std::move(fix)});
}

std::shared_ptr<const FixIt> RenameUnknownFixIt(const std::vector<std::string_view>& unknown,
                                                const std::vector<std::string_view>& candidates,
                                                std::string_view listing,
                                                const std::function<std::vector<std::string>(std::string_view)>& pointers) {
  std::vector<std::string> meant;  // "'x'", or "'x' for 'y'" when several are unknown
  std::vector<std::string_view> taken;
  std::vector<FixOperation> fix;
  for (std::string_view name : unknown) {
    NearestName near(name);
    for (std::string_view c : candidates) near.Consider(c);
    const std::optional<std::string_view> best = near.best();
    if (!best) continue;
    meant.push_back(unknown.size() == 1 ? PyRepr(*best) : absl::StrCat(PyRepr(*best), " for ", PyRepr(name)));
    if (std::find(taken.begin(), taken.end(), *best) != taken.end()) continue;
    taken.push_back(*best);
    for (const std::string& pointer : pointers(name)) fix.push_back(RenameMember(pointer, *best));
  }
  if (taken.size() != unknown.size()) fix.clear();
  if (meant.empty()) return MakeFixIt(std::string(listing));
  return MakeFixIt(absl::StrCat("did you mean ", absl::StrJoin(meant, ", "), "? (", listing, ")"), std::move(fix));
}

std::string QuotedList(const std::vector<std::string_view>& names) {
  return absl::StrJoin(names, ", ", [](std::string* out, std::string_view n) { absl::StrAppend(out, PyRepr(n)); });
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

FixOperation ReplaceWithObject(std::string_view pointer,
                               const std::vector<std::pair<std::string_view, std::string>>& members) {
  rapidjson::StringBuffer json;
  rapidjson::Writer<rapidjson::StringBuffer> w(json);
  w.StartObject();
  for (const auto& [key, value] : members) {
    w.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()));
    w.String(value.data(), static_cast<rapidjson::SizeType>(value.size()));
  }
  w.EndObject();
  return {.op = "replace", .path = std::string(pointer), .value = std::string(json.GetString(), json.GetSize())};
}

FixOperation ReplaceWithString(std::string_view pointer, std::string_view text) {
  rapidjson::StringBuffer json;
  rapidjson::Writer<rapidjson::StringBuffer> w(json);
  w.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
  return {.op = "replace", .path = std::string(pointer), .value = std::string(json.GetString(), json.GetSize())};
}

}  // namespace shardplan
