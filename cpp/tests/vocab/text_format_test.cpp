// The one escaper per target and the one formatter per quantity (text_format.h), at their
// edges. Every expected string is written out by hand; the arithmetic behind a unit boundary
// is in the comment beside it.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "attnprof/text_format.h"

namespace attnprof {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(HtmlEscape, EscapesMarkupAndBothQuotes) {
  EXPECT_EQ(html_escape("<a href=\"x\">'&'</a>"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(html_escape(""), "");
  EXPECT_EQ(html_escape("flash_fwd_kernel"), "flash_fwd_kernel");
}

TEST(HtmlEscape, ReplacesInvalidUtf8AndKeepsValidMultibyteText) {
  EXPECT_EQ(html_escape("ok \xe2\x82\xac"), "ok \xe2\x82\xac");                      // euro sign kept
  EXPECT_EQ(html_escape("\xed\xa0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");    // surrogate: 3 bytes, 3 U+FFFD
  EXPECT_EQ(html_escape("<\xe2\x82"), "&lt;\xEF\xBF\xBD\xEF\xBF\xBD");               // cut-off sequence
}

TEST(MarkdownEscape, PipesBackticksAndNewlinesCannotBreakATableRow) {
  EXPECT_EQ(markdown_escape("a|b"), "a\\|b");
  EXPECT_EQ(markdown_escape("`code`"), "\\`code\\`");
  EXPECT_EQ(markdown_escape("line one\nline two\r\n"), "line one line two  ");
  EXPECT_EQ(markdown_escape(""), "");
}

TEST(MarkdownEscape, ABackslashIsEscapedSoItCannotEscapeTheCellsPipe) {
  // Unescaped, "x\" followed by the cell's " |" would read as a literal pipe.
  EXPECT_EQ(markdown_escape("x\\"), "x\\\\");
  EXPECT_EQ(markdown_escape("\\|"), "\\\\\\|");
}

TEST(MarkdownEscape, EmphasisLinksAndTagsStayText) {
  EXPECT_EQ(markdown_escape("flash_fwd_kernel"), "flash\\_fwd\\_kernel");
  EXPECT_EQ(markdown_escape("*[x](y)*"), "\\*\\[x\\](y)\\*");
  EXPECT_EQ(markdown_escape("<script>&"), "&lt;script>&amp;");
}

TEST(MarkdownEscape, AGreaterThanSignIsAnEntityOnlyWhereItWouldOpenABlockQuote) {
  EXPECT_EQ(markdown_escape("before -> after"), "before -> after");
  EXPECT_EQ(markdown_escape("flash > efficient > math"), "flash > efficient > math");
  EXPECT_EQ(markdown_escape("> quoted"), "&gt; quoted");
  EXPECT_EQ(markdown_escape("  > quoted"), "  &gt; quoted");
  EXPECT_EQ(markdown_escape(">>"), "&gt;>");
}

TEST(MarkdownCode, FencesTextWithoutEscapingIt) {
  EXPECT_EQ(markdown_code("fixtures/h100_flash.json.gz"), "`fixtures/h100_flash.json.gz`");
  EXPECT_EQ(markdown_code("a`b"), "``a`b``");        // longest run 1: fence of 2
  EXPECT_EQ(markdown_code("x``y`"), "``` x``y` ```");  // longest run 2: fence of 3, padded (ends in `)
  EXPECT_EQ(markdown_code("two\nlines"), "`two lines`");
}

TEST(TerminalEscape, ControlCharactersAreShownNotObeyed) {
  EXPECT_EQ(terminal_escape("\x1b[31mred\x1b[0m"), "\\x1b[31mred\\x1b[0m");
  EXPECT_EQ(terminal_escape("bell\a cr\r bs\b del\x7f"), "bell\\x07 cr\\x0d bs\\x08 del\\x7f");
  EXPECT_EQ(terminal_escape(std::string_view("nul\0end", 7)), "nul\\x00end");
  EXPECT_EQ(terminal_escape("\xc2\x9b" "2J"), "\\u009b2J");  // C1 CSI, U+009B as UTF-8
}

TEST(TerminalEscape, NewlinesTabsAndPrintableUnicodeStay) {
  EXPECT_EQ(terminal_escape("a\tb\nc"), "a\tb\nc");
  EXPECT_EQ(terminal_escape("\xc2\xa0\xc3\xa9 \xe2\x82\xac"), "\xc2\xa0\xc3\xa9 \xe2\x82\xac");  // NBSP, e-acute, euro
}

TEST(BytesText, BytesBelowOneKibibyteAreWholeBytes) {
  EXPECT_EQ(bytes_text(0), "0 B");
  EXPECT_EQ(bytes_text(1), "1 B");
  EXPECT_EQ(bytes_text(1023), "1023 B");
}

TEST(BytesText, EachBinaryUnitStartsAt1024OfThePrevious) {
  EXPECT_EQ(bytes_text(1024), "1.0 KiB");
  EXPECT_EQ(bytes_text(1536), "1.5 KiB");                      // 1536 / 1024
  EXPECT_EQ(bytes_text(1048576), "1.0 MiB");                   // 1024^2
  EXPECT_EQ(bytes_text(5.5 * 1048576), "5.5 MiB");
  EXPECT_EQ(bytes_text(1073741824.0), "1.00 GiB");             // 1024^3
  EXPECT_EQ(bytes_text(141.0 * 1073741824), "141.00 GiB");
  EXPECT_EQ(bytes_text(1099511627776.0), "1.00 TiB");          // 1024^4
  EXPECT_EQ(bytes_text(2048.0 * 1099511627776), "2048.00 TiB");  // no unit above TiB
}

TEST(BytesText, AValueThatRoundsUpToTheNextUnitIsShownInIt) {
  EXPECT_EQ(bytes_text(1023.6), "1.0 KiB");           // rounds to 1024 B
  EXPECT_EQ(bytes_text(1048575), "1.0 MiB");          // 1023.999 KiB rounds to 1024.0 KiB
  EXPECT_EQ(bytes_text(1048576.0 * 1023.96), "1.00 GiB");  // 1023.96 MiB rounds to 1024.0 MiB
}

TEST(BytesText, DifferencesKeepTheirSignAndUnknownSizesSaySo) {
  EXPECT_EQ(bytes_text(-1024), "-1.0 KiB");
  EXPECT_EQ(bytes_text(-3.0 * 1073741824), "-3.00 GiB");
  EXPECT_EQ(bytes_text(kNaN), "unknown");
  EXPECT_EQ(bytes_text(kInf), "unknown");
  EXPECT_EQ(bytes_text(-kInf), "unknown");
}

TEST(TimeText, MicrosecondsMillisecondsSeconds) {
  EXPECT_EQ(time_text(0), "0.0 us");
  EXPECT_EQ(time_text(12.34), "12.3 us");
  EXPECT_EQ(time_text(999.9), "999.9 us");
  EXPECT_EQ(time_text(1000), "1.00 ms");
  EXPECT_EQ(time_text(1500), "1.50 ms");
  EXPECT_EQ(time_text(2e6), "2.00 s");
}

TEST(TimeText, SubMicrosecondTimesAreNanosecondsNotZero) {
  EXPECT_EQ(time_text(0.25), "250 ns");
  EXPECT_EQ(time_text(0.001), "1 ns");
  EXPECT_EQ(time_text(0.9996), "1.0 us");  // 999.6 ns rounds to 1000 ns
}

TEST(TimeText, RoundingUpCarriesIntoTheNextUnit) {
  EXPECT_EQ(time_text(999.96), "1.00 ms");     // 999.96 us rounds to 1000.0 us
  EXPECT_EQ(time_text(999996), "1.00 s");      // 999.996 ms rounds to 1000.00 ms
}

TEST(TimeText, AnHourOrMoreIsHours) {
  EXPECT_EQ(time_text(3599e6), "3599.00 s");
  EXPECT_EQ(time_text(3600e6), "1.00 h");
  EXPECT_EQ(time_text(5400e6), "1.50 h");   // 5400 s / 3600
  EXPECT_EQ(time_text(90000e6), "25.00 h");
}

TEST(TimeText, NegativeDifferencesAndUnknownTimes) {
  EXPECT_EQ(time_text(-1500), "-1.50 ms");
  EXPECT_EQ(time_text(-0.5), "-500 ns");
  EXPECT_EQ(time_text(kNaN), "unknown");
  EXPECT_EQ(time_text(kInf), "unknown");
}

TEST(FlopsText, TflopsWithSmallerUnitsBelowOne) {
  EXPECT_EQ(flops_text(0), "0.0 TFLOP/s");
  EXPECT_EQ(flops_text(312.46), "312.5 TFLOP/s");
  EXPECT_EQ(flops_text(1.0), "1.0 TFLOP/s");
  EXPECT_EQ(flops_text(4500), "4500.0 TFLOP/s");  // no unit above TFLOP/s, as the spec table
  EXPECT_EQ(flops_text(0.0523), "52.3 GFLOP/s");  // 0.0523 TFLOP/s * 1000
  EXPECT_EQ(flops_text(0.000004), "4.0 MFLOP/s"); // 4e-6 TFLOP/s * 1e6
  EXPECT_EQ(flops_text(0.99996), "1.0 TFLOP/s");  // 999.96 GFLOP/s rounds to 1000.0
}

TEST(FlopCountText, WholeFlopsBelowAMillionThenDecimalPrefixes) {
  EXPECT_EQ(flop_count_text(0), "0 FLOP");
  EXPECT_EQ(flop_count_text(999999), "999999 FLOP");
  EXPECT_EQ(flop_count_text(999999.6), "1.00 MFLOP");   // rounds to 1000000 FLOP
  EXPECT_EQ(flop_count_text(5.23e10), "52.30 GFLOP");   // 5.23e10 / 1e9
  EXPECT_EQ(flop_count_text(999.996e9), "1.00 TFLOP");  // 999.996 GFLOP rounds to 1000.00
  EXPECT_EQ(flop_count_text(1.25e15), "1.25 PFLOP");
  EXPECT_EQ(flop_count_text(2e18), "2000.00 PFLOP");    // no unit above PFLOP
  EXPECT_EQ(flop_count_text(kNaN), "unknown");
}

TEST(FlopsText, UnknownRatesSaySo) {
  EXPECT_EQ(flops_text(kNaN), "unknown");
  EXPECT_EQ(flops_text(kInf), "unknown");
}

TEST(PercentText, AFractionWithOneDecimal) {
  EXPECT_EQ(percent_text(0), "0.0%");
  EXPECT_EQ(percent_text(0.123), "12.3%");
  EXPECT_EQ(percent_text(1), "100.0%");
  EXPECT_EQ(percent_text(2.5), "250.0%");
  EXPECT_EQ(percent_text(0.0004), "0.0%");
  EXPECT_EQ(percent_text(-0.05), "-5.0%");
  EXPECT_EQ(percent_text(kNaN), "unknown");
  EXPECT_EQ(percent_text(-kInf), "unknown");
}

TEST(QuantityText, AnExactTieRoundsToTheEvenDigitAsPrintfDoes) {
  EXPECT_EQ(bytes_text(1280), "1.2 KiB");   // 1280 / 1024 = 1.25 exactly
  EXPECT_EQ(bytes_text(1792), "1.8 KiB");   // 1.75 exactly
  EXPECT_EQ(time_text(2125), "2.12 ms");    // 2.125 exactly
  EXPECT_EQ(time_text(-2125), "-2.12 ms");
  EXPECT_EQ(flops_text(2.25), "2.2 TFLOP/s");
}

TEST(QuantitySpellings, EachQuantitysRulesSitAtItsEnumIndex) {
  // quantity_text finds a quantity's rules by its enum value, and the page by its name.
  const auto spellings = quantity_spellings();
  ASSERT_EQ(spellings.size(), 7u);
  for (size_t i = 0; i < spellings.size(); ++i) EXPECT_EQ(static_cast<size_t>(spellings[i].quantity), i);
  EXPECT_EQ(spellings[static_cast<size_t>(Quantity::kTime)].name, "time");
  EXPECT_EQ(quantity_text(Quantity::kPercent, 0.5), "50.0%");
}

TEST(RatioText, AMeasuredRatioHasTwoDecimalsAndAnEstimateOneAndATilde) {
  EXPECT_EQ(ratio_text(1.254), "1.25x");
  EXPECT_EQ(ratio_text(1.0), "1.00x");
  EXPECT_EQ(ratio_text(0.125), "0.12x");  // an exact tie goes to the even digit, as printf does
  EXPECT_EQ(ratio_text(12.5), "12.50x");
  EXPECT_EQ(estimated_ratio_text(2.04), "~2.0x");
  EXPECT_EQ(estimated_ratio_text(0.25), "~0.2x");
  EXPECT_EQ(ratio_text(std::nan("")), "unknown");
  EXPECT_EQ(estimated_ratio_text(INFINITY), "unknown");  // no "~" on a value not known
}

}  // namespace
}  // namespace attnprof
