// The parallel phases must not change anything: the same result, byte for
// byte, and the same diagnostics in the same order, for every thread count.
#include "core/exec/parallel.h"
#include "core/exec/scan_then_apply.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/engine.h"
#include "core/outcome.h"
#include "gtest/gtest.h"

namespace shardplan {
namespace {

TEST(ParallelForTest, CoversEveryIndexOnceInChunksOfAboutTheGrain) {
  for (size_t n : {0, 1, 7, 1000, 100000}) {
    std::vector<std::atomic<int>> seen(n);
    std::atomic<bool> short_chunk{false};
    WithThreads(4, [&] {
      ParallelFor(n, 64, [&](size_t begin, size_t end) {
        if (end - begin < 32) short_chunk = n >= 64;
        for (size_t i = begin; i < end; ++i) ++seen[i];
      });
      return 0;
    });
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(seen[i].load(), 1) << "n=" << n << " i=" << i;
    EXPECT_FALSE(short_chunk) << "n=" << n;
  }
}

// Both run, once each: in order on one thread, on any of the arena's
// threads with several.
TEST(ParallelInvokeTest, RunsBothOnceInOrderOnOneThread) {
  for (int threads : {1, 2, 4}) {
    std::mutex mutex;
    std::vector<char> order;
    WithThreads(threads, [&] {
      ParallelInvoke([&] { std::lock_guard lock(mutex); order.push_back('a'); },
                     [&] { std::lock_guard lock(mutex); order.push_back('b'); });
      return 0;
    });
    if (threads > 1) std::sort(order.begin(), order.end());  // either may run first
    EXPECT_EQ(order, (std::vector<char>{'a', 'b'})) << threads << " threads";
  }
}

// The cth chunk is [begin + c * grain, min(end, begin + (c + 1) * grain)):
// a caller keeping results in slot c merges them in index order.
TEST(ParallelChunksTest, NumbersEveryChunkByItsPlaceInTheRange) {
  for (size_t begin : {size_t{0}, size_t{9}}) {
    for (size_t n : {0, 1, 64, 65, 10000}) {
      const size_t end = begin + n, chunks = ChunkCount(n, 64);
      std::vector<std::atomic<int>> calls(chunks);
      std::atomic<bool> misplaced{false};
      WithThreads(4, [&] {
        ParallelChunks(begin, end, 64, [&](size_t c, size_t lo, size_t hi) {
          if (c >= chunks || lo != begin + c * 64 || hi != std::min(end, lo + 64)) {
            misplaced = true;
            return;
          }
          ++calls[c];
        });
        return 0;
      });
      EXPECT_FALSE(misplaced) << "[" << begin << ", " << end << ")";
      for (size_t c = 0; c < chunks; ++c) EXPECT_EQ(calls[c].load(), 1) << "[" << begin << ", " << end << ") c=" << c;
    }
  }
}

// Each index gathers none, one or two items; they come out in index order,
// from chunks of 64 indexes (the last one shorter) laid end to end.
TEST(ParallelGatherTest, JoinsTheItemsOfEveryIndexInOrderForEveryThreadCount) {
  auto gather_index = [](size_t i, std::vector<uint32_t>& items) {
    if (i % 7 == 3) items.push_back(static_cast<uint32_t>(i));
    if (i % 1000 == 0) items.insert(items.end(), {static_cast<uint32_t>(i), 0});
  };
  for (size_t begin : {size_t{0}, size_t{5}}) {
    for (size_t end : {begin, begin + 1, begin + 100, begin + 100003}) {
      std::vector<uint32_t> want;
      for (size_t i = begin; i < end; ++i) gather_index(i, want);
      for (int threads : {1, 4}) {
        std::atomic<bool> misplaced{false};
        auto gather = [&](size_t lo, size_t hi, std::vector<uint32_t>& items) {
          if ((lo - begin) % 64 != 0 || hi != std::min(end, lo + 64)) misplaced = true;
          for (size_t i = lo; i < hi; ++i) gather_index(i, items);
        };
        const std::vector<uint32_t> got =
            WithThreads(threads, [&] { return ParallelGather<uint32_t>(begin, end, 64, gather); });
        EXPECT_EQ(got, want) << "[" << begin << ", " << end << ") threads=" << threads;
        EXPECT_FALSE(misplaced) << "[" << begin << ", " << end << ") threads=" << threads;
      }
    }
  }
}

// WithThreads(1, ...) runs everything on the calling thread and never
// enters oneTBB: on a thread that has no arena, none is made (the thread
// index stays "not initialized"). ParallelFor takes the whole range at
// once, and the pipeline consumes each item as soon as it is produced.
TEST(WithThreadsTest, OneThreadRunsEveryHelperOnTheCallingThreadOutsideOneTbb) {
  std::thread([] {
    const std::thread::id caller = std::this_thread::get_id();
    std::vector<std::string> events;
    WithThreads(1, [&] {
      EXPECT_TRUE(OnOneThread());
      EXPECT_EQ(ArenaThreads(), 1u);
      ParallelFor(1000, 10, [&](size_t begin, size_t end) {
        EXPECT_EQ(std::this_thread::get_id(), caller);
#ifndef SHARDPLAN_SERIAL
        EXPECT_EQ(tbb::this_task_arena::current_thread_index(), int{tbb::task_arena::not_initialized});
#endif
        events.push_back(absl::StrCat("for ", begin, "-", end));
      });
      int items[3] = {0, 1, 2}, next = 0;
      Pipeline<int>(
          4, [&]() -> int* {
            if (next == 3) return nullptr;
            events.push_back(absl::StrCat("produce ", next));
            return &items[next++];
          },
          [&](int& item) {
            EXPECT_EQ(std::this_thread::get_id(), caller);
            events.push_back(absl::StrCat("consume ", item));
          });
      return 0;
    });
    EXPECT_EQ(events, (std::vector<std::string>{"for 0-1000", "produce 0", "consume 0", "produce 1", "consume 1",
                                                "produce 2", "consume 2"}));
#ifndef SHARDPLAN_SERIAL
    EXPECT_FALSE(OnOneThread());  // only inside the call
    EXPECT_FALSE(WithThreads(2, [] { return OnOneThread(); }));
#endif
  }).join();
}

// Every index is scanned once into a fresh result, and applied once, in
// increasing order, with what its own scan left; scans of later blocks may
// run while earlier ones are applied, so apply also checks it never sees a
// result still being written. The blocks are sized as scan_then_apply.h
// says.
TEST(ScanThenApplyTest, AppliesEveryScanInIndexOrder) {
  struct Result {
    std::vector<size_t> values;  // fresh: empty
    bool done = false;
  };
  for (size_t n : {0, 1, 63, 64, 65, 100003}) {
    for (int threads : {1, 4}) {
      std::vector<std::atomic<int>> scanned(n);
      std::vector<size_t> applied;
      std::mutex mutex;
      std::map<size_t, size_t> blocks;  // first index -> size
      size_t arena = 1;  // the threads that ran it
      WithThreads(threads, [&] {
        arena = ArenaThreads();
        ScanThenApply<Result>(
            n, 64,
            [&](size_t begin, size_t end, Result* results) {
              {
                std::lock_guard<std::mutex> lock(mutex);
                blocks[begin] = end - begin;
              }
              for (size_t i = begin; i < end; ++i) {
                Result& r = results[i - begin];
                ++scanned[i];
                r.values.push_back(i * 3);
                r.done = true;
              }
            },
            [&](size_t i, Result& r) {
              ASSERT_TRUE(r.done);
              ASSERT_EQ(r.values, std::vector<size_t>{i * 3});
              applied.push_back(i);
            });
        return 0;
      });
      std::vector<size_t> want(n);
      for (size_t i = 0; i < n; ++i) want[i] = i;
      EXPECT_EQ(applied, want) << "n=" << n << " threads=" << threads;
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(scanned[i].load(), 1) << i;
      std::vector<size_t> sizes;
      for (const auto& [begin, size] : blocks) sizes.push_back(size);
      if (arena == 1 || n <= 64) {
        // Blocks of 64, the last one shorter.
        ASSERT_EQ(sizes.size(), (n + 63) / 64) << "n=" << n;
        for (size_t k = 0; k + 1 < sizes.size(); ++k) EXPECT_EQ(sizes[k], 64u) << "n=" << n;
        continue;
      }
      // As many blocks as blocks of 64 (of n / 128 where that is more)
      // would make, rounded up to a multiple of the threads, all even.
      const size_t at_most = std::max<size_t>(64, (n + 127) / 128);
      const size_t count = ((n + at_most - 1) / at_most + arena - 1) / arena * arena;
      ASSERT_EQ(sizes.size(), count) << "n=" << n << " threads=" << arena;
      const auto [least, most] = std::minmax_element(sizes.begin(), sizes.end());
      EXPECT_LE(*most - *least, 1u) << "n=" << n;
    }
  }
}

// A result with Clear() is cleared for each block, keeping its storage,
// instead of replaced by a new value: each scan still finds it fresh.
std::atomic<size_t> clears{0};
struct ClearedResult {
  std::vector<size_t> values;
  bool done = false;
  void Clear() {
    values.clear();
    done = false;
    ++clears;
  }
};

TEST(ScanThenApplyTest, ResultsWithClearAreClearedForEachBlock) {
  for (int threads : {1, 4}) {
    const size_t n = 10000;
    clears = 0;
    std::vector<size_t> applied;
    WithThreads(threads, [&] {
      ScanThenApply<ClearedResult>(
          n, 64,
          [&](size_t begin, size_t end, ClearedResult* results) {
            for (size_t i = begin; i < end; ++i) {
              ClearedResult& r = results[i - begin];
              ASSERT_TRUE(r.values.empty());
              ASSERT_FALSE(r.done);
              r.values.push_back(i);
              r.done = true;
            }
          },
          [&](size_t i, ClearedResult& r) {
            ASSERT_EQ(r.values, std::vector<size_t>{i});
            applied.push_back(i);
          });
      return 0;
    });
    EXPECT_EQ(applied.size(), n);
    EXPECT_EQ(clears.load(), n) << "threads=" << threads;
  }
}

// A block is applied on the thread that scanned it, whatever the thread
// count: its results never move between CPUs.
TEST(ScanThenApplyTest, AppliesEachBlockOnTheThreadThatScannedIt) {
  struct Result {
    std::thread::id scanned_on;
  };
  for (int threads : {1, 2, 4}) {
    std::atomic<size_t> applied{0};
    WithThreads(threads, [&] {
      ScanThenApply<Result>(
          100000, 64,
          [&](size_t begin, size_t end, Result* results) {
            for (size_t i = begin; i < end; ++i) results[i - begin].scanned_on = std::this_thread::get_id();
          },
          [&](size_t, Result& r) {
            ASSERT_EQ(r.scanned_on, std::this_thread::get_id());
            ++applied;
          });
      return 0;
    });
    EXPECT_EQ(applied.load(), 100000u) << "threads=" << threads;
  }
}

// An exception thrown by a scan reaches the caller, and the threads
// waiting for that block's turn stop waiting.
TEST(ScanThenApplyTest, AScanThatThrowsStopsEveryThread) {
  for (int threads : {1, 2, 4}) {
    std::atomic<size_t> applied{0};
    EXPECT_THROW(WithThreads(threads,
                             [&] {
                               ScanThenApply<int>(
                                   100000, 64,
                                   [&](size_t begin, size_t end, int*) {
                                     if (begin <= 50000 && 50000 < end) throw std::runtime_error("scan failed");
                                   },
                                   [&](size_t i, int&) {
                                     ASSERT_LT(i, 50000u);
                                     ++applied;
                                   });
                               return 0;
                             }),
                 std::runtime_error)
        << "threads=" << threads;
    EXPECT_LE(applied.load(), 50000u);
  }
}

// A model of `layers` blocks, each with an attention family, an MLP owned
// by a native request and a norm. With `mistakes`, every seventh layer has
// errors in several phases (unknown axis, partial parameter, a tie with a
// conflicting placement, unknown parameter and forward input, an omission),
// so that diagnostics come from owners checked on different threads.
std::string ManyLayers(int layers, bool mistakes) {
  std::string params, modules, providers, layer_children;
  for (int l = 0; l < layers; ++l) {
    const std::string L = std::to_string(l);
    const bool bad = mistakes && l % 7 == 3;
    for (const char* p : {"q", "o", "up", "down", "n"}) absl::StrAppend(&params, "\"", p, L, "\": {\"shape\": [8, 8]}, ");
    absl::StrAppend(&modules,
                    "\"q", L, "\": {\"forward\": [\"input\"], \"params\": {\"weight\": \"q", L, "\"}}, ",
                    "\"o", L, "\": {\"forward\": [\"input\"], \"params\": {\"weight\": \"", bad ? "q" : "o", L, "\"}}, ",
                    "\"up", L, "\": {\"forward\": [\"input\"], \"params\": {\"weight\": \"up", L, "\"}}, ",
                    "\"down", L, "\": {\"forward\": [\"input\"], \"params\": {\"weight\": \"down", L, "\"}}, ",
                    "\"n", L, "\": {\"forward\": [\"x\"], \"params\": {\"weight\": \"n", L, "\"}}, ");
    absl::StrAppend(&modules, "\"attn", L, "\": {\"forward\": [\"h\"], \"children\": {\"q\": \"q", L, "\", \"o\": \"o", L,
                    "\"}, \"parallel\": {\"binding_kind\": \"tp\", \"axes\": [\"tp\"]}, \"family\": {\"parallel\": true, "
                    "\"sharding\": {\"params\": {\"q.weight\": {\"tp\": \"", bad ? "P" : "S(0)", "\"}, \"o.weight\": {\"",
                    bad ? "pp" : "tp", "\": \"S(1)\"}}, \"in_src\": {\"h\": {}}, \"in_dst\": {\"h\": {}}}}}, ");
    absl::StrAppend(&modules, "\"mlp", L, "\": {\"forward\": [\"x\"], \"children\": {\"up\": \"up", L, "\", \"down\": \"down",
                    L, "\"}}, ");
    absl::StrAppend(&modules, "\"layer", L, "\": {\"forward\": [\"x\"], \"children\": {\"attn\": \"attn", L,
                    "\", \"mlp\": \"mlp", L, "\", \"norm\": \"n", L, "\"}}, ");
    absl::StrAppend(&layer_children, l ? ", " : "", "\"", L, "\": \"layer", L, "\"");
    absl::StrAppend(&providers, l ? ", " : "", "\"layers.", L, ".norm\": ",
                    bad ? "{\"params\": {\"bias\": {}}, \"in_src\": {\"y\": {}}, \"in_dst\": {\"y\": {}}}"
                        : "{\"params\": {\"weight\": {\"dp\": \"R\"}}, \"in_src\": {\"x\": {}}, \"in_dst\": {\"x\": {}}}");
  }
  return absl::StrCat(R"J({"schema": "shardplan.v1", "mesh": {"dp": 2, "tp": 4}, "parameters": {)J", params,
                      R"J("e": {"shape": [8, 8]}}, "root": "model", "modules": {)J", modules,
                      R"J("layers": {"children": {)J", layer_children,
                      R"J(}}, "model": {"forward": ["ids"], "children": {"layers": "layers"}}}, )J",
                      R"J("providers": {"sharding": {)J", providers, R"J(}, "native": [{"match": ["layers.*.mlp"], )J",
                      R"J("parallel": {"binding_kind": "ep", "axes": ["dp"]}, "sharding": {"params": )J",
                      R"J({"up.weight": {"tp": "S(0)"}, "down.weight": {}}, "in_src": {"x": {}}, "in_dst": {"x": {}}}}]}})J");
}

// ManyLayers(layers, false) with a final plan for every owner. With
// `mistakes`, every seventh layer's entries break the plan checks: a norm
// that drops its weight, a port mismatch, an unknown axis, a conflicting
// placement for a shared parameter and an entry for no module.
std::string ManyLayersWithPlan(int layers, bool mistakes) {
  std::string doc = ManyLayers(layers, /*mistakes=*/false);
  std::string plan;
  for (int l = 0; l < layers; ++l) {
    const std::string L = std::to_string(l);
    const bool bad = mistakes && l % 7 == 3;
    absl::StrAppend(&plan, l ? ", " : "", "\"layers.", L, ".attn\": {\"params\": {\"q.weight\": {\"",
                    bad ? "zz" : "tp", "\": \"S(0)\"}, \"o.weight\": {\"tp\": \"S(1)\"}}, \"in_src\": {\"h\": {}}, ",
                    "\"in_dst\": {\"", bad ? "g" : "h", "\": {}}}, ");
    if (bad) {
      absl::StrAppend(&plan, "\"layers.", L, ".attn.q\": {\"params\": {\"weight\": {\"tp\": \"R\"}}}, ",
                      "\"layers.", L, ".nope\": {\"params\": {}}, ");
    }
    absl::StrAppend(&plan, "\"layers.", L, ".mlp\": {\"params\": {\"up.weight\": {\"tp\": \"S(0)\"}, ",
                    "\"down.weight\": {}}, \"in_src\": {\"x\": {}}, \"in_dst\": {\"x\": {}}}, ",
                    "\"layers.", L, ".norm\": {\"params\": {", bad ? "" : "\"weight\": {\"dp\": \"R\"}",
                    "}, \"in_src\": {\"x\": {}}, \"in_dst\": {\"x\": {}}}");
  }
  doc.pop_back();  // the document's closing brace
  return absl::StrCat(doc, ", \"plan\": {\"modules\": {", plan, "}}}");
}

std::string ResultWith(const std::string& doc, int threads) {
  CheckOptions options;
  options.threads = threads;
  absl::StatusOr<Result> result = Check(doc, options);
  EXPECT_TRUE(result.ok()) << result.status();
  return ResultToJson(*result);
}

TEST(ParallelTest, ManyOwnersWithErrorsGiveTheSameResultForEveryThreadCount) {
  const std::string doc = ManyLayers(1500, /*mistakes=*/true);
  const std::string serial = ResultWith(doc, 1);
  ASSERT_NE(serial.find("\"ok\":false"), std::string::npos);
  for (const char* code : {"unknown-axis", "partial-parameter", "shared-conflict", "unknown-parameter",
                           "unknown-forward-input", "omitted-parameters"}) {
    EXPECT_NE(serial.find(absl::StrCat("\"code\":\"", code, "\"")), std::string::npos) << code;
  }
  for (int threads : {2, 3, 8, 0}) EXPECT_EQ(ResultWith(doc, threads), serial) << "threads=" << threads;
}

TEST(ParallelTest, ValidLargeModelGivesTheSameResultForEveryThreadCount) {
  const std::string doc = ManyLayers(1500, /*mistakes=*/false);
  const std::string serial = ResultWith(doc, 1);
  ASSERT_NE(serial.find("\"ok\":true"), std::string::npos) << serial.substr(0, 400);
  for (int threads : {2, 4, 0}) EXPECT_EQ(ResultWith(doc, threads), serial) << "threads=" << threads;
}

// 1,500 layers of five owned parameters: more paths than one chunk of the
// claims' final pass. Every slot is counted and named once.
TEST(ParallelTest, OwnedSlotsOfEveryChunkAreCountedAndNamed) {
  for (int threads : {1, 2}) {
    CheckOptions options;
    options.threads = threads;
    absl::StatusOr<Result> r = Check(ManyLayers(1500, /*mistakes=*/false), options);
    ASSERT_TRUE(r.ok() && r->ok);
    EXPECT_EQ(CountOwnership(*r)->owned_names, 7500u) << "threads=" << threads;
    std::vector<std::string> names;
    for (const ModuleTree::ParamPath& slot : OwnedSlots(*r->outcome)) names.push_back(r->outcome->tree->FullName(slot));
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names.size(), 7500u);
    EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
    EXPECT_TRUE(std::binary_search(names.begin(), names.end(), "layers.1499.norm.weight"));
  }
}

TEST(ParallelTest, ModelProviderMistakesGiveTheSameResultForEveryThreadCount) {
  std::string doc = ManyLayers(1500, /*mistakes=*/false);
  // Every seventh layer: a provider for no module, and a norm provider with
  // an output its out_names lack.
  for (int l = 3; l < 1500; l += 7) {
    const std::string L = std::to_string(l);
    const std::string norm = absl::StrCat("\"layers.", L, ".norm\": {\"params\": {\"weight\": {\"dp\": \"R\"}}, ",
                                          "\"in_src\": {\"x\": {}}, \"in_dst\": {\"x\": {}}");
    const size_t at = doc.find(norm);
    ASSERT_NE(at, std::string::npos) << norm;
    doc.replace(at, norm.size(),
                absl::StrCat("\"layers.", L, ".nope\": {\"params\": {}}, ", norm,
                             ", \"out_names\": [\"y\"], \"out_src\": {\"z\": {}}"));
  }
  const std::string serial = ResultWith(doc, 1);
  for (const char* code : {"unknown-module", "unknown-output"}) {
    EXPECT_NE(serial.find(absl::StrCat("\"code\":\"", code, "\"")), std::string::npos) << code;
  }
  for (int threads : {2, 3, 8, 0}) EXPECT_EQ(ResultWith(doc, threads), serial) << "threads=" << threads;
}

// One parameter shared by 3,000 owners (more than a chunk of claims), each
// through two local names: the first claim owns it, later ones with its
// placement are dropped and the others conflict, in owner order (owner 1's
// second name disagrees with its first, which agreed with the owner).
TEST(ParallelTest, ClaimsOfOneSharedParameterFollowOwnerOrderForEveryThreadCount) {
  std::string modules, children, providers;
  for (int i = 0; i < 3000; ++i) {
    absl::StrAppend(&modules, "\"l", i, "\": {\"forward\": [\"x\"], \"params\": {\"weight\": \"e\", \"tied\": \"e\"}}, ");
    absl::StrAppend(&children, i ? ", " : "", "\"l", i, "\": \"l", i, "\"");
    const char* second = i == 1 ? "R" : "S(0)";  // owner 1 disagrees with itself
    absl::StrAppend(&providers, i ? ", " : "", "\"l", i, "\": {\"params\": {\"weight\": {\"tp\": \"",
                    i % 3 == 2 ? "R" : "S(0)", "\"}, \"tied\": {\"tp\": \"", second,
                    "\"}}, \"in_src\": {\"x\": {}}, \"in_dst\": {\"x\": {}}}");
  }
  const std::string doc = absl::StrCat(R"J({"schema": "shardplan.v1", "mesh": {"tp": 2}, "parameters": {"e": {}},
    "root": "m", "modules": {)J", modules, R"J("m": {"children": {)J", children, R"J(}}},
    "providers": {"sharding": {)J", providers, "}}}");
  absl::StatusOr<Result> r = Check(doc, {});
  ASSERT_TRUE(r.ok());
  std::vector<std::string> conflicts;
  for (const Diagnostic& d : r->diagnostics) {
    ASSERT_EQ(d.code, "shared-conflict") << d.message;
    conflicts.push_back(*d.parameter);
  }
  std::vector<std::string> want = {"l1.tied"};
  for (int i = 2; i < 3000; i += 3) want.push_back(absl::StrCat("l", i, ".weight"));
  EXPECT_EQ(conflicts, want);
  const std::string serial = ResultWith(doc, 1);
  for (int threads : {2, 3, 8, 0}) EXPECT_EQ(ResultWith(doc, threads), serial) << "threads=" << threads;
}

