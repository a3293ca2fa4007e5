#include "ingest/chunks.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "ingest/document.h"
#include "ingest/scanner.h"
#include "ingest/trace_builder.h"
#include "ingest/utf8.h"

namespace attnprof::ingest {

namespace od = simdjson::ondemand;

ChunkBuffer::ChunkBuffer(size_t capacity) : capacity_(capacity) {
  const size_t total = capacity + 2 + simdjson::SIMDJSON_PADDING;
  buf_.reset(new char[total]);  // not value-initialised: first-touching pages costs time
  std::memset(buf_.get() + capacity + 1, ' ', total - capacity - 1);
}

namespace {

// Walks "[" + events + "]" with the builder; returns the error and where it was found.
std::optional<Error> walk_events(ChunkJob& job, od::parser& parser, TraceBuilder& builder, Trace& part) {
  char* data = job.buffer.data();
  const size_t n = job.size;
  const auto malformed_at = [&](const char* where, simdjson::error_code e) {
    return malformed_json(*job.label, job.stream_offset + static_cast<size_t>(where - data), e);
  };
  data[-1] = '[';
  data[n] = ']';
  const simdjson::padded_string_view text(data - 1, n + 2, job.buffer.padded_capacity_from_bracket());
  od::document doc;
  simdjson::error_code err = parser.iterate(text).get(doc);
  if (err == simdjson::UTF8_ERROR) {
    // iterate() validates UTF-8 as it indexes the chunk, so valid chunks (nearly all) are not
    // checked twice; an invalid one is repaired in place and indexed again.
    repair_utf8(part, data, n, job.stream_offset);
    err = parser.iterate(text).get(doc);
  }
  const char* where = data;
  od::array events;
  if (!err) err = doc.get_array().get(events);
  if (!err) {
    for (auto event_result : events) {
      od::value event;
      if ((err = event_result.get(event))) break;
      where = event.raw_json_token().data();
      if (job.must_start_with_object && part.event_count == 0) {  // Chrome's array format: events, or not a trace
        od::json_type t;
        if ((err = event.type().get(t))) break;
        if (t != od::json_type::object) {
          if ((err = check_literal(event))) break;
          return make_error(ErrorCode::kNotATrace, *job.label + ": " + kNotArrayOfEvents);
        }
      }
      if ((err = builder.add_event(event))) break;
    }
  }
  if (!err) {
    if (const char* rest = nullptr; doc.current_location().get(rest) == simdjson::SUCCESS)
      err = simdjson::TRAILING_CONTENT, where = rest;
  }
  if (err) return malformed_at(where, err);
  return std::nullopt;
}

}  // namespace

std::optional<Error> parse_event_chunk_into(ChunkJob& job, od::parser& parser, TraceBuilder& builder, Trace& trace) {
  char* data = job.buffer.data();
  size_t first = 0;
  while (first < job.size && is_json_space(data[first])) ++first;
  if (first < job.size && data[first] == ',') data[first] = ' ';  // the separator after the previous chunk
  return walk_events(job, parser, builder, trace);
}

void parse_event_chunk(ChunkJob& job, od::parser& parser, ChunkContext& context, ParsedChunk& out) {
  out.context = &context;
  // Kineto spends ~250-300 bytes of JSON per event, most of them 'X' (see ingest.cpp);
  // recycled rows have the room already.
  out.part.slices.reserve(job.size / 200);
  out.part.op_args.reserve(job.size / 1000);
  out.first_new_string = static_cast<StrId>(context.strings.size());
  context.builder.begin_chunk(out.part);
  out.error = parse_event_chunk_into(job, parser, context.builder, out.part);
  context.builder.take_launch_events(out.launch_events);
  for (size_t id = out.first_new_string; id < context.strings.size(); ++id)
    out.new_strings.push_back(context.strings.get(static_cast<StrId>(id)));
  out.buffer = std::move(job.buffer);
}

namespace {

// Empties a merged chunk's rows, keeping the vectors' capacity.
void clear_rows(ParsedChunk& chunk) {
  Trace& part = chunk.part;
  part.slices.clear();
  part.op_args.clear();
  part.input_lists.clear();
  part.python_args.clear();
  part.gpu_args.clear();
  part.memory.clear();
  part.flows.clear();
  part.source_frames.clear();
  part.issues.clear();
  part.event_count = 0;
  part.python_frames = 0;
  part.threads = ThreadTable();
  part.meta = TraceMetadata();
  chunk.new_strings.clear();
  chunk.launch_events.clear();
  chunk.error.reset();
}

}  // namespace

ChunkWorkers::ChunkWorkers(size_t threads, TraceReads reads) : reads_(reads) {
  caller_context_ = contexts_.emplace_back(std::make_unique<ChunkContext>(reads_)).get();
  start(threads);
}

void ChunkWorkers::start(size_t more_threads) {
  for (size_t i = 0; i < more_threads; ++i) {
    ChunkContext& context = *contexts_.emplace_back(std::make_unique<ChunkContext>(reads_));
    threads_.emplace_back([this, &context] { work(context); });
  }
}

ChunkWorkers::~ChunkWorkers() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  job_ready_.notify_all();
  for (std::thread& t : threads_) t.join();
}

