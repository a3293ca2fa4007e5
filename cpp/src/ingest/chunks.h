// Parsing the traceEvents array on several cores. The stream is cut into chunks of whole
// events (scanner.h); each chunk is parsed on its own, by a worker with its own simdjson
// parser, into a ParsedChunk whose tables use chunk-local string ids and event numbers;
// TraceBuilder::absorb then appends the chunks to the Trace in file order. With no workers the
// reading thread parses each chunk straight into the Trace (parse_event_chunk_into, builder
// Mode::kStream), which numbers strings, pids and issues as the merge does: the Trace does
// not depend on the thread count (cpp/tests/ingest/parallel_chunks_test.cpp).
#pragma once

#include <simdjson.h>

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "attnprof/error.h"
#include "attnprof/trace.h"
#include "ingest/trace_builder.h"
#include "ingest/worker_budget.h"

namespace attnprof::ingest {

// Bytes with one writable byte before data() (so a chunk can be parsed in place as
// "[" + events + "]") and simdjson's padding after capacity().
class ChunkBuffer {
 public:
  ChunkBuffer() = default;
  explicit ChunkBuffer(size_t capacity);
  char* data() { return buf_.get() + 1; }
  size_t capacity() const { return capacity_; }
  // Bytes readable from data() - 1 (the bracket byte) on, padding included.
  size_t padded_capacity_from_bracket() const { return capacity_ + 2 + simdjson::SIMDJSON_PADDING; }
  explicit operator bool() const { return buf_ != nullptr; }

 private:
  std::unique_ptr<char[]> buf_;
  size_t capacity_ = 0;
};

struct ChunkJob {
  ChunkBuffer buffer;        // the events are buffer.data()[0, size)
  size_t size = 0;
  size_t stream_offset = 0;  // where data()[0] is in the (inflated) stream, for messages
  bool must_start_with_object = false;  // first chunk of a bare-array document
  const std::string* label = nullptr;
};

struct ChunkContext;

struct ParsedChunk {
  // The chunk's rows; string ids are its context's, string pids/tids and "event #N"
  // chunk-local (part.strings is not used).
  Trace part;
  ChunkContext* context = nullptr;
  // The strings the context first saw in this chunk, in that order: their context ids are
  // first_new_string, first_new_string + 1, ... (views into the context's pool, whose
  // strings do not move, so the merge reads them while the thread parses on).
  StrId first_new_string = 0;
  std::vector<std::string_view> new_strings;
  // Chunk-local event number of each runtime/driver slice that has a correlation, in slice
  // order: absorb() checks those for duplicates across the whole trace.
  std::vector<int64_t> launch_events;
  std::optional<Error> error;  // the first structural error; rows before it are kept
  ChunkBuffer buffer;          // handed back for reuse
};

// What one parsing thread keeps from chunk to chunk: its strings (the ids of its chunks'
// rows), its builder (string cache, per-name verdicts, scratch buffers), the rows of chunks
// already merged (their capacity reused: no fresh tables, page faults and string copies per
// chunk) and, for the merge, the trace's id of each of its strings.
struct ChunkContext {
  // `reads`: what the analyses read: the builder drops the rest as it parses, so the merge
  // moves only kept rows.
  explicit ChunkContext(TraceReads reads) : builder(strings, reads) {}
  ChunkContext(const ChunkContext&) = delete;
  ChunkContext& operator=(const ChunkContext&) = delete;

  StringPool strings;  // the parsing thread's only
  TraceBuilder builder;
  // Context string id -> the Trace's, for every string of the chunks merged so far: the
  // merging thread's only. Both pools start with "" as id 0.
  std::vector<StrId> to_global{0};
  std::vector<ParsedChunk> spare;  // merged chunks' rows, cleared (ChunkWorkers' lock)
};

// Parses one chunk (in place: the bytes around the events are overwritten) with `context`'s
// builder, into `out` (cleared rows, or fresh).
void parse_event_chunk(ChunkJob& job, simdjson::ondemand::parser& parser, ChunkContext& context, ParsedChunk& out);
// Parses one chunk straight into `trace` through `builder` (TraceBuilder::Mode::kStream, whose
// end_chunk() the caller calls): the single-thread path, which skips the chunk-local tables
// and their merge. Returns the chunk's first structural error; rows before it are kept.
std::optional<Error> parse_event_chunk_into(ChunkJob& job, simdjson::ondemand::parser& parser,
                                            TraceBuilder& builder, Trace& trace);

// Parses submitted chunks on `threads` worker threads (at least one before submit()) and
// hands results back in submission order.
class ChunkWorkers {
 public:
  explicit ChunkWorkers(size_t threads, TraceReads reads = {});
  void start(size_t more_threads);  // adds worker threads (submitted chunks wait for none)
  ~ChunkWorkers();
  ChunkWorkers(const ChunkWorkers&) = delete;
  ChunkWorkers& operator=(const ChunkWorkers&) = delete;

  void submit(ChunkJob job);
  // The oldest submitted chunk when no worker has started it yet: every chunk before it has
  // been handed back, so the caller can parse it straight into the Trace, without the merge.
  std::optional<ChunkJob> take_oldest_if_unstarted();
  // The oldest submitted chunk. While a worker parses it, the caller parses (with `parser`)
  // any chunk no worker has started, rather than sleep: a worker that waits for a core
  // another process holds then delays one chunk, not every chunk behind it.
  ParsedChunk next_result(simdjson::ondemand::parser& parser);
  // Hands a merged chunk's rows back to the context that parsed it, for its next chunk.
  void recycle(ParsedChunk chunk);
  size_t in_flight() const { return slots_.size(); }
  size_t threads() const { return threads_.size(); }

 private:
  struct Slot {
    ChunkJob job;
    bool started = false;
    std::optional<ParsedChunk> result;
  };
  void work(ChunkContext& context);
  // `context`'s spare rows when it has some, else fresh ones (the lock is held).
  ParsedChunk rows_for(ChunkContext& context);
  // Marks the oldest unstarted slot started and takes its job (the lock is held); nullptr
  // when every slot has been started.
  Slot* start_next_unstarted();

  TraceReads reads_;
  // One per worker, and one for the chunks next_result() parses on the caller's thread;
  // they outlive every ParsedChunk handed out.
  std::vector<std::unique_ptr<ChunkContext>> contexts_;
  ChunkContext* caller_context_ = nullptr;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable job_ready_, result_ready_;
  std::deque<Slot> slots_;  // in submission order; a worker owns a started slot until result is set
  bool stopping_ = false;
};


}  // namespace attnprof::ingest
