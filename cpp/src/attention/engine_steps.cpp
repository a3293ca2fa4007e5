// The steps of a run: each forward of the model or of a serving engine, the calls in it, and
// its phase. docs/report-schema.md ("Steps") describes the result; docs/backends.md lists the
// markers with their sources.
//
// A step is marked, in this order of precedence (the first kind that holds a forward call is
// used, so a finer engine marker wins over the ProfilerStep around it):
//   1. an engine annotation with token counts: vLLM's
//      "execute_context_<N>(<tokens>[_<sum sq*sk>])_generation_<M>(<tokens>)"
//      (vllm/v1/worker/gpu_model_runner.py, record_function around each execute_model);
//   2. an engine's step function in the Python frames (with_stack): vLLM's execute_model,
//      SGLang's forward_batch_generation / run_batch;
//   3. ProfilerStep#N;
//   4. a CUDA/HIP graph replay that ran attention kernels;
// and, where nothing marks them, by the period of the call sequence (see split_by_period).
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/attention.h"
#include "extraction.h"

namespace attnprof {
namespace {

// A Python frame "path/file.py(123): function" of an engine's per-step function.
struct EngineFrame {
  std::string_view file_suffix;  // the frame's file ends with it
  std::string_view function;
  std::string_view engine;
  bool starts_step;              // false: a frame inside a step that names its phase
  std::string_view phase;        // "prefill" / "decode" for forward-mode frames, "" otherwise
};

// clang-format off
constexpr EngineFrame kEngineFrames[] = {
  // vLLM V1 (vllm/v1/worker/gpu_model_runner.py, gpu/model_runner.py) and V0 (vllm/worker/model_runner.py)
  {"model_runner.py",  "execute_model",            "vllm",   true,  ""},
  // SGLang (python/sglang/srt/managers/scheduler.py, tp_worker.py, model_executor/model_runner.py)
  {"scheduler.py",     "run_batch",                "sglang", true,  ""},
  {"tp_worker.py",     "forward_batch_generation", "sglang", true,  ""},
  {"model_runner.py",  "forward_decode",           "sglang", false, "decode"},
  {"model_runner.py",  "forward_extend",           "sglang", false, "prefill"},
};
// clang-format on

const EngineFrame* engine_frame(std::string_view frame) {
  const size_t paren = frame.rfind("): ");
  if (paren == std::string_view::npos) return nullptr;
  const std::string_view function = frame.substr(paren + 3);
  const size_t open = frame.rfind('(', paren);
  if (open == std::string_view::npos) return nullptr;
  const std::string_view file = frame.substr(0, open);
  for (const EngineFrame& f : kEngineFrames)
    if (function == f.function && file.ends_with(f.file_suffix)) return &f;
  return nullptr;
}

// A run of digits at `text`'s front, consumed.
std::optional<int64_t> read_number(std::string_view& text) {
  int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || v < 0) return std::nullopt;
  text.remove_prefix(static_cast<size_t>(ptr - text.data()));
  return v;
}

bool consume(std::string_view& text, std::string_view word) {
  if (!text.starts_with(word)) return false;
  text.remove_prefix(word.size());
  return true;
}

// "<requests>(<tokens>[_<sum>])" at the front of `text`.
bool read_counts(std::string_view& text, int64_t& requests, int64_t& tokens, double* sum) {
  const auto r = read_number(text);
  if (!r || !consume(text, "(")) return false;
  const auto t = read_number(text);
  if (!t) return false;
  requests = *r;
  tokens = *t;
  if (consume(text, "_")) {
    const auto s = read_number(text);
    if (!s) return false;
    if (sum) *sum = static_cast<double>(*s);
  }
  return consume(text, ")");
}

// Marker intervals of one kind, outermost only (a step function nests in another of the same
// engine: vLLM's worker execute_model around the model runner's).
using Marker = StepMarker;

std::vector<Marker> outermost(std::vector<Marker> markers) {
  std::sort(markers.begin(), markers.end(), [](const Marker& a, const Marker& b) {
    return a.ts_ns != b.ts_ns ? a.ts_ns < b.ts_ns : a.end_ns > b.end_ns;
  });
  std::vector<Marker> kept;
  for (Marker& m : markers)
    if (kept.empty() || m.ts_ns >= kept.back().end_ns) kept.push_back(std::move(m));
  return kept;
}

std::string phase_of_counts(int64_t prefill_requests, int64_t decode_requests) {
  if (prefill_requests > 0 && decode_requests > 0) return "mixed";
  if (prefill_requests > 0) return "prefill";
  if (decode_requests > 0) return "decode";
  return "";
}

// The slices that can mark steps, found in one pass over the trace (a multi-GB trace holds
// millions of slices: one read of them, each name judged once).
struct MarkerSlices {
  std::vector<uint32_t> annotations, engine_frames, graph_launches;
};

MarkerSlices marker_slices(const Trace& trace) {
  enum : uint8_t { kUnchecked, kYes, kNo };
  std::vector<uint8_t> verdict(trace.strings.size(), kUnchecked);
  auto judge = [&](const Slice& s, auto&& test) {
    if (s.name >= verdict.size()) return false;
    uint8_t& v = verdict[s.name];
    if (v == kUnchecked) v = test(trace.name_of(s)) ? kYes : kNo;
    return v == kYes;
  };
  MarkerSlices out;
  for (uint32_t i = 0; i < trace.slices.size(); ++i) {
    const Slice& s = trace.slices[i];
    if (s.cat == Category::kUserAnnotation) {
      if (judge(s, [](std::string_view n) { return n.starts_with("execute_context_"); })) out.annotations.push_back(i);
    } else if (s.cat == Category::kPythonFunction) {
      if (judge(s, [](std::string_view n) { return engine_frame(n) != nullptr; })) out.engine_frames.push_back(i);
    } else if (is_launch_call(s.cat)) {
      if (judge(s, [](std::string_view n) { return runtime_call_role(n) == RuntimeCallRole::kGraphLaunch; }))
        out.graph_launches.push_back(i);
    }
  }
  return out;
}

std::vector<Marker> annotation_markers(const Trace& trace, const std::vector<uint32_t>& slices) {
  std::vector<Marker> out;
  for (const uint32_t i : slices) {
    const Slice& s = trace.slices[i];
    Marker m;
    if (!read_engine_step_annotation(trace.name_of(s), m.prefill_requests, m.prefill_tokens, m.sum_sq_sk,
                                     m.decode_requests, m.decode_tokens))
      continue;
    m.ts_ns = s.ts_ns;
    m.end_ns = s.end_ns();
    m.name = std::string(trace.name_of(s));
    m.kind = "annotation";
    m.phase = phase_of_counts(m.prefill_requests, m.decode_requests);
    out.push_back(std::move(m));
  }
  return outermost(std::move(out));
}

std::vector<Marker> engine_frame_markers(const Trace& trace, const std::vector<uint32_t>& slices) {
  std::vector<Marker> steps;
  struct Hint {
    int64_t ts_ns, end_ns;
    std::string_view phase;
  };
  std::vector<Hint> hints;
  for (const uint32_t i : slices) {
    const Slice& s = trace.slices[i];
    const EngineFrame* f = engine_frame(trace.name_of(s));
    if (!f->starts_step) {
      hints.push_back({s.ts_ns, s.end_ns(), f->phase});
      continue;
    }
    Marker m;
    m.ts_ns = s.ts_ns;
    m.end_ns = s.end_ns();
    m.name = std::string(trace.name_of(s));
    m.kind = "engine";
    steps.push_back(std::move(m));
  }
  steps = outermost(std::move(steps));
  for (Marker& m : steps) {
    std::set<std::string_view> phases;
    for (const Hint& h : hints)
      if (h.ts_ns >= m.ts_ns && h.end_ns <= m.end_ns) phases.insert(h.phase);
    if (phases.size() == 1) m.phase = std::string(*phases.begin());
    if (phases.size() > 1) m.phase = "mixed";
  }
  return steps;
}

std::vector<Marker> profiler_step_markers(const TraceIndex& index) {
  std::vector<Marker> out;
  for (const StepRange& r : index.steps) out.push_back({r.ts_ns, r.end_ns, "ProfilerStep#" + std::to_string(r.number), "profiler_step"});
  return outermost(std::move(out));
}

// One marker per graph launch that replayed a forward call (the call's CPU start is the launch).
std::vector<Marker> graph_replay_markers(const Trace& trace, const std::vector<uint32_t>& launches,
                                         const std::vector<Call*>& forward) {
  std::set<int64_t> call_starts;
  for (const Call* c : forward) call_starts.insert(c->cpu_ts_ns);
  std::vector<Marker> out;
  for (const uint32_t i : launches) {
    const Slice& l = trace.slices[i];
    if (!call_starts.count(l.ts_ns)) continue;
    out.push_back({l.ts_ns, std::max(l.end_ns(), l.ts_ns + 1), std::string(trace.name_of(l)), "graph_replay"});
  }
  return outermost(std::move(out));
}

}  // namespace

