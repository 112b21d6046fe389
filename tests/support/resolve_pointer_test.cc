// The oracle of the pointer checks must itself refuse what names nothing.
#include "tests/support/resolve_pointer.h"

#include <string>

#include "gtest/gtest.h"
#include "rapidjson/document.h"

namespace shardplan {
namespace {

TEST(ResolvePointerTest, ResolvesRfc6901PointersAndRefusesThoseThatNameNothing) {
  rapidjson::Document dom;
  dom.Parse(R"({"a/b": {"m~n": [10, 20]}, "": {"x": 1}})");
  ASSERT_FALSE(dom.HasParseError());
  EXPECT_EQ(ResolvePointer(dom, ""), &dom);
  const rapidjson::Value* twenty = ResolvePointer(dom, "/a~1b/m~0n/1");
  ASSERT_NE(twenty, nullptr);
  EXPECT_EQ(twenty->GetInt(), 20);
  EXPECT_NE(ResolvePointer(dom, "//x"), nullptr);
  EXPECT_EQ(ResolvePointer(dom, "a~1b"), nullptr);         // no leading '/'
  EXPECT_EQ(ResolvePointer(dom, "/a/b"), nullptr);         // '/' in a key must be "~1"
  EXPECT_EQ(ResolvePointer(dom, "/a~1b/m~0n/2"), nullptr);  // past the end
  EXPECT_EQ(ResolvePointer(dom, "/a~1b/m~0n/01"), nullptr); // leading zero
  EXPECT_EQ(ResolvePointer(dom, "/a~1b/m~2n"), nullptr);    // bad escape
  EXPECT_EQ(ResolvePointer(dom, "//x/y"), nullptr);         // into a number
}

TEST(ResolvePointerTest, NamesHoldingNulResolve) {
  rapidjson::Document dom;
  dom.Parse(R"({"a\u0000b": 1, "a": 2})");
  ASSERT_FALSE(dom.HasParseError());
  const rapidjson::Value* one = ResolvePointer(dom, std::string("/a\0b", 4));
  ASSERT_NE(one, nullptr);
  EXPECT_EQ(one->GetInt(), 1);
  EXPECT_EQ(ResolvePointer(dom, std::string("/a\0", 3)), nullptr);
}

}  // namespace
}  // namespace shardplan
