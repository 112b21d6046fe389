// The parallel phases give the same result, byte for byte, on 1, 2, 4 and 8
// threads: on every conformance, golden and example document (small: mostly
// the serial paths) and on generated documents large enough that every
// parallel phase splits its work (grains of 1,024 to 4,096 entries), passing
// and failing ones. tools/test.sh also runs this test under ThreadSanitizer
// (--config=tsan), where a data race in a parallel phase fails it.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_replace.h"
#include "bench/model_gen.h"
#include "core/engine.h"
#include "gtest/gtest.h"

namespace shardplan {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string ResultOf(const std::string& text, bool plan, int threads) {
  CheckOptions options;
  options.threads = threads;
  const absl::StatusOr<Result> r = plan ? Plan(text, options) : Check(text, options);
  return r.ok() ? ResultToJson(*r) : "misuse: " + std::string(r.status().message());
}

void ExpectSameOnEveryThreadCount(const std::string& name, const std::string& text) {
  for (bool plan : {false, true}) {
    const std::string one = ResultOf(text, plan, 1);
    for (int threads : {2, 4, 8}) {
      EXPECT_TRUE(ResultOf(text, plan, threads) == one)
          << name << (plan ? " (plan)" : " (check)") << " differs on " << threads << " threads";
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
      ExpectSameOnEveryThreadCount(file.string(), ReadFile(file));
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

}  // namespace
}  // namespace shardplan
