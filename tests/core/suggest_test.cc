#include "core/text/suggest.h"

#include <string_view>

#include "gtest/gtest.h"

namespace shardplan {
namespace {

TEST(SuggestTest, EditDistanceCountsSwapsOfNeighboursAsOne) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("abc", ""), 3u);
  EXPECT_EQ(EditDistance("", "ab"), 2u);
  EXPECT_EQ(EditDistance("json", "jsno"), 1u);   // swap
  EXPECT_EQ(EditDistance("mlp", "mlpp"), 1u);    // insertion
  EXPECT_EQ(EditDistance("weight", "wieght"), 1u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("ca", "abc"), 3u);  // optimal string alignment: no edit after a swap
  EXPECT_EQ(EditDistance("fsdp", "dp"), 2u);
}

TEST(SuggestTest, NearestNameIsWithinAThirdOfTheWordAndFirstOnTies) {
  NearestName near("mlpp");
  for (std::string_view c : {"self_attn", "mlp", "mlq"}) near.Consider(c);
  EXPECT_EQ(near.best(), "mlp");

  NearestName far("fsdp");  // 2 edits from "dp", one allowed for 4 letters
  far.Consider("dp");
  far.Consider("tp");
  EXPECT_EQ(far.best(), std::nullopt);

  NearestName tie("tq");  // 1 edit from both: the first wins
  tie.Consider("tp");
  tie.Consider("dq");
  EXPECT_EQ(tie.best(), "tp");

  NearestName nearer("embed_tokenz");  // 12 letters: up to 3 edits; the nearest wins
  nearer.Consider("embed_tok");
  nearer.Consider("embed_tokens");
  EXPECT_EQ(nearer.best(), "embed_tokens");

  NearestName none("x");
  EXPECT_EQ(none.best(), std::nullopt);
}

}  // namespace
}  // namespace shardplan
