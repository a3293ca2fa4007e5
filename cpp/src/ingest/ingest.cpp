// load_trace / parse_trace: the streaming driver.
//
// Bytes arrive in blocks (input.cpp) into one reused window. The header (keys before
// "traceEvents") is found with a small scanner and parsed on its own; the events array is
// cut at event boundaries (scanner.cpp) into chunks of about IngestOptions::chunk_bytes,
// each parsed by one reused simdjson on-demand parser as "[...]" in place; the keys after the
// array (distributedInfo, traceName, ...) are parsed last. Memory is the window plus the
// tables. Layouts this does not split (no "traceEvents" array in the top object) go through
// the whole-document path (document.cpp), which also owns the not-a-trace messages.
#include "attnprof/ingest.h"

#include <simdjson.h>

#include <cstring>
#include <filesystem>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <unistd.h>
#include <memory>
#include <optional>
#include <string>

#include "ingest/chunks.h"
#include "ingest/document.h"
#include "ingest/input.h"
#include "ingest/scanner.h"
#include "ingest/trace_builder.h"
#include "ingest/utf8.h"
#include "ingest/worker_budget.h"

namespace attnprof {
namespace {

namespace od = ingest::od;
using simdjson::SUCCESS;

// The bytes being worked on: data() is preceded by one spare byte (so a chunk can be
// parsed in place as "[" + events + "]") and followed by simdjson's padding.
class Window {
 public:
  explicit Window(size_t initial_capacity) : buf_(initial_capacity) {}
  char* data() { return buf_.data(); }
  size_t size() const { return size_; }
  size_t padded_capacity_from_bracket() const { return buf_.padded_capacity_from_bracket(); }
  size_t dropped() const { return dropped_; }  // bytes of the stream before data()[0]

  // Reads up to `want` more bytes, doubling the buffer when it is full. Returns the bytes
  // read: fewer than `want` when the buffer filled up, 0 only at the end of the input.
  size_t fill(ingest::ByteSource& src, size_t want) {
    if (size_ == buf_.capacity()) grow(buf_.capacity() * 2);
    const size_t n = src.read(data() + size_, std::min(want, buf_.capacity() - size_));
    size_ += n;
    return n;
  }
  void drop_front(size_t n) {
    std::memmove(data(), data() + n, size_ - n);
    size_ -= n;
    dropped_ += n;
  }
  // Hands out the buffer holding data()[0, n) and goes on in `spare` (reused when it has
  // the same capacity) with the bytes after n: no copy of the n bytes themselves.
  ingest::ChunkBuffer cut_front(size_t n, ingest::ChunkBuffer spare) {
    if (!spare || spare.capacity() != buf_.capacity()) spare = ingest::ChunkBuffer(buf_.capacity());
    std::memcpy(spare.data(), data() + n, size_ - n);
    std::swap(buf_, spare);
    size_ -= n;
    dropped_ += n;
    return spare;
  }

 private:
  void grow(size_t capacity) {
    ingest::ChunkBuffer bigger(capacity);
    std::memcpy(bigger.data(), data(), size_);
    buf_ = std::move(bigger);
  }

  ingest::ChunkBuffer buf_;
  size_t size_ = 0;
  size_t dropped_ = 0;
};

// Finds where the traceEvents array starts: after `"traceEvents": [` at depth 1 of the top
// object, or right after a top-level '[' (Chrome's JSON Array Format).
class HeaderScanner {
 public:
  enum class State { kScanning, kObjectEvents, kArrayEvents, kUnsupported };

  State scan(const char* data, size_t size) {
    for (; pos_ < size && state_ == State::kScanning; ++pos_) step(data, data[pos_]);
    return state_;
  }
  size_t key_start() const { return key_start_; }        // the '"' of "traceEvents"
  size_t events_start() const { return events_start_; }  // just after the '['