// 3,000 owners checked in chunks on several threads: the unknown axes of
// every seventh owner's layout are reported in owner order, whichever
// thread checked each chunk.
TEST(ParallelTest, OwnerChecksFollowOwnerOrderForEveryThreadCount) {
  std::string params, modules, children, providers;
  for (int i = 0; i < 3000; ++i) {
    absl::StrAppend(&params, "\"w", i, "\": {}, ");
    absl::StrAppend(&modules, "\"l", i, "\": {\"forward\": [\"x\"], \"params\": {\"weight\": \"w", i, "\"}}, ");
    absl::StrAppend(&children, i ? ", " : "", "\"l", i, "\": \"l", i, "\"");
    absl::StrAppend(&providers, i ? ", " : "", "\"l", i, "\": {\"params\": {\"weight\": {\"", i % 7 == 3 ? "zz" : "tp",
                    "\": \"S(0)\"}}, \"in_src\": {\"x\": {}}, \"in_dst\": {\"x\": {}}}");
  }
  params.resize(params.size() - 2);
  const std::string doc = absl::StrCat(R"J({"schema": "shardplan.v1", "mesh": {"tp": 2}, "parameters": {)J", params,
                                       R"J(}, "root": "m", "modules": {)J", modules, R"J("m": {"children": {)J",
                                       children, R"J(}}}, "providers": {"sharding": {)J", providers, "}}}");
  std::vector<std::string> want;
  for (int i = 3; i < 3000; i += 7) want.push_back(absl::StrCat("l", i));
  for (int threads : {1, 2, 3, 8}) {
    CheckOptions options;
    options.threads = threads;
    absl::StatusOr<Result> r = Check(doc, options);
    ASSERT_TRUE(r.ok()) << r.status();
    std::vector<std::string> fqns;
    for (const Diagnostic& d : r->diagnostics) {
      ASSERT_EQ(d.code, "unknown-axis") << d.message;
      fqns.push_back(*d.fqn);
    }
    EXPECT_EQ(fqns, want) << "threads=" << threads;
  }
}

