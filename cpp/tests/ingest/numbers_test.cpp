#include "ingest/numbers.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

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

// Every integer length up to the 18 digits read without an overflow check, the int64 edge,
// and the bytes next to '0' and '9' in ASCII (':' '/') after a run of digits.
TEST(MicrosTextToNs, DigitRunsOfEveryLengthAndTheInt64Edge) {
  const std::string digits = "9081726354453627";
  for (size_t n = 1; n <= digits.size(); ++n) {  // 16 digits: the most whose ns fit in int64
    const std::string whole = digits.substr(0, n);
    const int64_t expected = std::stoll(whole) * 1000 + 250;
    EXPECT_EQ(micros_text_to_ns(whole + ".25"), expected) << whole;
    EXPECT_EQ(micros_text_to_ns("-" + whole + ".25"), -expected) << whole;
  }
  EXPECT_EQ(micros_text_to_ns("9223372036854775.807"), INT64_MAX);  // 16 + 3 digits: the largest
  EXPECT_FALSE(micros_text_to_ns("9223372036854775.808"));
  EXPECT_FALSE(micros_text_to_ns("1234567:.5"));
  EXPECT_FALSE(micros_text_to_ns("12345678/"));
  EXPECT_FALSE(micros_text_to_ns("1234567812345678:"));
  EXPECT_EQ(micros_text_to_ns("000000000000012345.5"), 12345500);  // 18 digits, leading zeros
  EXPECT_EQ(micros_text_to_ns("00000000000000000012"), 12000);  // 20
}

// The point after each digit of a nine-digit run: an eight-byte block of the run holds the
// point at each of its bytes, and the digits before and after it are read one at a time.
TEST(MicrosTextToNs, APointAtEveryByteOfAnEightDigitBlock) {
  const std::string digits = "987654321";
  for (size_t p = 1; p < digits.size(); ++p) {
    const std::string fraction = digits.substr(p);
    const int64_t rounding = fraction.size() > 3 && fraction[3] >= '5' ? 1 : 0;
    const int64_t expected = std::stoll(digits.substr(0, p)) * 1000 + std::stoll((fraction + "00").substr(0, 3)) + rounding;
    EXPECT_EQ(micros_text_to_ns(digits.substr(0, p) + "." + fraction), expected) << p;
  }
  EXPECT_EQ(micros_text_to_ns("12345678.5 "), 12345678500);  // a block, then the point
  EXPECT_EQ(micros_text_to_ns("1234567890123456"), 1234567890123456000);  // two blocks
}

// Kineto's spelling, 1-15 digits, a point and 1-3 digits, is read in 8-digit blocks: every
// whole-part length (a shorter block below 8 digits, two blocks above), each fraction length,
// and a non-digit at each place of the whole part and of the fraction.
TEST(MicrosTextToNs, KinetoSpellingAtEveryLengthOfItsWholePart) {
  const std::string digits = "918273645546372";
  for (size_t n = 1; n <= digits.size(); ++n) {
    const std::string whole = digits.substr(0, n);
    EXPECT_EQ(micros_text_to_ns(whole + ".123"), std::stoll(whole) * 1000 + 123) << whole;
    EXPECT_EQ(micros_text_to_ns(whole + ".12"), std::stoll(whole) * 1000 + 120) << whole;
    EXPECT_EQ(micros_text_to_ns(whole + ".1"), std::stoll(whole) * 1000 + 100) << whole;
    for (size_t at = 0; at < n; ++at) {
      std::string bad = whole + ".123";
      bad[at] = ':';
      EXPECT_FALSE(micros_text_to_ns(bad)) << bad;
    }
  }
  EXPECT_FALSE(micros_text_to_ns("5136435918930./81"));
  EXPECT_FALSE(micros_text_to_ns("5136435918930.8:1"));
  EXPECT_FALSE(micros_text_to_ns("5136435918930.88:"));
  EXPECT_EQ(micros_text_to_ns("999999999999999.999"), 999999999999999999);  // 15 + 3 digits
  EXPECT_EQ(micros_text_to_ns("0000000000000.001"), 1);
  EXPECT_FALSE(micros_text_to_ns(".123"));
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
