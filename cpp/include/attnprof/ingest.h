// Ingest: a Kineto / Chrome trace file (.json or .json.gz) -> Trace.
// Streams traceEvents through a reused on-demand parser (see docs/performance.md);
// never builds a DOM of the whole file.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_set>

#include "attnprof/error.h"
#include "attnprof/trace.h"
#include "attnprof/trace_layout.h"

namespace attnprof {

struct IngestOptions {
  // Called with (bytes consumed, total bytes or 0 when unknown) as ingest advances.
  std::function<void(size_t, size_t)> progress;
  // Events are parsed in chunks of about this size. Each parsing thread holds its parser's
  // index, each worker up to two chunks of text and their tables; 1 MiB parses as fast as
  // 8 MiB (which parsed as fast as 32 MiB) and, with two workers, holds ~27 MiB less at 1 GB
  // (docs/performance.md, "Peak memory").
  size_t chunk_bytes = size_t{1} << 20;
  // Threads parsing chunks, the calling (reading) thread included: 0 = measured (a worker per
  // core left idle while the calling thread parsed alone, at most one per chunk and 8),
  // 1 = the calling thread only, N = it and N - 1 workers. The Trace is the same for any
  // value.
  size_t threads = 0;
  // What to keep besides each slice's own fields; the default keeps everything. The pipeline
  // passes analysis_reads() (attention.h), so a Trace holds only what its analyses read.
  TraceReads reads;
};

// Reads a trace file. Errors: kFileNotFound, kEmptyInput, kCorruptGzip, kMalformedJson,
// kNotATrace. Problems that leave the trace usable are counted in Trace::issues.
Result<Trace> load_trace(const std::string& path, const IngestOptions& options = {});

// Same, from JSON text already in memory (tests, fuzzing, Python bindings).
Result<Trace> parse_trace(std::string_view json_text, const std::string& label,
                          const IngestOptions& options = {});

// A trace and the text it was parsed from (load_trace_keeping_text).
struct TraceAndText {
  Trace trace;
  std::string text;  // the whole file, inflated
};

// load_trace for a caller that also copies the trace (the annotated trace): the file is opened
// and inflated once, into `text`, and the Trace is parsed from that text, so the copy needs no
// second read. The text is held beside the Trace: only for such a caller. options.progress
// counts the read as the first half of the file's bytes and the parse as the second. Errors as
// load_trace.
Result<TraceAndText> load_trace_keeping_text(const std::string& path, const IngestOptions& options = {});

// The whole file as text (gzip inflated), for outputs that copy the trace of a Report whose
// analysis kept none (a Report read back from JSON). Errors: kFileNotFound, kEmptyInput,
// kCorruptGzip.
Result<std::string> read_trace_text(const std::string& path);

// Where the traceEvents array of `text` lies and where the device events whose correlation id
// is in `correlations` are. Errors: kMalformedJson, kNotATrace.
Result<TraceEventsLayout> scan_trace_layout(std::string_view text, const std::unordered_set<int64_t>& correlations);
// Same, scanning a text of valid UTF-8 where it lies (its string's spare capacity takes
// simdjson's padding; a text read by load_trace_keeping_text has it), not a copy: the kept
// trace of a 1 GB run is not held twice. Invalid UTF-8 is repaired on a copy, as above.
Result<TraceEventsLayout> scan_trace_layout(std::string& text, const std::unordered_set<int64_t>& correlations);

}  // namespace attnprof
