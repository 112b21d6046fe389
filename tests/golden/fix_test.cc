// Fix-its (Diagnostic::help and Diagnostic::fix) on the golden and
// conformance documents: every fix, applied alone as the RFC 6902 JSON Patch
// it is, removes the finding it fixes and adds no error to the stages that
// ran (later stages, which the error skipped, may then report); the help of each
// golden case of a code with fix-its says what its twin (.pass.json) does.
#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "core/diagnostics/codes.h"
#include "core/engine.h"
#include "gtest/gtest.h"
#include "rapidjson/document.h"
#include "rapidjson/pointer.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "tests/support/read_file.h"

namespace shardplan {
namespace {

namespace fs = std::filesystem;

// `text` with the JSON Patch `fix` applied ("move" and "replace", the ops
// fixes use); "" when an operation does not apply.
std::string Apply(const std::string& text, const std::vector<FixOperation>& fix) {
  rapidjson::Document doc;
  doc.Parse(text.c_str(), text.size());
  if (doc.HasParseError()) return "";
  auto& alloc = doc.GetAllocator();
  for (const FixOperation& op : fix) {
    const rapidjson::Pointer path(op.path.c_str(), op.path.size());
    if (!path.IsValid()) return "";
    rapidjson::Value value;
    if (op.op == "move" && op.from) {
      const rapidjson::Pointer from(op.from->c_str(), op.from->size());
      const rapidjson::Value* moved = from.IsValid() ? from.Get(doc) : nullptr;
      if (moved == nullptr) return "";
      value.CopyFrom(*moved, alloc);
      from.Erase(doc);
    } else if (op.op == "replace" && op.value) {
      if (path.Get(doc) == nullptr) return "";
      rapidjson::Document parsed(&alloc);
      parsed.Parse(op.value->c_str(), op.value->size());
      if (parsed.HasParseError()) return "";
      value.CopyFrom(parsed, alloc);
    } else {
      return "";
    }
    path.Set(doc, value, alloc);
  }
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> writer(out);
  doc.Accept(writer);
  return std::string(out.GetString(), out.GetSize());
}

// Whether `text` runs as `plan`: golden cases named after a planning code.
bool Planned(const fs::path& path) {
  const std::string name = path.filename().string();
  for (const CodeInfo& info : kCodes) {
    if (info.stage == Stage::kPlanning && absl::StartsWith(name, absl::StrCat(info.name, "."))) return true;
  }
  return false;
}

Result CheckOrPlan(const std::string& text, bool plan) {
  absl::StatusOr<Result> r = plan ? Plan(text, {}) : Check(text, {});
  EXPECT_TRUE(r.ok());
  return r.ok() ? *std::move(r) : Result{};
}

using Finding = std::tuple<std::string, std::string, std::optional<std::string>>;  // code, message, pointer

Finding FindingOf(const Diagnostic& d) { return {d.code, d.message, d.pointer}; }

std::vector<fs::path> Documents() {
  std::vector<fs::path> paths;
  for (const char* folder : {"tests/golden/cases", "tests/conformance/cases"}) {
    for (const fs::directory_entry& e : fs::directory_iterator(folder)) {
      if (e.path().extension() == ".json") paths.push_back(e.path());
    }
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

Stage StageOf(std::string_view code) {
  for (const CodeInfo& info : kCodes) {
    if (info.name == code) return info.stage;
  }
  ADD_FAILURE() << "no code " << code;
  return Stage::kDocument;
}

TEST(FixTest, EveryFixRemovesItsFindingAndAddsNoError) {
  std::map<std::string, size_t> fixed;  // per code
  for (const fs::path& path : Documents()) {
    const std::string text = ReadFile(path).value();
    const bool plan = Planned(path);
    const Result before = CheckOrPlan(text, plan);
    std::set<std::pair<std::string, std::string>> errors;
    // The stages that ran: none after the first with an error (semantics.md
    // section 8); a fix may let a later one run and report what it finds.
    Stage last_run = Stage::kPlanning;
    for (const Diagnostic& d : before.diagnostics) {
      if (d.severity != Severity::kError) continue;
      errors.insert({d.code, d.message});
      last_run = std::min(last_run, StageOf(d.code));
    }
    for (const Diagnostic& d : before.diagnostics) {
      if (!d.fix_it || d.fix_it->fix.empty()) continue;
      const std::string patched = Apply(text, d.fix_it->fix);
      ASSERT_FALSE(patched.empty()) << path << ": the fix of " << d.message << " does not apply";
      const Result after = CheckOrPlan(patched, plan);
      for (const Diagnostic& a : after.diagnostics) {
        EXPECT_NE(FindingOf(a), FindingOf(d)) << path << ": still there after its fix";
        if (a.severity == Severity::kError && StageOf(a.code) <= last_run) {
          EXPECT_TRUE(errors.count({a.code, a.message})) << path << ": the fix of '" << d.message
                                                          << "' adds " << a.code << ": " << a.message;
        }
      }
      ++fixed[d.code];
    }
  }
  // Not vacuous: the codes with mechanical fixes have golden cases.
  for (const char* code : {"unknown-module", "unknown-axis", "unknown-parameter", "parallel-unknown-axis",
                           "overlapping-communication", "nested-duplicate", "unknown-forward-input", "unknown-output", "invalid-document", "shared-conflict", "override-shared-conflict",
                           "empty-shard", "uneven-shard"}) {
    EXPECT_GT(fixed[code], 0u) << code;
  }
}

// The golden cases of the codes with fix-its: each one's help, and whether
// its fix alone makes the document pass as its twin (.pass.json) does. The
// `.typo` cases misspell a name; the others name what is not there at all.
TEST(FixTest, GoldenCasesHelpAndFixAsTheirTwinsDo) {
  struct Want {
    const char* stem;
    std::optional<std::string> help;
    bool fixed;  // the first diagnostic has a fix, and it makes the document pass
  };
  const Want wants[] = {
      {"unknown-module", "did you mean 'proj'?", true},
      {"unknown-module.typo", "did you mean 'proj'?", true},
      {"unknown-module.plan", std::nullopt, false},
      {"unknown-axis", "the mesh's axes are 'dp', 'tp'", false},
      {"unknown-axis.typo", "did you mean 'dp'? (the mesh's axes are 'dp', 'tp')", true},
      // The spec names 'tp' already: renaming 'sp' would repeat it.
      {"parallel-unknown-axis", "did you mean 'tp'? (the mesh's axes are 'tp')", false},
      {"parallel-unknown-axis.typo", "did you mean 'tp'? (the mesh's axes are 'tp')", true},
      {"unknown-parameter", std::nullopt, false},
      {"unknown-parameter.typo", "did you mean 'proj.weight'?", true},
      // The storm of one over-wide native pattern: the narrower one.
      {"invalid-document.style-typo", "did you mean 'colwise'?", true},
      // The conflicting layouts side by side; the fix copies the first.
      {"shared-conflict",
       "its first claimant 'embed_tokens.weight' places it tp=S(0), this layout tp=S(1); declare the same "
       "placements in both",
       true},
      {"override-shared-conflict",
       "an earlier plan entry places it tp=S(0), this layout tp=R; declare the same placements in both", true},
      // Help only: the pattern would then match modules the request's
      // layout (or the rule's style) may not fit.
      {"native-no-match", "did you mean 'layers.*'?", false},
      {"unused-template-rule", "did you mean 'layers.*.q_proj'?", false},
      {"unknown-forward-input", "the forward takes 'input'", false},
      {"unknown-forward-input.typo",
       "did you mean 'hidden_states'? (the forward takes 'hidden_states', 'attention_mask')", true},
      {"unknown-output", "out_names lists 'output'", false},
      {"unknown-output.typo", "did you mean 'logits'? (out_names lists 'logits')", true},
      // tp=4 over 2 rows: the same 8 devices as dp=4, tp=2.
      {"empty-shard.mesh", "with the same 8 devices, the mesh dp=4, tp=2 splits every sharded dim evenly", true},
      {"uneven-shard.vocabulary", "pad the vocabulary (dim 0) to 1028, the next multiple of 4", true},
      // A single axis: no other mesh of its devices.
      {"empty-shard", std::nullopt, false},
      {"overlapping-communication.glob",
       "'layers.*.mlp.experts.*' also matches the modules nested in those it matches (fnmatch's '*' crosses "
       "dots); \"match\": ['layers.*.mlp.experts.[0-9]'] matches only the outer ones",
       true},
  };
  for (const Want& want : wants) {
    const fs::path path = fs::path("tests/golden/cases") / absl::StrCat(want.stem, ".fail.json");
    const std::string text = ReadFile(path).value();
    const bool plan = Planned(path);
    const Result before = CheckOrPlan(text, plan);
    ASSERT_FALSE(before.diagnostics.empty()) << path;
    const Diagnostic& d = before.diagnostics[0];
    EXPECT_EQ(d.fix_it ? std::optional(d.fix_it->help) : std::nullopt, want.help) << path;
    EXPECT_EQ(d.fix_it && !d.fix_it->fix.empty(), want.fixed) << path;
    if (want.fixed && d.fix_it) {
      EXPECT_TRUE(CheckOrPlan(Apply(text, d.fix_it->fix), plan).ok) << path;
    }
  }
}

}  // namespace
}  // namespace shardplan
