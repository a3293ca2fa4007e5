// How every output spells a quantity and a foreign string, once: the text, Markdown and HTML
// renderers, diff's verdicts, the comparison's reasons and the analyses' findings all call
// these, so a time or a size reads the same wherever it is shown. In vocab, at the bottom of
// the stage graph, because findings and diff reasons are worded below the render stage.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace attnprof {

// --- escapers: one per target, for text that came from a trace, a file name or git ---------

// HTML text and attribute values: & < > " ' as entities, invalid UTF-8 as U+FFFD.
std::string html_escape(std::string_view text);

// One Markdown table cell or list line (GitHub-flavoured): the characters that end a cell,
// start a tag or an entity, emphasis, a link or a code span get a backslash or become an
// entity (< &, and > where it would open a block quote: before any other mark), and a line
// break becomes a space, so the text stays on its one line. An arrow "->" inside a line stays
// as typed: with < escaped, a later > cannot close a tag (CommonMark 0.31, "Raw HTML").
std::string markdown_escape(std::string_view text);

// The text as one Markdown code span in a list line or paragraph (not a table cell): inside
// a code span backslashes show as typed, so the text is not escaped but fenced by one backtick
// more than its longest run of backticks; a line break becomes a space.
std::string markdown_code(std::string_view text);

// Text bound for a terminal: control characters other than newline and tab (ESC, BEL, CR,
// backspace, DEL, the C1 controls U+0080..U+009F) are shown as "\x1b" / "\u009b" instead of
// being obeyed, so a kernel name cannot move the cursor, recolour or retitle the terminal.
std::string terminal_escape(std::string_view text);

// --- formatters: a number with its unit; "unknown" for NaN or infinity (a value not recorded) --

// The spelling rules of each quantity as data: the formatters below read them, and the HTML
// dashboard's script gets the same table (render's format_spec_view) so the page and the text
// outputs spell a quantity alike. A value times `scale` is shown in the first unit (from the
// smallest) in which it stays below that unit's `next_at` once rounded to its `digits`
// decimals, so 1023.96 B is "1.0 KiB", never "1024 B", and 999.96 us is "1.00 ms"; the number
// is printed as printf's %.Nf prints it (the exact binary value rounded, an exact tie to the
// even digit, the sign of a negative zero kept), then the unit's `suffix`.
struct UnitSpelling {
  std::string_view suffix;  // written right after the number: " KiB", "%"
  double size;              // in the quantity's base unit
  int digits;               // decimals
  double next_at;           // the rounded value from which the next unit takes over; infinity for the last
};

enum class Quantity { kBytes, kTime, kFlops, kFlopCount, kPercent, kRatio, kEstimatedRatio };

struct QuantitySpelling {
  Quantity quantity;
  std::string_view name;                // the quantity's key in the dashboard's table: "bytes"
  double scale;                         // the given value times this is in the base unit
  std::span<const UnitSpelling> units;  // smallest first
  size_t zero_unit;                     // the unit an exact zero is shown in ("0.0 us", not "0 ns")
  std::string_view prefix = {};         // written before the number: "~" for an estimate
};

// What every formatter writes for NaN or infinity.
inline constexpr std::string_view kUnknownQuantityText = "unknown";

// Every quantity's rules, in the order of `Quantity`.
std::span<const QuantitySpelling> quantity_spellings();

// `value` spelled by its quantity's rules.
std::string quantity_text(Quantity quantity, double value);

// Binary units, 1024 apart: "0 B", "1023 B", "1.0 KiB", "1.5 MiB", "2.00 GiB", "1.25 TiB";
// negative sizes (a difference) keep their sign.
std::string bytes_text(double bytes);

// A duration given in microseconds (the Report's unit): "250 ns", "12.3 us", "1.50 ms",
// "2.00 s", "1.50 h" (from 3600 s on); zero is "0.0 us".
std::string time_text(double us);

// A compute rate given in TFLOP/s (the Report's unit): "312.5 TFLOP/s", "52.3 GFLOP/s",
// "4.0 MFLOP/s" below one TFLOP/s and one GFLOP/s; zero is "0.0 TFLOP/s".
std::string flops_text(double tflops);

// A number of floating-point operations, decimal prefixes 1000 apart from a million on:
// "0 FLOP", "999999 FLOP", "1.00 MFLOP", "52.30 GFLOP", "1.25 PFLOP".
std::string flop_count_text(double flops);

// A fraction as a percentage with one decimal: 0.123 -> "12.3%", 1 -> "100.0%".
std::string percent_text(double fraction);

// A measured ratio (a speedup timed on the model, a time over the median): 1.254 -> "1.25x".
std::string ratio_text(double ratio);

// A ratio a model estimates (an expected speedup or memory saving), one decimal and marked as
// approximate: 2.04 -> "~2.0x" (the "~" is the quantity's prefix in the spelling table).
std::string estimated_ratio_text(double ratio);

}  // namespace attnprof