bool read_engine_step_annotation(std::string_view name, int64_t& prefill_requests, int64_t& prefill_tokens,
                                 double& sum_sq_sk, int64_t& decode_requests, int64_t& decode_tokens) {
  if (!consume(name, "execute_context_")) return false;
  int64_t pr = 0, pt = 0, dr = 0, dt = 0;
  double sum = -1;
  if (!read_counts(name, pr, pt, &sum) || !consume(name, "_generation_") || !read_counts(name, dr, dt, nullptr))
    return false;
  prefill_requests = pr, prefill_tokens = pt, decode_requests = dr, decode_tokens = dt, sum_sq_sk = sum;
  return true;
}

bool is_engine_step_frame(std::string_view python_frame_name) { return engine_frame(python_frame_name) != nullptr; }

namespace {

// Markers are outermost, so disjoint and sorted: the last one starting at or before a call.
bool holds_a_call(const std::vector<Marker>& markers, const std::vector<Call*>& forward) {
  return std::any_of(forward.begin(), forward.end(), [&](const Call* c) {
    auto it = std::upper_bound(markers.begin(), markers.end(), c->cpu_ts_ns,
                               [](int64_t t, const Marker& m) { return t < m.ts_ns; });
    return it != markers.begin() && c->cpu_ts_ns < std::prev(it)->end_ns;
  });
}

// The step markers of the first kind, in the order of precedence, that holds a call.
std::vector<Marker> step_markers(const Trace& trace, const TraceIndex& index, const std::vector<Call*>& forward) {
  const MarkerSlices found = marker_slices(trace);
  std::vector<Marker> markers;
  for (int kind = 0; kind < 4; ++kind) {
    markers = kind == 0   ? annotation_markers(trace, found.annotations)
              : kind == 1 ? engine_frame_markers(trace, found.engine_frames)
              : kind == 2 ? profiler_step_markers(index)
                          : graph_replay_markers(trace, found.graph_launches, forward);
    if (holds_a_call(markers, forward)) return markers;
  }
  return {};
}

StepGroup group_of(const Marker* held) {
  StepGroup g;
  g.held = held != nullptr;
  if (held)
    g.marker = {held->ts_ns, held->end_ns, held->name, held->kind, held->phase, held->prefill_requests,
                held->prefill_tokens, held->decode_requests, held->decode_tokens, held->sum_sq_sk};
  return g;
}

}  // namespace

std::vector<StepGroup> engine_step_groups(const Trace& trace, const TraceIndex& index, const std::vector<Call*>& forward) {
  const std::vector<Marker> markers = step_markers(trace, index, forward);
  // Each marker's calls, and each run of calls between markers, a group.
  std::vector<StepGroup> groups;
  size_t m = 0;
  for (size_t i = 0; i < forward.size(); ++i) {
    const Call* c = forward[i];
    while (m < markers.size() && markers[m].end_ns <= c->cpu_ts_ns) ++m;
    const Marker* held = m < markers.size() && markers[m].ts_ns <= c->cpu_ts_ns ? &markers[m] : nullptr;
    const bool new_group = groups.empty() || groups.back().held != (held != nullptr) ||
                           (held && groups.back().marker.ts_ns != held->ts_ns);
    if (new_group) groups.push_back(group_of(held));
    groups.back().calls.push_back(i);
  }
  return groups;
}

}  // namespace attnprof