 private:
  // long: a byte-at-a-time state machine over the JSON before traceEvents: one case per byte
  // that changes its state
  void step(const char* data, char c) {
    if (in_string_) {
      if (escaped_) escaped_ = false;
      else if (c == '\\') escaped_ = true;
      else if (c == '"') {
        in_string_ = false;
        if (depth_ == 1) key_end_ = pos_, key_pending_ = true;
      }
      return;
    }
    if (ingest::is_json_space(c)) return;
    if (value_expected_) {  // just after `"traceEvents":`
      if (c == '[') events_start_ = pos_ + 1, state_ = State::kObjectEvents;
      else state_ = State::kUnsupported;
      return;
    }
    const bool key_was_pending = key_pending_;
    key_pending_ = false;
    switch (c) {
      case '"':
        if (depth_ == 0) {  // a string document, or junk before the value: the whole-document path says which
          state_ = State::kUnsupported;
          return;
        }
        in_string_ = true;
        if (depth_ == 1) key_begin_ = pos_;
        return;
      case ':':
        if (depth_ == 0) {
          state_ = State::kUnsupported;
          return;
        }
        if (depth_ == 1 && key_was_pending &&
            std::string_view(data + key_begin_ + 1, key_end_ - key_begin_ - 1) == kineto::kTraceEvents)
          key_start_ = key_begin_, value_expected_ = true;
        return;
      case '{':
      case '[':
        if (depth_ == 0 && c == '[') {
          events_start_ = pos_ + 1;
          state_ = State::kArrayEvents;
          return;
        }
        ++depth_;
        return;
      case '}':
      case ']':
        if (--depth_ <= 0) state_ = State::kUnsupported;  // top object ended without traceEvents
        return;
      default:
        if (depth_ == 0) state_ = State::kUnsupported;  // a scalar document, or not JSON
        return;
    }
  }

  State state_ = State::kScanning;
  size_t pos_ = 0;
  int64_t depth_ = 0;
  bool in_string_ = false, escaped_ = false, key_pending_ = false, value_expected_ = false;
  size_t key_begin_ = 0, key_end_ = 0, key_start_ = 0, events_start_ = 0;
};

// Kineto's JSON shrinks ~9x through `gzip -1` (the 1 GB bench trace: 1,046 -> 121 MiB) and
// more at higher levels: 8x under-reserves rather than over.
constexpr size_t kGzipRatio = 8;

// A reservation is only virtual memory, but Linux's default overcommit refuses a single
// allocation larger than RAM plus swap (proc(5), overcommit_memory 0): each table reserves at
// most a quarter of RAM, and grows by doubling past it.
template <typename Row>
size_t reservable_rows(size_t rows) {
  static const size_t ram = static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return std::min(rows, ram / 4 / sizeof(Row));
}

class StreamIngest {
 public:
  // `line_cuts`: guess chunk boundaries at line breaks (read_events), or scan for them.
  StreamIngest(ingest::ByteSource& src, const std::string& label, const IngestOptions& options, bool line_cuts)
      : src_(src), label_(label), options_(options),
        window_(std::min<size_t>(block(), std::max<size_t>(src.total() + 1, 4096))),
        builder_(trace_, ingest::TraceBuilder::Mode::kStream, options.reads),
        budget_(ingest::current_worker_budget(src.total(), block(), src.inflates())),
        workers_(ingest::ingest_worker_threads(options.threads, budget_), options.reads),
        line_cuts_(line_cuts) {
    if (ingest::may_parse_in_parallel(options.threads, budget_)) idle_probe_.emplace();
    trace_.path = label;
    // Kineto spends ~250-300 bytes of JSON per event, most of them 'X' or `[memory]`:
    // reserving for one row per 200 bytes (virtual memory; untouched pages cost no RSS) saves
    // the doublings, each of which copies the table and, while it copies, holds it twice
    // (the slices' last doubling on the 1 GB trace through gzip: +100 MiB at the end of
    // ingest). A gzipped trace is taken to be kGzipRatio times its size; past that (or past
    // the cap) the tables grow by doubling as before.
    const size_t json_bytes = src.inflates() ? src.total() * kGzipRatio : src.total();
    trace_.slices.reserve(reservable_rows<Slice>(json_bytes / 200));
    trace_.memory.reserve(reservable_rows<MemoryEvent>(json_bytes / 200));
    trace_.op_args.reserve(reservable_rows<OpArgs>(json_bytes / 1000));
  }