// 3,000 layers, each an owner with a communicating inner owner: inside an
// outer "tp" or "mesh" owner the inner "tp" one overlaps, inside "none" it
// does not. Overlaps come in the inner owners' entry order (every other
// layer lists its inner provider first), for every thread count.
TEST(ParallelTest, OverlappingCommunicationFollowsEntryOrderForEveryThreadCount) {
  constexpr int kLayers = 3000;
  const char* const kinds[] = {"tp", "mesh", "none"};
  std::string params, modules, children, providers;
  std::vector<std::string> want;
  for (int i = 0; i < kLayers; ++i) {
    const std::string I = std::to_string(i);
    absl::StrAppend(&params, i ? ", " : "", "\"p", I, "\": {\"shape\": [4, 4]}");
    absl::StrAppend(&modules, "\"in", I, R"J(": {"forward": ["x"], "params": {"w": "p)J", I,
                    R"J("}, "parallel": {"binding_kind": "tp", "axes": ["tp"]}}, )J", "\"blk", I,
                    R"J(": {"forward": ["x"], "children": {"inner": "in)J", I, R"J("}, "parallel": {"binding_kind": ")J",
                    kinds[i % 3], R"J(", "axes": ["tp"]}}, )J");
    absl::StrAppend(&children, i ? ", " : "", "\"l", I, "\": \"blk", I, "\"");
    const std::string inner = absl::StrCat("\"l", I, R"J(.inner": {"params": {"w": {"tp": "S(0)"}}, )J",
                                           R"J("in_src": {"x": {}}, "in_dst": {"x": {}}})J");
    const std::string outer = absl::StrCat("\"l", I, R"J(": {"params": {}, "in_src": {"x": {}}, "in_dst": {"x": {}}})J");
    absl::StrAppend(&providers, i ? ", " : "", i % 2 ? inner + ", " + outer : outer + ", " + inner);
    if (i % 3 != 2) want.push_back(absl::StrCat("l", I, ".inner"));
  }
  const std::string doc = absl::StrCat(R"J({"schema": "shardplan.v1", "mesh": {"tp": 2}, "parameters": {)J", params,
                                       R"J(}, "root": "m", "modules": {)J", modules, R"J("m": {"children": {)J",
                                       children, R"J(}}}, "providers": {"sharding": {)J", providers, "}}}");
  absl::StatusOr<Result> r = Check(doc, {});
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<std::string> overlaps;
  for (const Diagnostic& d : r->diagnostics) {
    ASSERT_EQ(d.code, "overlapping-communication") << d.message;
    overlaps.push_back(*d.fqn);
  }
  EXPECT_EQ(overlaps, want);
  const std::string serial = ResultWith(doc, 1);
  for (int threads : {2, 3, 8, 0}) EXPECT_EQ(ResultWith(doc, threads), serial) << "threads=" << threads;
}

