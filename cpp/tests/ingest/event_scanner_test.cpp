// The event scanner finds where the last whole event of the traceEvents array ends and where
// the array closes, however the bytes arrive: checked against a byte-at-a-time walk of the
// same text, for pieces of many sizes, on events whose strings hold brackets, escaped quotes
// and backslash runs, some of them across 64-byte block edges.
#include "ingest/scanner.h"

#include <gtest/gtest.h>

#include <string>

namespace attnprof::ingest {
namespace {

struct Expected {
  size_t last_boundary = EventScanner::kNone;
  size_t array_end = EventScanner::kNone;
};

// The reference: the JSON string/escape/depth rules, one byte at a time, over text[0, to).
Expected walk(const std::string& text, size_t to) {
  Expected out;
  int depth = 1;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < to; ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '{' || c == '[') ++depth;
    else if (c == '}' || c == ']') {
      if (--depth == 1) out.last_boundary = i + 1;
      if (depth == 0) {
        out.array_end = i;
        return out;
      }
    }
  }
  return out;
}

std::string tricky_events() {
  std::string t;
  for (int i = 0; i < 40; ++i) {
    t += R"({"ph": "X", "name": "a]}[{\"b\\)";
    t += std::string(static_cast<size_t>(i % 7), '\\');
    t += std::string(static_cast<size_t>(i % 7) % 2 == 0 ? "" : "\\");  // even runs: the quote below closes the string
    t += R"(", "args": {"Input Dims": [[1, 2], [)" + std::to_string(i) + R"(]], "s": "}}]]\\"}})";
    t += std::string(static_cast<size_t>(i * 13 % 61), ' ');
    t += i % 5 == 0 ? ",\n" : ",";
  }
  t += R"({"last": [[[]]]}] , "tail": {"x": "]"}})";
  return t;
}

TEST(EventScanner, FindsTheSameBoundariesAsAByteWalkForAnyPieceSize) {
  const std::string text = tricky_events();
  ASSERT_NE(walk(text, text.size()).array_end, EventScanner::kNone);  // the text is what the test means
  for (size_t piece : {1, 7, 63, 64, 65, 100, 129, 1000, 4096}) {
    EventScanner scanner;
    for (size_t from = 0; from < text.size() && scanner.array_end() == EventScanner::kNone; from += piece) {
      const size_t to = std::min(text.size(), from + piece);
      scanner.scan(text.data(), from, to);
      const Expected want = walk(text, to);
      ASSERT_EQ(scanner.last_boundary(), want.last_boundary) << "piece " << piece << " up to byte " << to;
      ASSERT_EQ(scanner.array_end(), want.array_end) << "piece " << piece << " up to byte " << to;
    }
    EXPECT_EQ(scanner.array_end(), walk(text, text.size()).array_end) << "piece " << piece;
  }
}

TEST(EventScanner, AfterACutBoundariesCountFromTheNewStart) {
  const std::string text = tricky_events();
  EventScanner scanner;
  const size_t half = text.size() / 2;
  scanner.scan(text.data(), 0, half);
  const size_t cut = scanner.last_boundary();
  ASSERT_NE(cut, EventScanner::kNone);
  ASSERT_EQ(cut, walk(text, half).last_boundary);
  scanner.shift(cut);  // the caller dropped the whole events before the cut
  EXPECT_EQ(scanner.last_boundary(), EventScanner::kNone);
  const std::string rest = text.substr(cut);
  scanner.scan(rest.data(), half - cut, rest.size());
  EXPECT_EQ(scanner.array_end() + cut, walk(text, text.size()).array_end);
  EXPECT_EQ(scanner.last_boundary() + cut, walk(text, text.size()).last_boundary);
}

// Chunks are first cut where a line break separates two elements ("}", ",", "{"): the cut is
// just after the last such '}' whose next element has begun in the window. It is a guess
// (the '}' may close an object inside an event); ingest proves it by the chunk's parse.
TEST(LineBreakBoundary, CutsAfterTheLastBraceWhoseSeparatorHoldsALineBreak) {
  const std::string events = "{\"a\": 1},\n{\"b\": 2},\r\n  {\"c\": 3}";
  EXPECT_EQ(line_break_boundary(events.data(), events.size()), events.find("},\r\n") + 1);
  // The next element not yet in the window: the cut before it.
  const std::string cut_short = "{\"a\": 1},\n{\"b\": 2},\n  ";
  EXPECT_EQ(line_break_boundary(cut_short.data(), cut_short.size()), cut_short.find("},\n{") + 1);
  // A line break inside an event's array of objects looks the same: a guess, not a proof.
  const std::string nested = "{\"a\": [{\"x\": 1},\n{\"y\": 2}]}";
  EXPECT_EQ(line_break_boundary(nested.data(), nested.size()), nested.find("},\n") + 1);
}

TEST(LineBreakBoundary, NoneWithoutALineBreakBetweenElements) {
  for (const std::string& text : {std::string("{\"a\": 1},{\"b\": 2}"),  // one line
                                 std::string("{\"a\": 1}\n,{\"b\": 2}"),  // the break before the comma
                                 std::string("[1,\n2],\n[3]"),             // not objects
                                 std::string("\"x\",\n{\"b\": 2}"), std::string("")})
    EXPECT_EQ(line_break_boundary(text.data(), text.size()), EventScanner::kNone) << text;
}

}  // namespace
}  // namespace attnprof::ingest
