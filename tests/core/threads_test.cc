// The parallel phases give the same result, byte for byte, on 1, 2, 4 and 8
// threads, made whole or streamed (ResultJsonWriter): on every conformance, golden and example document (small: mostly
// the serial paths) and on generated documents large enough that every
// parallel phase splits its work (grains of 1,024 to 4,096 entries), passing
// and failing ones. tools/test.sh also runs this test under ThreadSanitizer
// (--config=tsan), where a data race in a parallel phase fails it.
#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_replace.h"
#include "bench/model_gen.h"
#include "core/engine.h"
#include "gtest/gtest.h"
#include "tests/support/read_file.h"

namespace shardplan {
namespace {

namespace fs = std::filesystem;

std::string ResultOf(const std::string& text, bool plan, int threads) {
  CheckOptions options;
  options.threads = threads;
  const absl::StatusOr<Result> r = plan ? Plan(text, options) : Check(text, options);
  return r.ok() ? ResultToJson(*r) : "misuse: " + std::string(r.status().message());
}

// The JSON the CLI writes: each diagnostic streamed as the engine makes it
// (ResultJsonWriter as CheckOptions::stream).
std::string StreamedResultOf(const std::string& text, bool plan, CheckOptions options, size_t max_diagnostics = 0) {
  std::ostringstream out;
  ResultJsonWriter json(out, max_diagnostics);
  options.stream = &json;
  const absl::StatusOr<Result> r = plan ? Plan(text, options) : Check(text, options);
  if (!r.ok()) return "misuse: " + std::string(r.status().message());
  EXPECT_TRUE(r->diagnostics.empty()) << "a streamed result holds its diagnostics";
  json.Finish(*r);
  return std::move(out).str();
}

// The same bytes on every thread count, and streamed on one thread and on
// several (the test's time goes to the large documents, under TSan too).
void ExpectSameOnEveryThreadCount(const std::string& name, const std::string& text) {
  for (bool plan : {false, true}) {
    const std::string one = ResultOf(text, plan, 1);
    for (int threads : {2, 4, 8}) {
      EXPECT_TRUE(ResultOf(text, plan, threads) == one)
          << name << (plan ? " (plan)" : " (check)") << " differs on " << threads << " threads";
    }
    for (int threads : {1, 4}) {
      CheckOptions options;
      options.threads = threads;
      EXPECT_TRUE(StreamedResultOf(text, plan, options) == one)
          << name << (plan ? " (plan)" : " (check)") << " streamed differs on " << threads << " threads";
    }
  }
}

TEST(ThreadsTest, CasesAndExamplesGiveOneResultOnEveryThreadCount) {
  size_t documents = 0;
  for (const char* folder : {"tests/conformance/cases", "tests/golden/cases", "examples"}) {
    std::vector<fs::path> files;
    for (const fs::directory_entry& entry : fs::directory_iterator(folder)) {
      if (entry.path().extension() == ".json") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& file : files) {
      ExpectSameOnEveryThreadCount(file.string(), ReadFile(file).value());
      ++documents;
    }
  }
  EXPECT_GT(documents, 200u);
}

std::vector<std::pair<std::string, std::string>> LargeDocuments() {
  using bench::GenOptions;
  using bench::ModelKind;
  std::vector<std::pair<std::string, std::string>> docs;
  GenOptions generic;
  generic.kind = ModelKind::kGeneric;
  generic.params = 12'000;
  generic.owners_fraction = 0.7;
  generic.seed = 7;
  docs.emplace_back("generic", bench::GenerateDocument(generic));
  generic.plan = true;
  docs.emplace_back("generic with a plan", bench::GenerateDocument(generic));
  GenOptions deepseek;
  deepseek.layers = 4;
  deepseek.experts = 128;
  docs.emplace_back("deepseek", bench::GenerateDocument(deepseek));
  GenOptions shared;
  shared.kind = ModelKind::kShared;
  shared.paths = 6'000;
  shared.blocks = 8;
  docs.emplace_back("shared", bench::GenerateDocument(shared));
  // Thousands of findings, whose order must not depend on the threads: every
  // layout placing on an axis the mesh does not have (unknown-axis), and
  // every expert weight renamed to one its module does not have
  // (unknown-parameter, omitted-parameters).
  docs.emplace_back("deepseek, unknown axis",
                    absl::StrReplaceAll(docs[2].second, {{R"J("ep":"R")J", R"J("zz":"R")J"}}));
  docs.emplace_back("deepseek, unknown parameter",
                    absl::StrReplaceAll(docs[2].second, {{R"("gate_proj.weight":{)", R"("gate_proj.weigh":{)"}}));
  // A storm from one declaration: the experts' native pattern made to match
  // their Linear children too (fnmatch's '*' crosses dots).
  docs.emplace_back("deepseek, over-wide glob", absl::StrReplaceAll(docs[2].second, {{R"("layers.*.mlp.experts.[0-9]")",
                                                                                     R"("layers.*.mlp.experts.*")"}}));
  return docs;
}

TEST(ThreadsTest, LargeDocumentsGiveOneResultOnEveryThreadCount) {
  for (const auto& [name, text] : LargeDocuments()) {
    ASSERT_FALSE(text.empty()) << name;
    ExpectSameOnEveryThreadCount(name, text);
  }
}

// The failing variants above do fail, many times over: else they would test
// nothing beyond the passing ones.
TEST(ThreadsTest, FailingLargeDocumentsReportManyFindings) {
  const std::vector<std::pair<std::string, std::string>> docs = LargeDocuments();
  for (size_t i = 4; i < docs.size(); ++i) {
    CheckOptions options;
    options.threads = 1;
    const absl::StatusOr<Result> r = Check(docs[i].second, options);
    ASSERT_TRUE(r.ok()) << docs[i].first;
    EXPECT_FALSE(r->ok) << docs[i].first;
    EXPECT_GT(r->diagnostics.size(), 100u) << docs[i].first;
  }
}

// Listing only the first few diagnostics of each group
// (instances_per_group) keeps exactly those of the full list, with every
// group and its full count, on every thread count.
TEST(ThreadsTest, CappedGroupsAgreeWithTheFullListOnEveryThreadCount) {
  for (const auto& [name, text] : LargeDocuments()) {
    for (bool plan : {false, true}) {
      CheckOptions options;
      options.threads = 1;
      const absl::StatusOr<Result> full = plan ? Plan(text, options) : Check(text, options);
      ASSERT_TRUE(full.ok()) << name;
      for (size_t cap : {1, 3}) {
        std::string first_json;
        for (int threads : {1, 2, 4, 8}) {
          options.threads = threads;
          options.instances_per_group = cap;
          const absl::StatusOr<Result> capped = plan ? Plan(text, options) : Check(text, options);
          ASSERT_TRUE(capped.ok()) << name;
          EXPECT_EQ(capped->ok, full->ok) << name;
          ASSERT_EQ(capped->groups.size(), full->groups.size()) << name;
          size_t kept = 0;
          for (size_t g = 0; g < full->groups.size(); ++g) {
            const DiagnosticGroup& want = full->groups[g];
            const DiagnosticGroup& got = capped->groups[g];
            EXPECT_EQ(got.code, want.code) << name;
            EXPECT_EQ(got.pointer, want.pointer) << name;
            EXPECT_EQ(got.count, want.count) << name;
            ASSERT_EQ(got.listed.size(), std::min(cap, want.count)) << name;
            for (size_t k = 0; k < got.listed.size(); ++k) {
              EXPECT_EQ(capped->diagnostics[got.listed[k]].message, full->diagnostics[want.listed[k]].message)
                  << name;
            }
            kept += got.listed.size();
          }
          EXPECT_EQ(capped->diagnostics.size(), kept) << name;
          const std::string json = ResultToJson(*capped);
          if (threads == 1) first_json = json;
          EXPECT_TRUE(json == first_json) << name << " capped at " << cap << " differs on " << threads << " threads";
          // Streamed, as `--format json --max-diagnostics N` writes it (on
          // one thread and on several).
          if (threads == 1 || threads == 4) {
            for (size_t max_diagnostics : {0, 2}) {
              EXPECT_TRUE(StreamedResultOf(text, plan, options, max_diagnostics) ==
                          ResultToJson(*capped, max_diagnostics))
                  << name << " capped at " << cap << " and streamed differs on " << threads << " threads";
            }
          }
        }
      }
    }
  }
}

TEST(ThreadsTest, TheOverWideGlobIsOneStormOfFewGroups) {
  const std::vector<std::pair<std::string, std::string>> docs = LargeDocuments();
  const std::string& storm = docs.back().second;
  CheckOptions options;
  options.instances_per_group = 3;
  const absl::StatusOr<Result> r = Check(storm, options);
  ASSERT_TRUE(r.ok());
  size_t total = 0;
  for (const DiagnosticGroup& g : r->groups) total += g.count;
  EXPECT_GT(total, 1000u);
  EXPECT_LT(r->groups.size(), 20u);
  EXPECT_LE(r->diagnostics.size(), 3 * r->groups.size());
  ASSERT_FALSE(r->diagnostics.empty());
  EXPECT_EQ(r->diagnostics[0].pointer, "/providers/native/0/parallel");
}

}  // namespace
}  // namespace shardplan
