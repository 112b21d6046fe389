#include "core/model/name_set.h"

#include <vector>

#include "gtest/gtest.h"

namespace shardplan {
namespace {

TEST(NameSetTest, SmallAndHashedSetsAgree) {
  NameSet set;
  for (NameId n = 0; n < 100; n += 3) EXPECT_TRUE(set.Insert(n)) << n;  // past kSmall: hashed
  for (NameId n = 0; n < 100; ++n) EXPECT_EQ(set.Contains(n), n % 3 == 0) << n;
  EXPECT_FALSE(set.Insert(99));
  EXPECT_EQ(set.size(), 34u);
}

// NameBits grows by words as ids come: ids at word edges, far apart, and
// repeated, in any order.
TEST(NameSetTest, NameBitsFindsRepeatsAtAnyId) {
  NameBits bits;
  const std::vector<NameId> ids = {5, 63, 64, 0, 127, 128, 1000000, 65, 999999};
  for (NameId n : ids) EXPECT_TRUE(bits.Insert(n)) << n;
  for (NameId n : ids) EXPECT_FALSE(bits.Insert(n)) << n;
  for (NameId n : {1u, 62u, 66u, 126u, 129u, 1000001u}) EXPECT_TRUE(bits.Insert(n)) << n;
}

}  // namespace
}  // namespace shardplan
