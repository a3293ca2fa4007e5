// Which layer and which forward pass each call belongs to, and which backward call
// computes the gradient of which forward call.
//
//   step:   0-based index of the forward pass. Engine step markers (engine_steps.cpp: vLLM's
//           step annotation, engine step functions, graph replays) mark one forward each;
//           a ProfilerStep#N, or the whole trace, is split further: a module that runs its
//           attention a second time starts a new pass (a generate() loop records one pass
//           per token), or, without module paths, regular runs of equal (Sq, Skv) do (see
//           mark_shape_runs), else the period of the call sequence (mark_period).
//   layer:  position of the forward call among its step's forward calls (0 = first
//           attention): the same position in every step is the same layer.
//   phase:  the step's marker says it (token counts, forward mode), else each call's kernel
//           or shape suggests it (phase_inferred).
//   module: the nn.Module chain around the call (python_function events, with_stack=True).
//   pairs:  a backward call's autograd node carries the Sequence number of the forward op
//           it differentiates; without it, backward calls pair with forward calls of the
//           same pass in reverse order.
#include <algorithm>
#include <climits>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <unordered_map>

#include "attnprof/attention.h"
#include "attnprof/vocabulary.h"
#include "extraction.h"

namespace attnprof {
namespace {

// Without module paths, a generate() loop shows as a run of forward calls whose (Sq, Skv)
// changes once per pass (prefill S x S, then 1 x S+1, 1 x S+2, ...). The runs are taken as
// passes only when they all have the same length L > 1 (L = number of attention layers);
// anything less regular (e.g. sliding-window layers alternating Skv during decode) keeps
// one pass.
void mark_shape_runs(const std::vector<Call*>& group, std::vector<bool>& starts_pass, size_t offset) {
  std::vector<size_t> run_starts{0};
  for (size_t i = 1; i < group.size(); ++i)
    if (group[i]->shape.Sq != group[i - 1]->shape.Sq || group[i]->shape.Skv != group[i - 1]->shape.Skv)
      run_starts.push_back(i);
  if (run_starts.size() < 2) return;
  const size_t length = run_starts[1];
  if (length < 2 || group.size() != length * run_starts.size()) return;
  for (size_t r = 0; r < run_starts.size(); ++r)
    if (run_starts[r] != r * length) return;
  for (const size_t start : run_starts) starts_pass[offset + start] = true;
}

// The calls' own identity, without what changes from step to step (key lengths grow in decode).
bool same_signature(const Call* a, const Call* b) {
  const auto main_kernel = [](const Call* c) {
    for (const KernelRef& k : c->kernels)
      if (k.component == component::kFused) return std::string_view(k.name);
    return std::string_view();
  };
  return a->op == b->op && a->backend == b->backend && a->library == b->library && a->shape.Hq == b->shape.Hq &&
         a->shape.D == b->shape.D && main_kernel(a) == main_kernel(b);
}

// Without a marker, module paths or shape runs, a run of engine steps shows as one sequence of
// calls repeated, with a longer pause at each step boundary (sampling, scheduling, the next
// batch) than between layers. The period is the smallest p (the group being k >= 2 periods of
// p >= 2 calls) whose call signatures repeat and whose every boundary gap exceeds twice the
// median gap inside the periods; a sequence that alternates layer kinds (p = 2 inside a step)
// has no longer pause at its "boundaries" and is not split.
void mark_period(const std::vector<Call*>& group, std::vector<bool>& starts) {
  const size_t n = group.size();
  if (n < 4) return;
  for (size_t p = 2; p <= n / 2; ++p) {
    if (n % p != 0) continue;
    bool periodic = true;
    for (size_t i = p; i < n && periodic; ++i) periodic = same_signature(group[i], group[i - p]);
    if (!periodic) continue;
    std::vector<int64_t> inside;
    int64_t shortest_boundary = INT64_MAX;
    for (size_t i = 0; i + 1 < n; ++i) {
      const int64_t gap = group[i + 1]->cpu_ts_ns - group[i]->cpu_ts_ns;
      if ((i + 1) % p == 0) shortest_boundary = std::min(shortest_boundary, gap);
      else inside.push_back(gap);
    }
    std::nth_element(inside.begin(), inside.begin() + static_cast<std::ptrdiff_t>(inside.size() / 2), inside.end());
    const int64_t median = inside[inside.size() / 2];
    if (shortest_boundary <= 2 * std::max<int64_t>(median, 0)) continue;
    for (size_t i = 0; i < n; i += p) starts[i] = true;
    return;
  }
}

// Module paths that do not tell layers apart: a path that two consecutive forward calls of
// one profiler step share. Compiled graphs (torch.compile's GraphModule, vLLM's piecewise
// graphs), graph replays launched from the model's top module, and one module instance run
// for several layers (weight sharing) all collapse every layer onto one path; such calls
// are numbered by execution order, as if no path were recorded.
std::set<std::string> collapsed_modules(const TraceIndex& index, const std::vector<Call*>& forward) {
  std::set<std::string> collapsed;
  for (size_t i = 1; i < forward.size(); ++i)
    if (!forward[i]->module.empty() && forward[i]->module == forward[i - 1]->module &&
        step_at(index, forward[i]->cpu_ts_ns) == step_at(index, forward[i - 1]->cpu_ts_ns))
      collapsed.insert(forward[i]->module);
  return collapsed;
}

// The starts of the forward passes within one group of calls that no engine marker splits
// (a ProfilerStep, or the whole trace): a module that runs its attention a second time starts
// a new pass (a generate() loop records one pass per token); without module paths, regular runs
// of equal (Sq, Skv) do, and failing those the period of the call sequence.
struct PassStarts {
  std::vector<bool> starts;
  std::string how;  // "modules", "shapes", "period"; "" when the group is one pass
};

size_t count_starts(const std::vector<bool>& starts) {
  return static_cast<size_t>(std::count(starts.begin(), starts.end(), true));
}

PassStarts pass_starts(const std::vector<Call*>& group, const std::set<std::string>& collapsed, bool have_modules) {
  std::vector<bool> starts(group.size(), false);
  if (group.empty()) return {starts, ""};
  starts[0] = true;
  std::set<std::string> modules_in_pass;
  for (size_t i = 0; i < group.size(); ++i) {
    const std::string& module = collapsed.count(group[i]->module) ? std::string() : group[i]->module;
    if (!module.empty() && modules_in_pass.count(module)) {
      starts[i] = true;
      modules_in_pass.clear();
    }
    if (!module.empty()) modules_in_pass.insert(module);
  }
  if (have_modules) return {starts, count_starts(starts) > 1 ? "modules" : ""};
  mark_shape_runs(group, starts, 0);
  if (count_starts(starts) > 1) return {starts, "shapes"};
  mark_period(group, starts);
  return {starts, count_starts(starts) > 1 ? "period" : ""};
}

struct Pass {
  std::vector<Call*> calls;
  const StepGroup* group = nullptr;
  std::string split_by;  // "" (the group is one pass), "modules", "shapes" or "period"
};

std::vector<Pass> forward_passes(const TraceIndex& index, const std::vector<Call*>& forward,
                                 const std::vector<StepGroup>& groups) {
  const std::set<std::string> collapsed = collapsed_modules(index, forward);
  const bool have_modules = std::any_of(forward.begin(), forward.end(), [&](const Call* c) {
    return !c->module.empty() && !collapsed.count(c->module);
  });
  std::vector<Pass> passes;
  for (const StepGroup& g : groups) {
    std::vector<Call*> calls;
    for (const size_t i : g.calls) calls.push_back(forward[i]);
    const bool one_forward = g.held && g.marker.kind != "profiler_step";
    if (one_forward) {
      passes.push_back({std::move(calls), &g, ""});
      continue;
    }
    const PassStarts split = pass_starts(calls, collapsed, have_modules);
    for (size_t i = 0; i < calls.size(); ++i) {
      if (split.starts[i]) passes.push_back({{}, &g, split.how});
      passes.back().calls.push_back(calls[i]);
    }
  }
  return passes;
}

// The phase a forward call's own facts suggest: its kernel's (the catalog's phase column: paged
// decode kernels, also in graph replays without shapes), else one query token per sequence.
std::string inferred_phase(const Call& c) {
  if (!c.phase.empty()) return c.phase;
  const Shape& s = c.shape;
  if (s.Sq == 1 || (s.tokens > 0 && s.B > 0 && s.tokens == s.B)) return phase::kDecode;
  // Packed tokens of an unknown number of sequences may be one prefill or many decodes.
  if (s.Sq > 1 || (s.tokens > s.B && s.B > 0)) return phase::kPrefill;
  return "";
}

std::string combined_phase(const std::set<std::string>& phases) {
  std::set<std::string> known;
  for (const std::string& p : phases)
    if (!p.empty()) known.insert(p);
  if (known.empty()) return "";
  if (known.size() == 1) return *known.begin();
  return phase::kMixed;
}

// Phases mean something in a serving or generate run only: engine markers, a decode call, packed
// (varlen/paged) calls or a kernel made for one phase. A training step or one forward has none.
bool run_has_phases(const std::vector<Pass>& passes) {
  for (const Pass& p : passes) {
    if (p.group && p.group->held && p.group->marker.kind != "profiler_step") return true;
    for (const Call* c : p.calls)
      if (!c->phase.empty() || c->shape.tokens > 0 || inferred_phase(*c) == phase::kDecode) return true;
  }
  return false;
}

Step step_of_pass(const Pass& pass, int64_t index) {
  Step step;
  step.index = index;
  const StepGroup* g = pass.group;
  if (g && g->held) {
    step.marker = g->marker.name;
    step.marker_kind = g->marker.kind;
    step.prefill_requests = g->marker.prefill_requests;
    step.prefill_tokens = g->marker.prefill_tokens;
    step.decode_requests = g->marker.decode_requests;
    step.decode_tokens = g->marker.decode_tokens;
    step.sum_sq_sk = g->marker.sum_sq_sk;
  } else {
    step.marker_kind = pass.split_by.empty() ? "trace" : "period";
  }
  if (!pass.split_by.empty()) step.marker += (step.marker.empty() ? "" : ", ") + ("forward split by " + pass.split_by);
  const bool marker_span = g && g->held && pass.split_by.empty();
  step.ts_ns = marker_span ? g->marker.ts_ns : pass.calls.front()->cpu_ts_ns;
  int64_t end = marker_span ? g->marker.end_ns : 0;
  for (const Call* c : pass.calls) end = std::max(end, c->cpu_ts_ns + c->cpu_dur_ns);
  step.dur_ns = end - step.ts_ns;
  return step;
}

// Where the engine's annotation gave no token counts, the step's attention op says how many query
// tokens each layer processed (a packed call's T, else B x Sq) when its Input Dims were recorded;
// a decode query is one token per request. A mixed step's split is not in the dims, so it stays
// unknown.
void tokens_from_input_dims(const Pass& pass, Step& step) {
  if (step.prefill_tokens >= 0 || step.decode_tokens >= 0) {
    step.tokens_from = "annotation";
    return;
  }
  if (step.phase != phase::kPrefill && step.phase != phase::kDecode) return;
  for (const Call* c : pass.calls) {
    const Shape& s = c->shape;
    const int64_t tokens = s.tokens > 0 ? s.tokens : s.B > 0 && s.Sq > 0 ? s.B * s.Sq : 0;
    if (tokens == 0) continue;
    const int64_t requests = step.phase == phase::kDecode && s.Sq == 1 ? tokens : s.B;
    (step.phase == phase::kDecode ? step.decode_tokens : step.prefill_tokens) = tokens;
    (step.phase == phase::kDecode ? step.decode_requests : step.prefill_requests) = requests > 0 ? requests : -1;
    step.tokens_from = "input_dims";
    return;
  }
}

// The phase of a pass's step and of each of its calls, which take their layers in call
// order: the engine's marker where one holds the pass, else inferred from the calls' shapes;
// none when the run has no phases.
void assign_pass_phases(const Pass& pass, bool phases, Step& step) {
  std::set<std::string> call_phases;
  for (const Call* c : pass.calls) call_phases.insert(inferred_phase(*c));
  const std::string& marked = pass.group && pass.group->held ? pass.group->marker.phase : std::string();
  step.phase = !phases ? "" : !marked.empty() ? marked : combined_phase(call_phases);
  step.phase_inferred = phases && marked.empty() && !step.phase.empty();
  int64_t layer = 0;
  for (Call* c : pass.calls) {
    c->step = step.index;
    c->layer = layer++;
    const std::string own = inferred_phase(*c);
    c->phase = !phases ? "" : !marked.empty() ? marked : !own.empty() ? own : step.phase;
    c->phase_inferred = phases && marked.empty() && !c->phase.empty();
  }
}

std::vector<Step> assign_forward_steps_and_layers(const Trace& trace, const TraceIndex& index, std::vector<Call>& calls) {
  std::vector<Call*> forward;
  for (Call& call : calls)
    if (call.direction == direction::kForward && !call.recompute) forward.push_back(&call);
  const std::vector<StepGroup> groups = engine_step_groups(trace, index, forward);
  const std::vector<Pass> passes = forward_passes(index, forward, groups);
  const bool phases = run_has_phases(passes);
  std::vector<Step> steps;
  for (const Pass& pass : passes) {
    Step step = step_of_pass(pass, static_cast<int64_t>(steps.size()));
    assign_pass_phases(pass, phases, step);
    tokens_from_input_dims(pass, step);
    steps.push_back(std::move(step));
  }
  return steps;
}

// A recompute (activation checkpointing) runs when the backward reaches its layer, last layer
// first: the k-th recompute of a profiler step recomputes the k-th last forward before it not
// yet recomputed; a module path, where recorded, picks that forward. The recompute takes the
// forward's layer. Non-reentrant checkpointing differentiates the original forward (the
// backward carries its Sequence number); reentrant checkpointing differentiates the recompute,
// and that backward is re-paired with the forward.
void match_recomputes(const TraceIndex& index, std::vector<Call>& calls) {
  std::map<int64_t, std::vector<size_t>> open;  // profiler step -> forwards awaiting a recompute
  for (size_t i = 0; i < calls.size(); ++i) {
    Call& c = calls[i];
    if (c.direction != direction::kForward) continue;
    std::vector<size_t>& stack = open[step_at(index, c.cpu_ts_ns)];
    if (!c.recompute) {
      stack.push_back(i);
      continue;
    }
    if (stack.empty()) continue;
    auto pick = std::prev(stack.end());
    if (!c.module.empty())
      for (auto it = stack.end(); it != stack.begin();)
        if (calls[*--it].module == c.module) {
          pick = it;
          break;
        }
    Call& fwd = calls[*pick];
    stack.erase(pick);
    const int64_t bwd = c.pair_id;
    c.layer = fwd.layer;
    c.step = fwd.step;
    c.phase = fwd.phase;
    if (c.module.empty()) c.module = fwd.module;
    c.pair_id = fwd.id;
    if (bwd >= 0 && fwd.pair_id < 0) {
      calls[static_cast<size_t>(bwd)].pair_id = fwd.id;
      fwd.pair_id = bwd;
    }
  }
}

namespace {

// Backward calls paired by the Sequence number autograd gave their forward; returns the
// backward calls it leaves unpaired.
std::vector<size_t> pair_by_sequence_number(std::vector<Call>& calls) {
  std::unordered_map<int64_t, size_t> forward_by_sequence;
  for (size_t i = 0; i < calls.size(); ++i)
    if (calls[i].direction == direction::kForward && calls[i].sequence_number >= 0)
      forward_by_sequence.emplace(calls[i].sequence_number, i);
  std::vector<size_t> unpaired;
  for (size_t i = 0; i < calls.size(); ++i) {
    Call& bwd = calls[i];
    if (bwd.direction != direction::kBackward) continue;
    auto it = forward_by_sequence.find(bwd.sequence_number);
    if (bwd.sequence_number >= 0 && it != forward_by_sequence.end()) {
      Call& fwd = calls[it->second];
      fwd.pair_id = bwd.id;
      bwd.pair_id = fwd.id;
    } else {
      unpaired.push_back(i);
    }
  }
  return unpaired;
}

// Reverse order: the k-th unpaired backward of a profiler step differentiates the k-th last
// unpaired forward before it.
void pair_in_reverse_order(const TraceIndex& index, const std::vector<size_t>& unpaired, std::vector<Call>& calls) {
  std::map<int64_t, std::vector<size_t>> open_forward;  // profiler step -> forward calls
  for (size_t i = 0; i < calls.size(); ++i) {
    Call& c = calls[i];
    const int64_t ps = step_at(index, c.cpu_ts_ns);
    if (c.direction == direction::kForward && !c.recompute && c.pair_id < 0) open_forward[ps].push_back(i);
    if (c.direction == direction::kBackward && c.pair_id < 0 &&
        std::find(unpaired.begin(), unpaired.end(), i) != unpaired.end()) {
      auto& stack = open_forward[ps];
      if (stack.empty()) continue;
      Call& fwd = calls[stack.back()];
      stack.pop_back();
      fwd.pair_id = c.id;
      c.pair_id = fwd.id;
    }
  }
}

}  // namespace

void pair_backward_calls(const TraceIndex& index, std::vector<Call>& calls) {
  std::vector<size_t> unpaired = pair_by_sequence_number(calls);
  match_recomputes(index, calls);
  std::erase_if(unpaired, [&](size_t i) { return calls[i].pair_id >= 0; });
  pair_in_reverse_order(index, unpaired, calls);
  for (Call& bwd : calls) {
    if (bwd.direction != direction::kBackward || bwd.pair_id < 0) continue;
    const Call& fwd = calls[static_cast<size_t>(bwd.pair_id)];
    bwd.layer = fwd.layer;
    bwd.step = fwd.step;
    bwd.module = fwd.module;
  }
}

}  // namespace

std::vector<Step> attribute_layers(const Trace& trace, const TraceIndex& index, std::vector<Call>& calls) {
  std::vector<Step> steps = assign_forward_steps_and_layers(trace, index, calls);
  pair_backward_calls(index, calls);
  // Backward calls with no forward partner: number them in reverse order of execution, in the
  // step that started last before them.
  int64_t unpaired_layer = 0;
  for (auto it = calls.rbegin(); it != calls.rend(); ++it) {
    if (it->direction != direction::kBackward || it->pair_id >= 0) continue;
    it->layer = unpaired_layer++;
    it->step = 0;
    for (const Step& s : steps)
      if (s.ts_ns <= it->cpu_ts_ns) it->step = s.index;
  }
  if (steps.empty() && !calls.empty()) {  // backward calls only
    Step only;
    only.marker_kind = "trace";
    only.ts_ns = calls.front().cpu_ts_ns;
    for (const Call& c : calls) only.dur_ns = std::max(only.dur_ns, c.cpu_ts_ns + c.cpu_dur_ns - only.ts_ns);
    steps.push_back(only);
  }
  for (const Call& c : calls) {
    Step& s = steps[static_cast<size_t>(std::clamp<int64_t>(c.step, 0, static_cast<int64_t>(steps.size()) - 1))];
    if (s.first_call_id < 0 || c.id < s.first_call_id) s.first_call_id = c.id;
    ++s.call_count;
  }
  return steps;
}

// A layer's calls and time per phase, when the run has more than one phase.
void add_layer_phases(const std::vector<Call>& calls, std::map<int64_t, Layer>& by_index) {
  std::set<std::string> phases;
  for (const Call& c : calls)
    if (!c.phase.empty()) phases.insert(c.phase);
  if (phases.size() < 2) return;
  for (const Call& c : calls) {
    if (c.layer < 0 || c.phase.empty()) continue;
    std::vector<LayerPhase>& rows = by_index[c.layer].phases;
    auto it = std::find_if(rows.begin(), rows.end(), [&](const LayerPhase& p) { return p.phase == c.phase; });
    if (it == rows.end()) it = rows.insert(rows.end(), LayerPhase{c.phase, 0, 0});
    ++it->calls;
    if (!c.device_time_unknown) it->device_time_us += c.device_time_us;
  }
}

std::vector<Layer> build_layers(const std::vector<Call>& calls) {
  std::map<int64_t, Layer> by_index;
  std::map<int64_t, double> fused_time;
  std::map<int64_t, bool> some_time_known;
  for (const Call& c : calls) {
    if (c.layer < 0) continue;
    Layer& layer = by_index[c.layer];
    layer.index = c.layer;
    some_time_known[c.layer] = some_time_known[c.layer] || !c.device_time_unknown;
    if (layer.module.empty()) layer.module = c.module;
    if (std::find(layer.backends.begin(), layer.backends.end(), c.backend) == layer.backends.end())
      layer.backends.push_back(c.backend);
    layer.call_ids.push_back(c.id);
    layer.device_time_us += c.device_time_us;
    if (c.recompute) layer.recompute_time_us += c.device_time_us;
    if (c.fused) fused_time[c.layer] += c.device_time_us;
  }
  add_layer_phases(calls, by_index);
  std::vector<Layer> layers;
  for (auto& [index, layer] : by_index) {
    layer.fused_time_fraction = layer.device_time_us > 0 ? fused_time[index] / layer.device_time_us : 0;
    layer.device_time_unknown = !some_time_known[index];
    layers.push_back(std::move(layer));
  }
  return layers;
}

}  // namespace attnprof
