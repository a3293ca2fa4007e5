// Which layer and which forward pass each call belongs to, and which backward call
// computes the gradient of which forward call.
//
//   step:   0-based index of the forward pass. ProfilerStep#N annotations split the trace
//           into passes; within one, a module that runs its attention a second time starts
//           a new pass (a generate() loop records one pass per token), or, without module
//           paths, regular runs of equal (Sq, Skv) do (see mark_shape_runs).
//   layer:  execution order of the forward calls within their pass (0 = first attention).
//   module: the nn.Module chain around the call (python_function events, with_stack=True).
//   pairs:  a backward call's autograd node carries the Sequence number of the forward op
//           it differentiates; without it, backward calls pair with forward calls of the
//           same pass in reverse order.
#include <algorithm>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <unordered_map>

#include "attnprof/attention.h"

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

void assign_forward_steps_and_layers(const TraceIndex& index, std::vector<Call>& calls) {
  std::vector<Call*> forward;
  for (Call& call : calls)
    if (call.direction == "forward") forward.push_back(&call);
  const std::set<std::string> collapsed = collapsed_modules(index, forward);
  // The path that identifies the call's layer, "" when none does.
  auto layer_module = [&](const Call* c) -> const std::string& {
    static const std::string kNone;
    return collapsed.count(c->module) ? kNone : c->module;
  };
  const bool have_modules =
      std::any_of(forward.begin(), forward.end(), [&](const Call* c) { return !layer_module(c).empty(); });
  std::vector<bool> starts_pass(forward.size(), false);
  std::set<std::string> modules_in_pass;
  size_t group_begin = 0;
  for (size_t i = 0; i < forward.size(); ++i) {
    const Call& call = *forward[i];
    const std::string& module = layer_module(&call);
    const bool new_profiler_step = i == 0 || step_at(index, call.cpu_ts_ns) != step_at(index, forward[i - 1]->cpu_ts_ns);
    const bool module_repeats = !module.empty() && modules_in_pass.count(module) > 0;
    if (new_profiler_step && i > 0 && !have_modules)
      mark_shape_runs(std::vector<Call*>(forward.begin() + static_cast<std::ptrdiff_t>(group_begin),
                                         forward.begin() + static_cast<std::ptrdiff_t>(i)),
                      starts_pass, group_begin);
    if (new_profiler_step) group_begin = i;
    if (new_profiler_step || module_repeats) {
      starts_pass[i] = true;
      modules_in_pass.clear();
    }
    if (!module.empty()) modules_in_pass.insert(module);
  }
  if (!have_modules && !forward.empty())
    mark_shape_runs(std::vector<Call*>(forward.begin() + static_cast<std::ptrdiff_t>(group_begin), forward.end()),
                    starts_pass, group_begin);
  int64_t pass = -1, layer = 0;
  for (size_t i = 0; i < forward.size(); ++i) {
    if (starts_pass[i]) {
      ++pass;
      layer = 0;
    }
    forward[i]->step = pass;
    forward[i]->layer = layer++;
  }
}

void pair_backward_calls(const TraceIndex& index, std::vector<Call>& calls) {
  std::unordered_map<int64_t, size_t> forward_by_sequence;
  for (size_t i = 0; i < calls.size(); ++i)
    if (calls[i].direction == "forward" && calls[i].sequence_number >= 0)
      forward_by_sequence.emplace(calls[i].sequence_number, i);
  std::vector<size_t> unpaired;
  for (size_t i = 0; i < calls.size(); ++i) {
    Call& bwd = calls[i];
    if (bwd.direction != "backward") continue;
    auto it = forward_by_sequence.find(bwd.sequence_number);
    if (bwd.sequence_number >= 0 && it != forward_by_sequence.end()) {
      Call& fwd = calls[it->second];
      fwd.pair_id = bwd.id;
      bwd.pair_id = fwd.id;
    } else {
      unpaired.push_back(i);
    }
  }
  // Reverse order: the k-th unpaired backward of a profiler step differentiates the k-th
  // last unpaired forward before it.
  std::map<int64_t, std::vector<size_t>> open_forward;  // profiler step -> forward calls
  for (size_t i = 0; i < calls.size(); ++i) {
    Call& c = calls[i];
    const int64_t ps = step_at(index, c.cpu_ts_ns);
    if (c.direction == "forward" && c.pair_id < 0) open_forward[ps].push_back(i);
    if (c.direction == "backward" && c.pair_id < 0 &&
        std::find(unpaired.begin(), unpaired.end(), i) != unpaired.end()) {
      auto& stack = open_forward[ps];
      if (stack.empty()) continue;
      Call& fwd = calls[stack.back()];
      stack.pop_back();
      fwd.pair_id = c.id;
      c.pair_id = fwd.id;
    }
  }
  for (Call& bwd : calls) {
    if (bwd.direction != "backward") continue;
    if (bwd.pair_id >= 0) {
      const Call& fwd = calls[static_cast<size_t>(bwd.pair_id)];
      bwd.layer = fwd.layer;
      bwd.step = fwd.step;
      bwd.module = fwd.module;
    }
  }
}

// A call is decode when its kernel is made for decode (the catalog's phase column: paged
// decode kernels, also in graph replays without shapes), else when it has one query token.
void assign_phases(std::vector<Call>& calls) {
  auto is_decode = [](const Call& c) { return c.phase.empty() ? c.decode : c.phase == "decode"; };
  const bool any_decode = std::any_of(calls.begin(), calls.end(), is_decode);
  const bool any_prefill = std::any_of(calls.begin(), calls.end(), [&](const Call& c) { return !is_decode(c); });
  // Phases only mean something in a generate loop / a serving trace with both.
  for (Call& c : calls) c.phase = !(any_decode && any_prefill) ? "" : is_decode(c) ? "decode" : "prefill";
}

}  // namespace

void attribute_layers(const Trace& /*trace*/, const TraceIndex& index, std::vector<Call>& calls) {
  assign_forward_steps_and_layers(index, calls);
  pair_backward_calls(index, calls);
  // Backward calls with no forward partner: number them in reverse order of execution.
  int64_t unpaired_layer = 0;
  for (auto it = calls.rbegin(); it != calls.rend(); ++it)
    if (it->direction == "backward" && it->pair_id < 0) it->layer = unpaired_layer++;
  assign_phases(calls);
}

const Call* first_call_of(const std::vector<Call>& calls, const Layer& layer) {
  if (layer.call_ids.empty()) return nullptr;
  const int64_t id = layer.call_ids.front();
  if (id < 0 || static_cast<size_t>(id) >= calls.size()) return nullptr;
  return &calls[static_cast<size_t>(id)];
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
    if (c.fused) fused_time[c.layer] += c.device_time_us;
  }
  std::vector<Layer> layers;
  for (auto& [index, layer] : by_index) {
    layer.fused_time_fraction = layer.device_time_us > 0 ? fused_time[index] / layer.device_time_us : 0;
    layer.device_time_unknown = !some_time_known[index];
    layers.push_back(std::move(layer));
  }
  return layers;
}

}  // namespace attnprof
