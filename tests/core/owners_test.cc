#include "core/ownership/owners.h"

#include <memory>
#include <utility>
#include <vector>

#include "core/exec/parallel.h"
#include "gtest/gtest.h"

namespace shardplan {
namespace {

// A family replacing a model provider removes its entry: once compacted,
// the owners keep insertion order without it, Find still finds each, and
// Take moves them out in that order.
TEST(OwnersTest, TakeMovesTheLiveEntriesOutInInsertionOrder) {
  Owners owners(4);
  owners.Reserve(10, 0);
  owners.Reserve(11, 1);
  owners.Reserve(12, 2);
  owners.AddReserved([](size_t, Owner&) {});
  const absl::Span<const Owner> before = std::as_const(owners).InOrder();
  ASSERT_EQ(before.size(), 3u);
  EXPECT_EQ(before[1].path, 11u);
  owners.Remove(1);
  EXPECT_EQ(owners.size(), 2u);
  owners.Reserve(13, 1);
  owners.AddReserved([](size_t, Owner& o) { o.declared = 7; });
  EXPECT_EQ(owners.size(), 3u);
  owners.Compact();
  std::vector<PathId> live;
  for (const Owner& o : owners.InOrder()) live.push_back(o.path);
  EXPECT_EQ(live, (std::vector<PathId>{10, 12, 13}));
  EXPECT_EQ(owners.Find(0)->path, 10u);
  EXPECT_EQ(owners.Find(2)->path, 12u);
  EXPECT_EQ(owners.Find(1)->path, 13u);
  EXPECT_EQ(owners.Find(1)->declared, 7u);

  const std::vector<Owner> taken = owners.Take();
  ASSERT_EQ(taken.size(), 3u);
  EXPECT_EQ(taken[0].path, 10u);
  EXPECT_EQ(taken[1].path, 12u);
  EXPECT_EQ(taken[2].path, 13u);
  EXPECT_EQ(taken[2].declared, 7u);
  EXPECT_TRUE(owners.InOrder().empty());
  EXPECT_EQ(owners.size(), 0u);
  EXPECT_FALSE(owners.Has(0));
  EXPECT_EQ(owners.Find(1), nullptr);
}

// Reserving places an entry in insertion order at once (Has); AddReserved
// then writes every reserved entry, k-th reserved k-th, starting out
// unclaimed, and Find returns it for its module.
TEST(OwnersTest, ReservedEntriesAreWrittenInReservationOrder) {
  Owners owners(4);
  owners.Reserve(5, 2);
  owners.Reserve(6, 0);
  EXPECT_TRUE(owners.Has(2));
  EXPECT_TRUE(owners.Has(0));
  EXPECT_FALSE(owners.Has(1));
  owners.AddReserved([](size_t k, Owner& o) {
    EXPECT_EQ(o.declared, Owner::kNotClaimed);
    o.declared = static_cast<uint32_t>(k);
  });
  ASSERT_NE(owners.Find(2), nullptr);
  EXPECT_EQ(owners.Find(2)->path, 5u);
  EXPECT_EQ(owners.Find(2)->declared, 0u);
  EXPECT_EQ(owners.Find(0)->path, 6u);
  EXPECT_EQ(owners.Find(0)->declared, 1u);
  EXPECT_EQ(owners.size(), 2u);
  // A second batch goes after the first.
  owners.Reserve(7, 3);
  owners.AddReserved([](size_t k, Owner&) { EXPECT_EQ(k, 0u); });
  std::vector<PathId> paths;
  for (const Owner& o : std::as_const(owners).InOrder()) paths.push_back(o.path);
  EXPECT_EQ(paths, (std::vector<PathId>{5, 6, 7}));
}

// TryReserveAll reserves every hit in order when no module repeats, has an
// entry or is refused, and otherwise leaves the owners as they were: the
// earlier entries keep their indexes and the next reservation goes on as if
// it had not been called. Hits span several chunks (more than the grain),
// so that with several threads a repeated module's hits race.
TEST(OwnersTest, TryReserveAllReservesEverythingOrNothingForEveryThreadCount) {
  static constexpr size_t kModules = 5000;
  for (int threads : {1, 2, 4}) {
    auto fresh = [] {
      auto owners = std::make_unique<Owners>(kModules);
      owners->Reserve(100, 1);  // module 1 has an entry, at index 0
      owners->AddReserved([](size_t, Owner&) {});
      return owners;
    };
    // Hits at paths 1000 + m of modules 2 .. kModules - 1.
    std::vector<PathId> all;
    for (ModuleId m = 2; m < kModules; ++m) all.push_back(1000 + m);
    std::vector<PathId> hits = all;
    auto path_at = [&](size_t k) { return hits[k]; };
    auto module_of = [](PathId p) { return static_cast<ModuleId>(p - 1000); };
    auto refuse_none = [](ModuleId) { return false; };

    auto owners = fresh();
    EXPECT_TRUE(WithThreads(threads, [&] { return owners->TryReserveAll(hits.size(), path_at, module_of, refuse_none); }))
        << "threads=" << threads;
    owners->AddReserved([](size_t k, Owner& o) { o.declared = static_cast<uint32_t>(k); });
    ASSERT_EQ(owners->size(), kModules - 1);
    for (ModuleId m = 2; m < kModules; ++m) {
      ASSERT_NE(owners->Find(m), nullptr) << m;
      EXPECT_EQ(owners->Find(m)->path, 1000 + m);
      EXPECT_EQ(owners->Find(m)->declared, m - 2);
    }

    auto refused = [&](std::vector<PathId> with, auto refuse, const char* why) {
      hits = std::move(with);
      auto o = fresh();
      EXPECT_FALSE(WithThreads(threads, [&] { return o->TryReserveAll(hits.size(), path_at, module_of, refuse); }))
          << why << ", threads=" << threads;
      EXPECT_EQ(o->size(), 1u) << why;
      EXPECT_EQ(o->Find(1)->path, 100u) << why;
      for (ModuleId m = 2; m < kModules; ++m) ASSERT_FALSE(o->Has(m)) << why << ": module " << m;
      o->Reserve(7, 3);
      o->AddReserved([](size_t, Owner&) {});
      std::vector<PathId> paths;
      for (const Owner& owner : std::as_const(*o).InOrder()) paths.push_back(owner.path);
      EXPECT_EQ(paths, (std::vector<PathId>{100, 7})) << why;
    };
    std::vector<PathId> repeated = all;
    repeated.push_back(1000 + 3);  // module 3 again, chunks after its first hit
    refused(repeated, refuse_none, "a module hit twice");
    std::vector<PathId> owned = all;
    owned.push_back(1000 + 1);  // module 1 has an entry
    refused(owned, refuse_none, "a module with an entry");
    refused(all, [](ModuleId m) { return m == kModules - 2; }, "a refused module");
  }
}

// Output normalization: a layout's own out_names win; without them, its
// output ports are named in out_src then out_dst order, each once; without
// output ports there are none.
TEST(OwnersTest, NormalizedOutNamesDeriveTheOutputPortsInOrder) {
  MapStore maps;
  auto ports = [&](std::vector<NameId> names) {
    PlacementMap map;
    for (NameId n : names) map.emplace_back().name = n;
    return maps.Intern(std::move(map));
  };
  LayoutBody body;
  auto normalized = [&] { return NormalizedOutNames(Layout{maps.Intern(body), {}}); };
  EXPECT_FALSE(normalized().has_value());
  body.out_src = ports({});
  EXPECT_FALSE(normalized().has_value());
  body.out_src = ports({7, 3});
  body.out_dst = ports({3, 9});
  EXPECT_EQ(normalized(), (SmallVector<NameId>{7, 3, 9}));
  body.out_src = MapRef();
  EXPECT_EQ(normalized(), (SmallVector<NameId>{3, 9}));
  body.out_names = SmallVector<NameId>{4};
  EXPECT_EQ(normalized(), (SmallVector<NameId>{4}));
}

}  // namespace
}  // namespace shardplan
