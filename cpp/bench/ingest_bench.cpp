// One timed pass over a trace file, printed as one JSON line (wall seconds, peak RSS).
//   attnprof_ingest_bench load FILE      attnprof's load_trace (streaming ingest), keeping what
//                                        `attnprof analyze` keeps (analysis_reads)
//   attnprof_ingest_bench simdjson FILE  bare simdjson: load the file, on-demand walk of
//                                        traceEvents reading ph, cat, name, ts, dur
// Run each mode in its own process (bench/ingest_compare.py does) so peak RSS is its own.
#include <simdjson.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "attnprof/attention.h"
#include "attnprof/ingest.h"

namespace {

double peak_rss_mb() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_maxrss) / 1024.0;
}

// long: the peer being measured, a bare On-Demand walk: one loop, as a reader of simdjson's
// documentation would write it, so calls of our own do not change what it costs
int bare_simdjson(const char* path, int64_t& events) {
  simdjson::padded_string text;
  if (simdjson::padded_string::load(path).get(text)) return 1;
  simdjson::ondemand::parser parser;
  simdjson::ondemand::document doc;
  if (parser.iterate(text).get(doc)) return 1;
  simdjson::ondemand::array arr;
  if (doc["traceEvents"].get_array().get(arr)) return 1;
  double sum = 0;
  for (auto ev : arr) {
    simdjson::ondemand::object obj;
    if (ev.get_object().get(obj)) return 1;
    for (auto field : obj) {
      std::string_view key;
      if (field.unescaped_key().get(key)) return 1;
      if (key == "ph" || key == "cat" || key == "name") {
        std::string_view s;
        if (field.value().get_string().get(s) == simdjson::SUCCESS) sum += 1;
        sum += static_cast<double>(s.size());
      } else if (key == "ts" || key == "dur") {
        double d = 0;
        if (field.value().get_double().get(d) != simdjson::SUCCESS) d = 0;
        sum += d;
      }
    }
    ++events;
  }
  return sum < 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3 || argc > 5) {
    std::fprintf(stderr, "usage: %s load|simdjson FILE [CHUNK_MIB (fractions too) [THREADS]]\n", argv[0]);
    return 2;
  }
  attnprof::IngestOptions options;  // CHUNK_MIB / THREADS: to measure other chunk sizes and thread counts
  options.reads = attnprof::analysis_reads();
  if (argc >= 4) options.chunk_bytes = static_cast<size_t>(std::stod(argv[3]) * (1 << 20));
  if (argc >= 5) options.threads = std::stoull(argv[4]);
  const std::string mode = argv[1];
  const auto t0 = std::chrono::steady_clock::now();
  int64_t events = 0;
  if (mode == "load") {
    auto trace = attnprof::load_trace(argv[2], options);
    if (!trace) {
      std::fprintf(stderr, "%s\n", trace.error().message.c_str());
      return 2;
    }
    events = trace->event_count;
  } else if (mode == "simdjson") {
    if (bare_simdjson(argv[2], events) != 0) {
      std::fprintf(stderr, "simdjson pass failed\n");
      return 2;
    }
  } else {
    return 2;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("{\"mode\": \"%s\", \"seconds\": %.3f, \"peak_rss_mb\": %.1f, \"events\": %lld}\n", mode.c_str(), secs,
              peak_rss_mb(), static_cast<long long>(events));
  return 0;
}