ParsedChunk ChunkWorkers::rows_for(ChunkContext& context) {
  if (context.spare.empty()) return ParsedChunk{};
  ParsedChunk rows = std::move(context.spare.back());
  context.spare.pop_back();
  return rows;
}

void ChunkWorkers::recycle(ParsedChunk chunk) {
  if (chunk.context == nullptr) return;
  clear_rows(chunk);
  ChunkContext& context = *chunk.context;
  std::lock_guard lock(mutex_);
  context.spare.push_back(std::move(chunk));
}

void ChunkWorkers::submit(ChunkJob job) {
  {
    std::lock_guard lock(mutex_);
    slots_.push_back(Slot{std::move(job), false, std::nullopt});
  }
  job_ready_.notify_one();
}

std::optional<ChunkJob> ChunkWorkers::take_oldest_if_unstarted() {
  std::lock_guard lock(mutex_);
  if (slots_.empty() || slots_.front().started) return std::nullopt;
  ChunkJob job = std::move(slots_.front().job);
  slots_.pop_front();
  return job;
}

ChunkWorkers::Slot* ChunkWorkers::start_next_unstarted() {
  auto it = std::find_if(slots_.begin(), slots_.end(), [](const Slot& s) { return !s.started; });
  if (it == slots_.end()) return nullptr;
  it->started = true;
  return &*it;
}

ParsedChunk ChunkWorkers::next_result(od::parser& parser) {
  std::unique_lock lock(mutex_);
  while (!slots_.front().result) {
    Slot* slot = start_next_unstarted();
    if (slot == nullptr) {
      result_ready_.wait(lock);
      continue;
    }
    ChunkJob job = std::move(slot->job);
    ParsedChunk result = rows_for(*caller_context_);
    lock.unlock();
    parse_event_chunk(job, parser, *caller_context_, result);
    lock.lock();
    slot->result = std::move(result);  // a deque keeps its elements in place while the back grows
  }
  ParsedChunk out = std::move(*slots_.front().result);
  slots_.pop_front();
  return out;
}

void ChunkWorkers::work(ChunkContext& context) {
  od::parser parser;  // one per worker, reused: its buffers are sized once for the chunk size
  std::unique_lock lock(mutex_);
  for (;;) {
    Slot* slot = nullptr;
    job_ready_.wait(lock, [&] { return stopping_ || (slot = start_next_unstarted()) != nullptr; });
    if (stopping_) return;
    ChunkJob job = std::move(slot->job);
    ParsedChunk result = rows_for(context);
    lock.unlock();
    parse_event_chunk(job, parser, context, result);
    lock.lock();
    slot->result = std::move(result);  // slots before this one may still be parsing: slot stays put
    result_ready_.notify_all();
  }
}

}  // namespace attnprof::ingest
