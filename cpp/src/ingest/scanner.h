// Finds event boundaries in the traceEvents array without parsing: a byte scanner that
// tracks strings, escapes and bracket depth (64 bytes at a time with SIMD masks), so the
// array can be cut into chunks of whole events for the on-demand parser.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace attnprof::ingest {

// JSON's insignificant whitespace (RFC 8259).
inline bool is_json_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

// Where the window data[0, size) can probably be cut between two elements of the array it
// starts in, without scanning it: just after the '}' of the last `}` `,` `{` whose separator
// holds a line break (a raw line break is never inside a JSON string, RFC 8259 section 7,
// so one where the '}' closes an event is a boundary). Nothing says the '}' is at depth 1
// (it may close an object in an array inside an event); the caller proves it by parsing the
// cut-off part as a complete array, and falls back to EventScanner when that fails. kNone
// when there is no such place (JSON without line breaks between events).
size_t line_break_boundary(const char* data, size_t size);

class EventScanner {
 public:
  static constexpr size_t kNone = SIZE_MAX;

  // Scans data[from, to) continuing from the state left by the previous call (positions
  // are relative to `data`; after the caller drops a prefix it calls shift()).
  // Stops at the ']' that closes the array.
  void scan(const char* data, size_t from, size_t to);

  // Position just after the last element that closed at depth 1 ('}' or ']' of an event),
  // kNone when no element has closed yet.
  size_t last_boundary() const { return last_boundary_; }
  // Position of the ']' closing the array, kNone until seen.
  size_t array_end() const { return array_end_; }
  // The caller dropped `n` bytes from the front.
  void shift(size_t n);

 private:
  struct Brackets {
    uint64_t open, close;  // '{' '[' and '}' ']' outside strings, one bit per byte
  };
  struct Candidate {  // a block where depth may have come back to 1, and the state at its start
    size_t pos;
    int64_t depth;
    bool in_string, escaped_next;
  };
  static Brackets brackets_of(const char* block, bool& in_string, bool& escaped_next);
  static int64_t walk_brackets(Brackets b, int64_t depth, size_t pos, size_t& boundary, size_t& end);
  void scan_block(const char* block, size_t pos);  // 64 bytes
  void scan_byte(char c, size_t pos);
  void resolve_boundary(const char* data);

  int64_t depth_ = 1;  // inside the traceEvents array
  bool in_string_ = false;
  bool escaped_ = false;  // the next byte is escaped (a backslash ended the previous block)
  size_t last_boundary_ = kNone;
  size_t array_end_ = kNone;
  std::vector<Candidate> candidates_;  // since the last resolve_boundary(), in file order
};

}  // namespace attnprof::ingest