  Result<Trace> run();
  bool cut_at_line() const { return cut_at_line_; }

 private:
  size_t block() const { return std::max<size_t>(options_.chunk_bytes, 4096); }
  Error source_error_or(Error e) const {
    auto st = src_.status();
    return st ? std::move(e) : st.error();
  }
  Error malformed_at(const char* where, simdjson::error_code e) {
    const size_t rel = static_cast<size_t>(where - window_.data());
    return source_error_or(ingest::malformed_json(label_, window_.dropped() + rel, e));
  }
  Error truncated() {
    return source_error_or(ingest::malformed_json(label_, window_.dropped() + window_.size(), simdjson::INCOMPLETE_ARRAY_OR_OBJECT));
  }
  void report_progress() {
    if (options_.progress) options_.progress(src_.consumed(), src_.total());
  }
  void repair_utf8(char* data, size_t n) {
    ingest::repair_utf8(trace_, data, n, window_.dropped() + static_cast<size_t>(data - window_.data()));
  }

  Result<Trace> whole_document();
  Status parse_members(char* open_brace, size_t n);
  HeaderScanner::State scan_header(HeaderScanner& header);
  Status parse_header_keys(size_t key_start);
  void submit_chunk(size_t n);
  void parse_here(ingest::ChunkJob& job);
  void maybe_start_workers();
  Status chunk_status();
  Status absorb_next_chunk();
  Status cut_chunk(size_t n);
  size_t line_cut();
  Status read_events();
  Status read_tail(bool object_format);

