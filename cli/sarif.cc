#include "cli/sarif.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/engine.h"
#include "rapidjson/ostreamwrapper.h"
#include "rapidjson/writer.h"
#include "shardplan/shardplan.h"

namespace shardplan::cli {
namespace {

using Json = rapidjson::Writer<rapidjson::OStreamWrapper>;

void String(Json& w, std::string_view s) { w.String(s.data(), static_cast<rapidjson::SizeType>(s.size())); }
void Key(Json& w, std::string_view s) { w.Key(s.data(), static_cast<rapidjson::SizeType>(s.size())); }

// SARIF's level for a severity.
std::string_view Level(Severity severity) {
  switch (severity) {
    case Severity::kError:
      return "error";
    case Severity::kWarning:
      return "warning";
    case Severity::kInfo:
      return "note";
  }
  return "none";
}

void Optional(Json& w, const std::optional<std::string>& s) {
  if (s) {
    String(w, *s);
  } else {
    w.Null();
  }
}

// {"text": text}
void Text(Json& w, std::string_view key, std::string_view text) {
  Key(w, key);
  w.StartObject();
  Key(w, "text");
  String(w, text);
  w.EndObject();
}

}  // namespace

std::string ArtifactUri(std::string_view path) {
  std::string uri = path.starts_with('/') ? "file://" : "";
  for (const char c : path) {
    const unsigned char u = static_cast<unsigned char>(c);
    if ((u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || (u >= '0' && u <= '9') ||
        std::string_view("-._~/").find(c) != std::string_view::npos) {
      uri += c;
    } else {
      char escaped[4];
      std::snprintf(escaped, sizeof escaped, "%%%02X", u);
      uri += escaped;
    }
  }
  return uri;
}

void SarifLog::Add(std::string_view path, const Result& result, const std::vector<size_t>& shown,
                   const std::vector<std::optional<TextPosition>>& positions) {
  const size_t artifact = artifacts_.size();
  artifacts_.emplace_back(path);
  std::vector<size_t> group_of(result.diagnostics.size());
  for (size_t g = 0; g < result.groups.size(); ++g) {
    for (size_t i : result.groups[g].listed) group_of[i] = g;
  }
  for (size_t k = 0; k < shown.size(); ++k) {
    const size_t i = shown[k];
    findings_.push_back({result.diagnostics[i], artifact, positions[k], result.groups[group_of[i]].count});
  }
}

void SarifLog::Write(std::ostream& out) const {
  const std::vector<DiagnosticCode>& codes = DiagnosticCodes();
  absl::flat_hash_map<std::string_view, size_t> rule_index;
  for (size_t r = 0; r < codes.size(); ++r) rule_index[codes[r].name] = r;

  rapidjson::OStreamWrapper stream(out);
  Json w(stream);
  w.StartObject();
  Key(w, "$schema");
  String(w, "https://json.schemastore.org/sarif-2.1.0.json");
  Key(w, "version");
  String(w, "2.1.0");
  Key(w, "runs");
  w.StartArray();
  w.StartObject();

  Key(w, "tool");
  w.StartObject();
  Key(w, "driver");
  w.StartObject();
  Key(w, "name");
  String(w, "shardplan");
  Key(w, "semanticVersion");
  String(w, absl::StrCat(SP_VERSION_MAJOR, ".", SP_VERSION_MINOR, ".", SP_VERSION_PATCH));
  Key(w, "rules");
  w.StartArray();
  for (const DiagnosticCode& code : codes) {
    w.StartObject();
    Key(w, "id");
    String(w, code.name);
    std::string words(code.name);  // "unknown-module" -> "unknown module"
    std::replace(words.begin(), words.end(), '-', ' ');
    Text(w, "shortDescription", words);
    if (code.message != "…") Text(w, "fullDescription", code.message);
    // A reference relative to the repository's root, where docs/ is.
    Key(w, "helpUri");
    String(w, absl::StrCat("docs/", code.doc));
    Key(w, "defaultConfiguration");
    w.StartObject();
    Key(w, "level");
    String(w, Level(plan_ ? code.severity : code.check_severity));
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();
  w.EndObject();
  w.EndObject();

  Key(w, "columnKind");
  String(w, "unicodeCodePoints");  // as LocatePointers counts columns
  Key(w, "artifacts");
  w.StartArray();
  for (const std::string& path : artifacts_) {
    w.StartObject();
    Key(w, "location");
    w.StartObject();
    Key(w, "uri");
    String(w, ArtifactUri(path));
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();

  Key(w, "results");
  w.StartArray();
  for (const Finding& f : findings_) {
    const Diagnostic& d = f.diagnostic;
    w.StartObject();
    Key(w, "ruleId");
    String(w, d.code);
    Key(w, "ruleIndex");
    w.Uint64(rule_index.at(d.code));
    Key(w, "level");
    String(w, Level(d.severity));
    Text(w, "message", d.fix_it ? absl::StrCat(d.message, "\nhelp: ", d.fix_it->help) : d.message);
    Key(w, "locations");
    w.StartArray();
    w.StartObject();
    Key(w, "physicalLocation");
    w.StartObject();
    Key(w, "artifactLocation");
    w.StartObject();
    Key(w, "uri");
    String(w, ArtifactUri(artifacts_[f.artifact]));
    Key(w, "index");
    w.Uint64(f.artifact);
    w.EndObject();
    if (f.position) {
      Key(w, "region");
      w.StartObject();
      Key(w, "startLine");
      w.Uint64(f.position->line);
      Key(w, "startColumn");
      w.Uint64(f.position->column);
      w.EndObject();
    }
    w.EndObject();
    if (d.pointer) {
      Key(w, "logicalLocations");
      w.StartArray();
      w.StartObject();
      Key(w, "fullyQualifiedName");
      String(w, *d.pointer);
      w.EndObject();
      w.EndArray();
    }
    w.EndObject();
    w.EndArray();
    // What the engine's result says beyond SARIF's fields.
    Key(w, "properties");
    w.StartObject();
    Key(w, "pointer");
    Optional(w, d.pointer);
    Key(w, "fqn");
    Optional(w, d.fqn);
    Key(w, "parameter");
    Optional(w, d.parameter);
    Key(w, "help");
    Optional(w, d.fix_it ? std::optional(d.fix_it->help) : std::nullopt);
    Key(w, "groupCount");
    w.Uint64(f.group_count);
    w.EndObject();
    w.EndObject();
  }
  w.EndArray();

  w.EndObject();
  w.EndArray();
  w.EndObject();
  stream.Flush();
  out << "\n";
}

}  // namespace shardplan::cli
