#include "core/text/pyrepr.h"

#include "gtest/gtest.h"

namespace shardplan {
namespace {

TEST(PyReprTest, PlainNamesUseSingleQuotes) { EXPECT_EQ(PyRepr("layers.0.mlp"), "'layers.0.mlp'"); }

TEST(PyReprTest, EmptyStringIsTwoQuotes) { EXPECT_EQ(PyRepr(""), "''"); }

TEST(PyReprTest, SingleQuoteInsideSwitchesToDoubleQuotes) { EXPECT_EQ(PyRepr("it's"), "\"it's\""); }

TEST(PyReprTest, BothQuotesKeepSingleAndEscapeIt) { EXPECT_EQ(PyRepr("a'b\"c"), "'a\\'b\"c'"); }

TEST(PyReprTest, ControlCharactersAreEscaped) {
  EXPECT_EQ(PyRepr("a\tb\nc\rd"), "'a\\tb\\nc\\rd'");
  EXPECT_EQ(PyRepr(std::string("x\x01y\x7f", 4)), "'x\\x01y\\x7f'");
  EXPECT_EQ(PyRepr("back\\slash"), "'back\\\\slash'");
}

TEST(PyReprTest, PrintableUnicodeIsKeptNonPrintableEscaped) {
  EXPECT_EQ(PyRepr("caf\xc3\xa9"), "'caf\xc3\xa9'");          // é
  EXPECT_EQ(PyRepr("a\xc2\xa0" "b"), "'a\\xa0b'");            // NO-BREAK SPACE
  EXPECT_EQ(PyRepr("\xe2\x80\x8b"), "'\\u200b'");             // ZERO WIDTH SPACE
  EXPECT_EQ(PyRepr("\xf3\xb0\x80\x80"), "'\\U000f0000'");     // private use plane
  EXPECT_EQ(PyRepr("a\xcd\xb8" "b"), "'a\\u0378b'");        // unassigned (Cn)
  EXPECT_EQ(PyRepr("\xd8\x9c"), "'\\u061c'");               // ARABIC LETTER MARK (Cf)
  EXPECT_EQ(PyRepr("\xf3\xa0\x80\x81"), "'\\U000e0001'");  // LANGUAGE TAG (Cf)
  EXPECT_EQ(PyRepr("\xe4\xb8\xad"), "'\xe4\xb8\xad'");           // CJK is printable
}

TEST(PyReprTest, ListsPrintLikePython) {
  EXPECT_EQ(PyReprList({}), "[]");
  EXPECT_EQ(PyReprList({"weight", "bias"}), "['weight', 'bias']");
}

}  // namespace
}  // namespace shardplan
