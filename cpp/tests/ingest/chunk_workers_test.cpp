// ChunkWorkers hands chunks back in the order they were submitted, whoever parsed them: a
// worker, or the reading thread, which parses chunks no worker has started while it waits
// for the oldest (next_result) or takes the oldest itself when no worker has started it
// (take_oldest_if_unstarted), as StreamIngest does; rows handed back (recycle) are reused.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "ingest/chunks.h"

namespace attnprof::ingest {
namespace {

// Chunk `c`: `events` cpu ops named "op<c>", the separator of a later chunk included.
std::string chunk_text(int c, int events) {
  std::string text = c > 0 ? "," : "";
  for (int e = 0; e < events; ++e) {
    if (e > 0) text += ",";
    text += R"({"ph":"X","cat":"cpu_op","name":"op)" + std::to_string(c) + R"(","pid":1,"tid":1,"ts":)" +
            std::to_string(c * 1000 + e) + R"(,"dur":1})";
  }
  return text;
}

ChunkJob job_of(const std::string& text, size_t offset, const std::string& label) {
  ChunkJob job;
  job.buffer = ChunkBuffer(text.size());
  std::memcpy(job.buffer.data(), text.data(), text.size());
  job.size = text.size();
  job.stream_offset = offset;
  job.label = &label;
  return job;
}

TEST(ChunkWorkers, ChunksComeBackInSubmissionOrderWhoeverParsesThem) {
  const std::string label = "chunks.json";
  constexpr int kChunks = 40, kEvents = 50;
  ChunkWorkers workers(1);
  size_t offset = 0;
  for (int c = 0; c < kChunks; ++c) {
    const std::string text = chunk_text(c, kEvents);
    workers.submit(job_of(text, offset, label));
    offset += text.size();
  }
  simdjson::ondemand::parser parser;
  ChunkContext context(TraceReads{});  // this thread's, for the oldest chunk when no worker took it
  for (int c = 0; c < kChunks; ++c) {
    ParsedChunk chunk;
    if (std::optional<ChunkJob> job = workers.take_oldest_if_unstarted()) parse_event_chunk(*job, parser, context, chunk);
    else chunk = workers.next_result(parser);
    ASSERT_FALSE(chunk.error) << "chunk " << c << ": " << chunk.error->message;
    ASSERT_EQ(chunk.part.event_count, kEvents) << "chunk " << c;
    ASSERT_EQ(chunk.part.slices.size(), size_t{kEvents}) << "chunk " << c;
    // "op<c>" occurs in chunk c only, so it is new to whichever context parsed the chunk.
    const StrId name = chunk.part.slices.front().name;
    ASSERT_GE(name, chunk.first_new_string) << "chunk " << c;
    ASSERT_LT(name - chunk.first_new_string, chunk.new_strings.size()) << "chunk " << c;
    EXPECT_EQ(chunk.new_strings[name - chunk.first_new_string], "op" + std::to_string(c));
    EXPECT_EQ(chunk.part.slices.back().ts_ns, (c * 1000 + kEvents - 1) * int64_t{1000});
    workers.recycle(std::move(chunk));  // its rows hold the next chunks its context parses
  }
  EXPECT_EQ(workers.in_flight(), 0u);
}

}  // namespace
}  // namespace attnprof::ingest
