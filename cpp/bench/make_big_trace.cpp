// Builds a large Kineto trace by repeating a real fixture: copy k shifts every timestamp by
// k x (the fixture's time span + 1 ms) and every id (External id, correlation, Python ids,
// flow ids) by k x (the largest id + 1), so the result is a plausible long profile.
//
//   attnprof_make_big_trace FIXTURE.json[.gz] OUT.json TARGET_MB
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "attnprof/io.h"

// ordered_json: the events keep the fixture's key order (Kineto writes "ph", "cat", "name", ..., "args"
// last), which the reader sees in real traces; nlohmann::json would sort the keys.
using json = nlohmann::ordered_json;

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

// One event of the fixture as text with holes where copy k differs: its ts and its ids. Copy k
// is the pieces with the shifted numbers between them, each number printed as nlohmann::json
// prints it, so the output is byte for byte what dumping each shifted event would write, at the
// cost of a copy of the text instead of a copy of the JSON tree (the tree made a 20 GB trace take
// hours to write).
struct EventTemplate {
  std::vector<std::string> pieces;  // text around the holes: holes.size() + 1 pieces
  struct Hole {
    bool is_ts;
    double ts;
    int64_t id;
  };
  std::vector<Hole> holes;
};

EventTemplate make_template(const json& e) {
  constexpr std::string_view kMark = "\"@@make_big_trace_hole_";  // a string value, then its number
  json marked = e;
  EventTemplate t;
  auto mark = [&](json& slot, EventTemplate::Hole hole) {
    slot = std::string(kMark.substr(1)) + std::to_string(t.holes.size()) + "@@";
    t.holes.push_back(hole);
  };
  if (e.contains("ts") && e["ts"].is_number()) mark(marked["ts"], {true, e["ts"].get<double>(), 0});
  if (e.contains("id") && e["id"].is_number_integer()) mark(marked["id"], {false, 0, e["id"].get<int64_t>()});
  if (e.contains("args") && e["args"].is_object())
    for (const char* k : kIdArgs)
      if (e["args"].contains(k) && e["args"][k].is_number_integer())
        mark(marked["args"][k], {false, 0, e["args"][k].get<int64_t>()});
  const std::string text = marked.dump();
  std::vector<std::pair<size_t, size_t>> spans(t.holes.size());  // where each hole's marker lies
  for (size_t pos = text.find(kMark); pos != std::string::npos; pos = text.find(kMark, pos + 1)) {
    const size_t digits = pos + kMark.size();
    const size_t close = text.find("@@\"", digits);
    spans[std::stoul(text.substr(digits, close - digits))] = {pos, close + 3};
  }
  std::vector<size_t> order(t.holes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return spans[a].first < spans[b].first; });
  std::vector<EventTemplate::Hole> holes;
  size_t at = 0;
  for (const size_t i : order) {
    t.pieces.push_back(text.substr(at, spans[i].first - at));
    holes.push_back(t.holes[i]);
    at = spans[i].second;
  }
  t.pieces.push_back(text.substr(at));
  t.holes = std::move(holes);
  return t;
}

void append_copy(const EventTemplate& t, double dt_us, int64_t did, std::string& out) {
  for (size_t i = 0; i < t.holes.size(); ++i) {
    out += t.pieces[i];
    const EventTemplate::Hole& h = t.holes[i];
    out += h.is_ts ? json(h.ts + dt_us).dump() : json(h.id + did).dump();
  }
  out += t.pieces.back();
}

// From the first event's start to the last one's end.
double time_span_us(const json& events) {
  double t0 = std::numeric_limits<double>::max(), t1 = 0;
  for (const auto& e : events) {
    if (!e.contains("ts") || !e["ts"].is_number()) continue;
    const double ts = e["ts"].get<double>();
    t0 = std::min(t0, ts);
    t1 = std::max(t1, ts + (e.contains("dur") && e["dur"].is_number() ? e["dur"].get<double>() : 0.0));
  }
  return t1 - t0;
}

// The document's other keys, "{\"k\": v, ..." without its closing brace: traceEvents follows.
std::string header_keys(const json& doc) {
  std::string header = doc.dump(1);
  header.pop_back();  // drop the closing '}'
  while (!header.empty() && (header.back() == '\n' || header.back() == ' ')) header.pop_back();
  return header;
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
  const double span_us = time_span_us(events) + 1000.0;
  const int64_t id_span = max_id(events) + 1;
  size_t copy_bytes = 0;  // one dump per event of copy 0, for the size estimate
  for (const auto& e : events) copy_bytes += e.dump().size() + 2;
  const size_t target = std::strtoull(argv[3], nullptr, 10) << 20;
  const size_t copies = std::max<size_t>(1, target / std::max<size_t>(copy_bytes, 1));

  std::vector<EventTemplate> templates;
  templates.reserve(events.size());
  for (const auto& e : events) templates.push_back(make_template(e));

  std::ofstream out(argv[2], std::ios::binary);
  out << header_keys(doc) << ",\n\"traceEvents\": [\n";
  std::string buffer;  // one copy at a time, written in one call
  for (size_t k = 0; k < copies; ++k) {
    buffer.clear();
    for (const EventTemplate& t : templates) {
      if (k > 0 || &t != &templates.front()) buffer += ",\n";
      append_copy(t, static_cast<double>(k) * span_us, static_cast<int64_t>(k) * id_span, buffer);
    }
    out.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
  }
  out << "\n]}\n";
  out.close();
  std::printf("wrote %s: %zu copies of %zu events (%.1f MB)\n", argv[2], copies, events.size(),
              static_cast<double>(copies * copy_bytes) / 1e6);
  return out ? 0 : 1;
}