  ingest::ByteSource& src_;
  const std::string& label_;
  const IngestOptions& options_;
  Window window_;
  Trace trace_;
  ingest::TraceBuilder builder_;
  od::parser parser_;  // header and tail keys
  ingest::WorkerBudget budget_;
  ingest::ChunkWorkers workers_;  // no threads: chunks are parsed on this thread, straight into trace_
  std::optional<IdleProbe> idle_probe_;  // automatic threads, until they are chosen
  od::parser chunk_parser_;        // for those, and for chunks this thread parses beside the workers
  std::optional<Error> chunk_error_;  // the first error of a chunk parsed here
  // Buffers of absorbed chunks, for the window's next cuts: reusing them saves faulting in
  // fresh pages for every chunk (performance-limits.md: first touch dominates).
  std::vector<ingest::ChunkBuffer> spare_buffers_;
  size_t chunks_submitted_ = 0;
  bool array_format_ = false;
  bool line_cuts_;            // chunks are still cut at line breaks (line_cut)
  bool cut_at_line_ = false;  // some chunk was: an error may be a wrong guess (load_trace)
};

// Reads everything left and hands it to the whole-document path.
Result<Trace> StreamIngest::whole_document() {
  while (window_.fill(src_, block()) > 0) {
  }
  if (auto st = src_.status(); !st) return st.error();
  if (window_.size() == 0) return make_error(ErrorCode::kEmptyInput, label_ + ": empty file");
  // The window is at the start of the stream here (nothing dropped yet).
  return ingest::parse_whole_document(window_.data(), window_.size(), window_.padded_capacity_from_bracket() - 1,
                                      label_, options_.reads);
}

// Parses "{ members }" held in the window at open_brace[0, n) (already a complete object)
// and hands each key to the builder.
Status StreamIngest::parse_members(char* open_brace, size_t n) {
  repair_utf8(open_brace, n);
  const size_t cap = window_.padded_capacity_from_bracket() - 1 - static_cast<size_t>(open_brace - window_.data());
  od::document doc;
  if (auto e = parser_.iterate(simdjson::padded_string_view(open_brace, n, cap)).get(doc)) return malformed_at(open_brace, e);
  od::object obj;
  if (auto e = doc.get_object().get(obj)) return malformed_at(open_brace, e);
  const char* where = open_brace;
  for (auto field : obj) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return malformed_at(where, e);
    od::value v;
    if (auto e = field.value().get(v)) return malformed_at(where, e);
    where = v.raw_json_token().data();
    if (auto e = builder_.add_top_level(key, v)) return malformed_at(where, e);
  }
  if (const char* rest = nullptr; doc.current_location().get(rest) == SUCCESS)
    return malformed_at(rest, simdjson::TRAILING_CONTENT);
  return Ok{};
}

// Hands window[0, n) (whole events) to the workers as the next chunk.
void StreamIngest::submit_chunk(size_t n) {
  ingest::ChunkJob job;
  job.stream_offset = window_.dropped();
  job.size = n;
  job.must_start_with_object = array_format_ && chunks_submitted_ == 0;
  job.label = &label_;
  ingest::ChunkBuffer spare;
  if (!spare_buffers_.empty()) {
    spare = std::move(spare_buffers_.back());
    spare_buffers_.pop_back();
  }
  job.buffer = window_.cut_front(n, std::move(spare));
  ++chunks_submitted_;
  if (workers_.threads() > 0) {
    workers_.submit(std::move(job));
    return;
  }
  parse_here(job);
  maybe_start_workers();
}

// Automatic threads: once this thread has parsed alone for a while, workers start if the
// machine left cores idle meanwhile (ingest_worker_threads): what the parallel path would
// gain is measured, not guessed from the load average.
void StreamIngest::maybe_start_workers() {
  constexpr double kProbeSeconds = 0.1;  // /proc/stat counts in 10 ms ticks
  if (!idle_probe_ || idle_probe_->elapsed_seconds() < kProbeSeconds) return;
  budget_.idle_cores = idle_probe_->idle_cores().value_or(0);
  idle_probe_.reset();
  workers_.start(ingest::ingest_worker_threads(0, budget_));
}

// Parses a chunk on this thread straight into the trace (every chunk before it is in the
// trace already): no chunk-local tables, no merge.
void StreamIngest::parse_here(ingest::ChunkJob& job) {
  if (chunk_error_) return;
  const size_t first_slice = trace_.slices.size();
  chunk_error_ = ingest::parse_event_chunk_into(job, chunk_parser_, builder_, trace_);
  if (!chunk_error_) builder_.end_chunk(first_slice);
  spare_buffers_.push_back(std::move(job.buffer));
  report_progress();
}

// The first error of the chunks parsed so far, in file order.
Status StreamIngest::chunk_status() {
  if (chunk_error_) return source_error_or(std::move(*chunk_error_));
  return Ok{};
}

// Appends the oldest chunk to the trace; its error (if any) ends the ingest. A chunk no
// worker has started yet is parsed here, as on one thread; while a worker parses the oldest,
// this thread parses the chunks behind it (ChunkWorkers::next_result).
Status StreamIngest::absorb_next_chunk() {
  if (std::optional<ingest::ChunkJob> job = workers_.take_oldest_if_unstarted()) {
    parse_here(*job);
    return chunk_status();
  }
  ingest::ParsedChunk chunk = workers_.next_result(chunk_parser_);
  if (chunk.error) return source_error_or(std::move(*chunk.error));
  builder_.absorb(chunk);
  spare_buffers_.push_back(std::move(chunk.buffer));
  workers_.recycle(std::move(chunk));
  report_progress();
  return Ok{};
}

// Cuts window[0, n) off as the next chunk and absorbs the oldest ones in order, keeping
// memory bounded by most_chunks_in_flight.
Status StreamIngest::cut_chunk(size_t n) {
  submit_chunk(n);
  while (workers_.in_flight() >= ingest::most_chunks_in_flight(workers_.threads()))
    if (auto st = absorb_next_chunk(); !st) return st;
  return chunk_status();
}

// Where the window is cut while cuts are guessed at line breaks (line_break_boundary): kNone
// until it holds a chunk's worth. Without a line break in two chunks' worth, the scanner takes
// over from the window's start, where the last cut left the array.
size_t StreamIngest::line_cut() {
  if (window_.size() < options_.chunk_bytes) return ingest::EventScanner::kNone;
  const size_t cut = ingest::line_break_boundary(window_.data(), window_.size());
  if (cut == ingest::EventScanner::kNone && window_.size() >= 2 * block()) line_cuts_ = false;
  if (cut != ingest::EventScanner::kNone) cut_at_line_ = true;
  return cut;
}

// The window starts just after the '[' of traceEvents: cut chunks until the ']' and absorb
// them in order. Cuts are taken at line breaks between events while the input has them
// (line_cut: no byte is scanned twice, simdjson's stage 1 being the one pass; a wrong guess
// fails that chunk's parse and load_trace reads the input again with the scanner); the
// scanner finds them otherwise, and always finds the array's end in the last window.
Status StreamIngest::read_events() {
  ingest::EventScanner scanner;
  size_t scanned = 0;
  for (;;) {
    if (line_cuts_) {
      if (const size_t cut = line_cut(); cut != ingest::EventScanner::kNone)
        if (auto st = cut_chunk(cut); !st) return st;
    }
    if (!line_cuts_) {
      scanner.scan(window_.data(), scanned, window_.size());
      scanned = window_.size();
      if (scanner.array_end() != ingest::EventScanner::kNone) {
        submit_chunk(scanner.array_end());
        window_.drop_front(1);  // the ']'
        while (workers_.in_flight() > 0)
          if (auto st = absorb_next_chunk(); !st) return st;
        return chunk_status();
      }
      const size_t cut = scanner.last_boundary();
      if (window_.size() >= options_.chunk_bytes && cut != ingest::EventScanner::kNone) {
        if (auto st = cut_chunk(cut); !st) return st;
        scanner.shift(cut);
        scanned -= cut;
      }
    }
    const size_t free_target = std::max<size_t>(options_.chunk_bytes, 4096);
    const size_t want = window_.size() < free_target ? free_target - window_.size() : block();
    if (window_.fill(src_, want) == 0) {
      if (line_cuts_) {  // all the rest is in the window: the scanner finds where the array ends
        line_cuts_ = false;
        continue;
      }
      // Whatever was parsed before the truncation does not matter: the trace is unusable.
      return truncated();
    }
  }
}

// After the events array: `, "key": value ... }` (object format) or nothing (array format).
Status StreamIngest::read_tail(bool object_format) {
  while (window_.fill(src_, block()) > 0) {
  }
  if (auto st = src_.status(); !st) return st.error();
  char* data = window_.data();
  const size_t n = window_.size();
  size_t i = 0;
  while (i < n && ingest::is_json_space(data[i])) ++i;
  if (!object_format) {
    if (i < n) return malformed_at(data + i, simdjson::TRAILING_CONTENT);
    return Ok{};
  }
  if (i == n) return truncated();
  if (data[i] == '}') {
    size_t j = i + 1;
    while (j < n && ingest::is_json_space(data[j])) ++j;
    if (j < n) return malformed_at(data + j, simdjson::TRAILING_CONTENT);
    return Ok{};
  }
  if (data[i] != ',') return malformed_at(data + i, simdjson::TAPE_ERROR);
  data[i] = '{';  // ", k: v }" -> "{ k: v }"
  return parse_members(data + i, n - i);
}

// Reads blocks until the scanner finds where the events start (or that it cannot).
HeaderScanner::State StreamIngest::scan_header(HeaderScanner& header) {
  HeaderScanner::State state = HeaderScanner::State::kScanning;
  while (state == HeaderScanner::State::kScanning) {
    if (window_.fill(src_, block()) == 0) break;
    if (window_.dropped() == 0 && window_.size() >= 3 && std::memcmp(window_.data(), "\xEF\xBB\xBF", 3) == 0)
      std::memset(window_.data(), ' ', 3);  // a UTF-8 byte order mark
    state = header.scan(window_.data(), window_.size());
  }
  return state;
}

// The keys before "traceEvents" (which starts at `key_start`): "{ ... ," becomes "{ ... }"
// for the parse, and is put back after it.
Status StreamIngest::parse_header_keys(size_t key_start) {
  char* data = window_.data();
  size_t end = key_start;
  while (end > 0 && ingest::is_json_space(data[end - 1])) --end;
  if (end > 0 && data[end - 1] == ',') --end;
  const char saved = data[end];
  data[end] = '}';
  size_t open = 0;
  while (data[open] != '{') ++open;
  Status st = parse_members(data + open, end + 1 - open);
  data[end] = saved;
  return st;
}

Result<Trace> StreamIngest::run() {
  HeaderScanner header;
  const HeaderScanner::State state = scan_header(header);
  if (state == HeaderScanner::State::kScanning || state == HeaderScanner::State::kUnsupported) return whole_document();

  const bool object_format = state == HeaderScanner::State::kObjectEvents;
  array_format_ = !object_format;
  if (object_format) {
    if (auto st = parse_header_keys(header.key_start()); !st) return st.error();
  }
  window_.drop_front(header.events_start());
  if (auto st = read_events(); !st) return st.error();
  if (auto st = read_tail(object_format); !st) return st.error();
  if (array_format_ && trace_.event_count == 0)
    return make_error(ErrorCode::kNotATrace, label_ + ": an empty JSON array, not a trace");
  report_progress();
  return std::move(trace_);
}

// What ingest's threads freed (their chunks' tables, parsers and the inflater's blocks) sits
// in free pages between live allocations of glibc's per-thread arenas, which free() does not
// hand back; the analyses that follow allocate on the calling thread, so those pages would
// stay resident through the peak (malloc_trim(3): whole free pages of every arena).
void return_freed_pages() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

// Ingests `open()`'s bytes, cutting chunks at line breaks; when that fails after such a cut,
// the cut may have been a wrong guess: the input is read again with every boundary scanned,
// which gives what the scanner alone gives (the Trace, or the same error at the same byte).
// An input that cannot be read twice (a pipe, `<(zcat trace.gz)`) is only scanned.
template <typename OpenSource>
Result<Trace> ingest_with_line_cuts(const std::string& label, const IngestOptions& options, bool readable_again,
                                    OpenSource open) {
  auto src = open();
  if (!src) return src.error();
  if (!readable_again) return StreamIngest(**src, label, options, false).run();
  StreamIngest guessed(**src, label, options, true);
  Result<Trace> trace = guessed.run();
  if (trace || !guessed.cut_at_line()) return trace;
  auto again = open();
  if (!again) return again.error();
  return StreamIngest(**again, label, options, false).run();
}

}  // namespace

