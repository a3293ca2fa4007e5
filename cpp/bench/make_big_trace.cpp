// Builds a large Kineto trace by repeating a real fixture: copy k shifts every timestamp by
// k x (the fixture's time span + 1 ms) and every id (External id, correlation, Python ids,
// flow ids) by k x (the largest id + 1), so the result is a plausible long profile.
//
//   attnprof_make_big_trace FIXTURE.json[.gz] OUT.json TARGET_MB
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "attnprof/io.h"

using nlohmann::json;

namespace {

const char* const kIdArgs[] = {"External id", "correlation", "Python id", "Python parent id"};

int64_t max_id(const json& events) {
  int64_t m = 0;
  for (const auto& e : events) {
    if (e.contains("id") && e["id"].is_number_integer()) m = std::max(m, e["id"].get<int64_t>());
    if (!e.contains("args") || !e["args"].is_object()) continue;
    for (const char* k : kIdArgs)
      if (e["args"].contains(k) && e["args"][k].is_number_integer()) m = std::max(m, e["args"][k].get<int64_t>());
  }
  return m;
}

void shift(json& e, double dt_us, int64_t did) {
  if (e.contains("ts") && e["ts"].is_number()) e["ts"] = e["ts"].get<double>() + dt_us;
  if (e.contains("id") && e["id"].is_number_integer()) e["id"] = e["id"].get<int64_t>() + did;
  if (!e.contains("args") || !e["args"].is_object()) return;
  for (const char* k : kIdArgs)
    if (e["args"].contains(k) && e["args"][k].is_number_integer()) e["args"][k] = e["args"][k].get<int64_t>() + did;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s FIXTURE OUT.json TARGET_MB\n", argv[0]);
    return 2;
  }
  auto text = attnprof::read_text_file(argv[1]);
  if (!text) {
    std::fprintf(stderr, "%s\n", text.error().message.c_str());
    return 2;
  }
  json doc = json::parse(*text);
  json events = std::move(doc["traceEvents"]);
  doc.erase("traceEvents");
  double t0 = std::numeric_limits<double>::max(), t1 = 0;
  for (const auto& e : events) {
    if (!e.contains("ts") || !e["ts"].is_number()) continue;
    const double ts = e["ts"].get<double>();
    t0 = std::min(t0, ts);
    t1 = std::max(t1, ts + (e.contains("dur") && e["dur"].is_number() ? e["dur"].get<double>() : 0.0));
  }
  const double span_us = t1 - t0 + 1000.0;
  const int64_t id_span = max_id(events) + 1;
  std::vector<std::string> templates;  // one dump per event of copy 0, for the size estimate
  size_t copy_bytes = 0;
  for (const auto& e : events) copy_bytes += e.dump().size() + 2;
  const size_t target = std::strtoull(argv[3], nullptr, 10) << 20;
  const size_t copies = std::max<size_t>(1, target / std::max<size_t>(copy_bytes, 1));

  std::ofstream out(argv[2], std::ios::binary);
  std::string header = doc.dump(1);  // {"k": v, ...} -> write keys, then traceEvents
  header.pop_back();                 // drop the closing '}'
  while (!header.empty() && (header.back() == '\n' || header.back() == ' ')) header.pop_back();
  out << header << ",\n\"traceEvents\": [\n";
  bool first = true;
  for (size_t k = 0; k < copies; ++k) {
    for (const auto& e : events) {
      json c = e;
      shift(c, static_cast<double>(k) * span_us, static_cast<int64_t>(k) * id_span);
      if (!first) out << ",\n";
      first = false;
      out << c.dump();
    }
  }
  out << "\n]}\n";
  out.close();
  std::printf("wrote %s: %zu copies of %zu events (%.1f MB)\n", argv[2], copies, events.size(),
              static_cast<double>(copies * copy_bytes) / 1e6);
  return out ? 0 : 1;
}