TEST(ParallelTest, PlanChecksGiveTheSameResultForEveryThreadCount) {
  const std::string valid = ManyLayersWithPlan(1500, /*mistakes=*/false);
  ASSERT_NE(ResultWith(valid, 1).find("\"ok\":true"), std::string::npos) << ResultWith(valid, 1).substr(0, 600);
  const std::string doc = ManyLayersWithPlan(1500, /*mistakes=*/true);
  const std::string serial = ResultWith(doc, 1);
  for (const char* code : {"override-removed-ownership", "ports-mismatch", "unknown-axis",
                           "override-shared-conflict", "unknown-module"}) {
    EXPECT_NE(serial.find(absl::StrCat("\"code\":\"", code, "\"")), std::string::npos) << code;
  }
  for (int threads : {2, 3, 8, 0}) EXPECT_EQ(ResultWith(doc, threads), serial) << "threads=" << threads;
}

TEST(ParallelTest, EveryTestDocumentGivesTheSameResultForEveryThreadCount) {
  size_t documents = 0;
  for (const char* dir : {"tests/conformance/cases", "tests/golden/cases"}) {
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() != ".json") continue;
      std::ifstream in(entry.path(), std::ios::binary);
      std::ostringstream text;
      text << in.rdbuf();
      const std::string serial = ResultWith(text.str(), 1);
      EXPECT_EQ(ResultWith(text.str(), 2), serial) << entry.path();
      EXPECT_EQ(ResultWith(text.str(), 4), serial) << entry.path();
      ++documents;
    }
  }
  EXPECT_GE(documents, 200u);
}

TEST(ParallelTest, NegativeThreadCountIsMisuse) {
  CheckOptions options;
  options.threads = -1;
  EXPECT_EQ(Check("{}", options).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace shardplan
