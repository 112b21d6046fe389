#include "core/model/interner.h"

#include <string>
#include <vector>

#include "core/text/bytes.h"
#include "gtest/gtest.h"

namespace shardplan {
namespace {

TEST(InternerTest, SameNameSameIdDenseInFirstSeenOrder) {
  Interner names;
  EXPECT_EQ(names.Intern("tp"), 0u);
  EXPECT_EQ(names.Intern("dp"), 1u);
  EXPECT_EQ(names.Intern("tp"), 0u);
  EXPECT_EQ(names.Intern(""), 2u);
  EXPECT_EQ(names.Intern(""), 2u);
  EXPECT_EQ(names.size(), 3u);
  EXPECT_EQ(names.View(1), "dp");
  EXPECT_EQ(names.View(2), "");
}

// A name hashed beforehand (Interner::Hashed, as the parser's reading stage
// does) is the same name: the same id whichever way it is interned first,
// and prefetching changes nothing.
TEST(InternerTest, HashedNamesInternAsTheirText) {
  Interner names;
  std::vector<HashedName> hashed;
  for (std::string_view text : {"a", "layers.0.mlp", "", "layers.0.mlp.experts.17.w1", "a"}) {
    hashed.push_back(Interner::Hashed(text));
  }
  names.Prefetch(hashed);
  EXPECT_EQ(names.size(), 0u);
  EXPECT_EQ(names.Intern(hashed[0]), 0u);
  EXPECT_EQ(names.Intern("layers.0.mlp"), 1u);
  EXPECT_EQ(names.Intern(hashed[1]), 1u);
  EXPECT_EQ(names.Intern(hashed[2]), 2u);
  EXPECT_EQ(names.Intern(""), 2u);
  EXPECT_EQ(names.Intern(hashed[3]), 3u);
  EXPECT_EQ(names.Intern(hashed[4]), 0u);
  EXPECT_EQ(names.Find("layers.0.mlp.experts.17.w1"), 3u);
  EXPECT_EQ(names.size(), 4u);
}

// SameText compares with fixed-size loads that overlap for sizes that are
// not a multiple of 8: every size and every differing position must count.
TEST(InternerTest, SameTextSeesEveryByteOfEverySize) {
  for (size_t n = 0; n <= 40; ++n) {
    std::string a(n, 'x');
    for (size_t i = 0; i < n; ++i) a[i] = static_cast<char>('a' + i % 26);
    std::string b = a;
    EXPECT_TRUE(SameText(a, b)) << n;
    for (size_t i = 0; i < n; ++i) {
      b = a;
      b[i] ^= 0x01;
      EXPECT_FALSE(SameText(a, b)) << n << " " << i;
    }
    EXPECT_FALSE(SameText(a, a + "y")) << n;
    if (n > 0) {
      EXPECT_FALSE(SameText(a, a.substr(1))) << n;
    }
  }
  // Views into a larger buffer: the loads stay inside each view.
  const std::string text = "blocks.12.lin0 blocks.12.lin0";
  EXPECT_TRUE(SameText(std::string_view(text).substr(0, 14), std::string_view(text).substr(15, 14)));
  EXPECT_FALSE(SameText(std::string_view(text).substr(0, 14), std::string_view(text).substr(14, 14)));
}

TEST(InternerTest, FindDoesNotIntern) {
  Interner names;
  EXPECT_EQ(names.Find("x"), kNoName);  // before any slot exists
  names.Intern("x");
  EXPECT_EQ(names.Find("x"), 0u);
  EXPECT_EQ(names.Find("y"), kNoName);
  EXPECT_EQ(names.size(), 1u);
}

TEST(InternerTest, NamesThatShareLongPrefixesOrHoldNulBytesStayDistinct) {
  Interner names;
  const std::string a = "layers.0.mlp.experts.12.gate_proj.weight";
  std::string b = a;
  b.back() = 'u';
  const std::string nul1("a\0b", 3), nul2("a\0c", 3);
  const NameId ia = names.Intern(a), ib = names.Intern(b), n1 = names.Intern(nul1), n2 = names.Intern(nul2);
  EXPECT_NE(ia, ib);
  EXPECT_NE(n1, n2);
  EXPECT_EQ(names.Find(nul2), n2);
  EXPECT_EQ(names.View(n1), nul1);
}

// Growth from empty and from a reservation both keep every id and view.
TEST(InternerTest, ManyNamesSurviveGrowth) {
  for (size_t reserve : {size_t{0}, size_t{1000}, size_t{300000}}) {
    Interner names;
    names.Reserve(reserve);
    std::vector<std::string> all;
    for (int i = 0; i < 200000; ++i) all.push_back("m" + std::to_string(i * 7919));
    for (size_t i = 0; i < all.size(); ++i) ASSERT_EQ(names.Intern(all[i]), i);
    for (size_t i = 0; i < all.size(); ++i) {
      ASSERT_EQ(names.Find(all[i]), i);
      ASSERT_EQ(names.Intern(all[i]), i);
      ASSERT_EQ(names.View(static_cast<NameId>(i)), all[i]);
    }
    EXPECT_EQ(names.Find("m1"), kNoName);
    EXPECT_EQ(names.size(), all.size());
  }
}

// The names' bytes fill blocks that grow up to 8 MiB; a name longer than the
// next block gets a block of its own size. Every view stays valid.
TEST(InternerTest, LongNamesBetweenShortOnesKeepTheirBytes) {
  Interner names;
  std::vector<std::string> all;
  for (int i = 0; i < 120; ++i) {
    // 300 KiB, then 3 MiB, and 9 MiB (above the largest block), with
    // distinct bytes, between runs of short names.
    const size_t size = i % 40 == 39 ? (9u << 20) : i % 10 == 9 ? (3u << 20) : i % 5 == 4 ? (300u << 10) : 0;
    all.push_back(size ? std::string(size, static_cast<char>('a' + i % 26)) + std::to_string(i) : "s" + std::to_string(i));
  }
  for (size_t i = 0; i < all.size(); ++i) ASSERT_EQ(names.Intern(all[i]), i);
  for (size_t i = 0; i < all.size(); ++i) {
    ASSERT_EQ(names.View(static_cast<NameId>(i)), all[i]) << i;
    ASSERT_EQ(names.Find(all[i]), i);
  }
}

TEST(InternerTest, CloneKeepsIdsAndIsIndependent) {
  Interner names;
  names.Intern("a");
  names.Intern("b");
  Interner copy = names.Clone();
  EXPECT_EQ(copy.Find("b"), 1u);
  EXPECT_EQ(copy.Intern("c"), 2u);
  EXPECT_EQ(names.Find("c"), kNoName);
  EXPECT_EQ(names.Intern("d"), 2u);
}

// The table hashes ids by the names they stand for: a moved interner still
// finds them, and takes new ones.
TEST(InternerTest, AMovedInternerStillFindsItsNames) {
  Interner names;
  for (int i = 0; i < 1000; ++i) names.Intern("n" + std::to_string(i));
  Interner moved = std::move(names);
  EXPECT_EQ(moved.Find("n500"), 500u);
  EXPECT_EQ(moved.Intern("new"), 1000u);
  Interner assigned;
  assigned.Intern("x");
  assigned = std::move(moved);
  EXPECT_EQ(assigned.Find("n999"), 999u);
  EXPECT_EQ(assigned.Find("new"), 1000u);
  EXPECT_EQ(assigned.Find("x"), kNoName);
  EXPECT_EQ(assigned.Intern("y"), 1001u);
}

}  // namespace
}  // namespace shardplan
