#include "ingest/numbers.h"

#include <gtest/gtest.h>

namespace attnprof::ingest {
namespace {

TEST(MicrosTextToNs, KinetoThreeDecimalMicrosecondsAreExact) {
  EXPECT_EQ(micros_text_to_ns("1712195495505582.988"), 1712195495505582988);  // 19 digits: beyond a double
  EXPECT_EQ(micros_text_to_ns("5136433169502.610"), 5136433169502610);
  EXPECT_EQ(micros_text_to_ns("4.928"), 4928);
  EXPECT_EQ(micros_text_to_ns("84.8"), 84800);
  EXPECT_EQ(micros_text_to_ns("0"), 0);
}

TEST(MicrosTextToNs, IntegerEpochMicrosecondsAndTrailingSpace) {
  EXPECT_EQ(micros_text_to_ns("1661938466265032"), 1661938466265032000);
  EXPECT_EQ(micros_text_to_ns("12 \n"), 12000);
}

TEST(MicrosTextToNs, SubNanosecondDigitsRoundToNearest) {
  EXPECT_EQ(micros_text_to_ns("1.0004"), 1000);
  EXPECT_EQ(micros_text_to_ns("1.0005"), 1001);
}

TEST(MicrosTextToNs, NegativeAndExponentForms) {
  EXPECT_EQ(micros_text_to_ns("-3.5"), -3500);
  EXPECT_EQ(micros_text_to_ns("1.5e3"), 1500000);
}

TEST(MicrosTextToNs, OverflowAndGarbageAreRejected) {
  EXPECT_FALSE(micros_text_to_ns("99999999999999999999"));
  EXPECT_FALSE(micros_text_to_ns("1e400"));
  EXPECT_FALSE(micros_text_to_ns("abc"));
  EXPECT_FALSE(micros_text_to_ns(""));
  EXPECT_FALSE(micros_text_to_ns("1."));
  EXPECT_FALSE(micros_text_to_ns("-"));
}

}  // namespace
}  // namespace attnprof::ingest