Result<Trace> load_trace(const std::string& path, const IngestOptions& options) {
  std::error_code ec;
  const bool regular_file = std::filesystem::is_regular_file(path, ec);
  Result<Trace> trace = ingest_with_line_cuts(path, options, regular_file, [&] { return ingest::open_source(path); });
  return_freed_pages();
  return trace;
}

Result<TraceAndText> load_trace_keeping_text(const std::string& path, const IngestOptions& options) {
  ingest::PaddedBuffer buffer;
  size_t file_bytes = 0;
  std::function<void(size_t, size_t)> read_done;
  if (options.progress)
    read_done = [&](size_t consumed, size_t total) {
      file_bytes = total > 0 ? total : consumed;  // a pipe has no size: what came through it
      options.progress(file_bytes / 2, file_bytes);
    };
  if (auto read = ingest::read_whole_file(path, buffer, read_done); !read) return read.error();
  TraceAndText out{Trace{}, buffer.release()};
  IngestOptions parse = options;
  if (options.progress)
    parse.progress = [&](size_t done, size_t total) {
      const double half = static_cast<double>(file_bytes) / 2;
      const double share = total > 0 ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
      options.progress(static_cast<size_t>(half + half * share), file_bytes);
    };
  Result<Trace> trace = parse_trace(out.text, path, parse);
  return_freed_pages();
  if (!trace) return trace.error();
  out.trace = std::move(*trace);
  return out;
}

Result<Trace> parse_trace(std::string_view json_text, const std::string& label, const IngestOptions& options) {
  return ingest_with_line_cuts(label, options, true, [&] { return Result<std::unique_ptr<ingest::ByteSource>>(ingest::memory_source(json_text, label)); });
}

}  // namespace attnprof
