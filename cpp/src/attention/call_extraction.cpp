// Attention calls from attention ops (SDPA and its backends, autograd nodes, library ops)
// and from fused attention kernels launched without one (Inductor, CUDA libraries).
#include <algorithm>
#include <climits>
#include <cstdint>
#include <iterator>
#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include "attnprof/attention.h"
#include "attnprof/vocabulary.h"
#include "extraction.h"
#include "op_args.h"

namespace attnprof {
namespace {

bool is_attention_overhead(KernelKind kind) {
  return kind == KernelKind::kKvCacheWrite || kind == KernelKind::kAttentionOverhead;
}

// Whether an op above `slice` starts the call instead. A layer op does not when another
// attention op is below it (call_tops); a standalone op counts only where it is kept as a
// call, so below one is still a call's own.
bool has_attention_ancestor(ExtractionContext& ctx, uint32_t slice, bool standalone = false) {
  for (uint32_t p = ctx.index.parent[slice]; p != kNoSlice; p = ctx.index.parent[p]) {
    const AttentionOp* op = ctx.names.attention_op(ctx.trace.slices[p]);
    if (!op || (op->role == OpRole::kStandalone && !standalone)) continue;
    if (op->role == OpRole::kLayer && !standalone) continue;
    return true;
  }
  return false;
}

// The ops that start a call: catalog ops under no other (a layer op with an attention op
// below it gives way to that op, kLayer), not yet inside a call. `standalone`: the kStandalone
// ops, asked for once the eager matcher has taken the ones inside its patterns.
std::vector<uint32_t> call_tops(ExtractionContext& ctx, bool standalone) {
  std::vector<uint32_t> tops;
  const auto role_of = [&](uint32_t s) {
    const AttentionOp* op = ctx.names.attention_op(ctx.trace.slices[s]);
    return op ? std::optional<OpRole>(op->role) : std::nullopt;
  };
  for (uint32_t i = 0; i < ctx.trace.slices.size(); ++i) {
    const std::optional<OpRole> role = role_of(i);
    if (!role || ctx.inside_call[i] || (*role == OpRole::kStandalone) != standalone) continue;
    if (has_attention_ancestor(ctx, i, standalone)) continue;
    if (*role == OpRole::kLayer) {
      bool inner = false;
      for_each_descendant(ctx.trace, ctx.index, i, [&](uint32_t d) {
        const std::optional<OpRole> r = role_of(d);
        inner = inner || (r && *r != OpRole::kLayer && *r != OpRole::kStandalone);
      });
      if (inner) continue;  // the attention op below is the call
    }
    tops.push_back(i);
  }
  return tops;
}

// torch.compile traces a frame by running its ops on fake tensors inside compile ranges;
// those ops are recorded but compute nothing. Claiming them up front keeps every finder
// (attention ops, eager patterns, unfused backward) off them.
void claim_compile_tracing(ExtractionContext& ctx) {
  std::vector<bool> phase_name(ctx.trace.strings.size());
  for (StrId id = 0; id < phase_name.size(); ++id) phase_name[id] = is_compile_phase(ctx.trace.strings.get(id));
  for (uint32_t i = 0; i < ctx.trace.slices.size(); ++i)
    if (phase_name[ctx.trace.slices[i].name] && !ctx.inside_call[i]) claim_ops(ctx, i);
}

// Packed sequences (varlen, paged): q [tokens, Hq, D]; k/v either packed the same way
// ([tokens, Hkv, D]) or a paged cache ([blocks, (block_size,) Hkv, D]). The batch comes from
// a [B+1] offsets tensor, the longest sequences from max_seqlen_q/k; one sequence alone is
// exact, several give only the maxima (docs/cost.md: FLOPs then are an upper bound).
// Tokens per block of a paged K cache, 0 when the layout does not say: vLLM's 5-D
// [blocks, Hkv, D/x, block_size, x], or a 4-D [blocks, block_size, Hkv, D] / [blocks, Hkv, block_size, D]
// whose other middle dim is the Hkv already found.
int64_t block_size_of(const TensorDims& k, int64_t kv_heads) {
  if (k.size() == 5) return k[3];
  if (k.size() == 4 && kv_heads > 0) return k[2] == kv_heads ? k[1] : k[1] == kv_heads ? k[2] : 0;
  return 0;
}

// The query of a packed op: [tokens, Hq, D], or a 2-D [Hq, D] next to a 3-D k [kv_len, Hkv, D]
// of the same head dim, one query token (FlashInfer's single decode; a 2-D [tokens, hidden] q
// has no such k). False for any other q.
bool fill_packed_query(const TensorDims& q, const TensorDims& k, Shape& shape) {
  if (q.size() == 2 && k.size() == 3 && q[1] == k[2] && k[1] > 0 && q[0] % k[1] == 0) {
    shape.tokens = 1;
    shape.Hq = q[0];
    shape.D = q[1];
    return true;
  }
  if (q.size() != 3) return false;
  shape.tokens = q[0];
  shape.Hq = q[1];
  shape.D = q[2];
  return true;
}

// Hkv (and Dv) of a packed or paged k/v.
void fill_packed_kv_heads(const TensorDims& k, const TensorDims& v, Shape& shape) {
  if (k.size() == 3 || k.size() == 4) shape.Hkv = k[k.size() - 2];
  // A 4-D cache is [blocks, block_size, Hkv, D] ("NHD") or [blocks, Hkv, block_size, D]
  // ("HND", a string argument the trace may not keep): Hq is a multiple of Hkv.
  if (k.size() == 4 && shape.Hq > 0 && k[2] > 0 && k[1] > 0 && shape.Hq % k[2] != 0 && shape.Hq % k[1] == 0)
    shape.Hkv = k[1];
  if (k.size() == 5) {  // vLLM: key [blocks, Hkv, D/x, block_size, x], value [blocks, Hkv, D, block_size]
    shape.Hkv = k[1];
    if (v.size() == 4) shape.Dv = v[2];
  }
}

// Skv as a ceiling: the block table's blocks per sequence times the cache's block size.
bool keys_from_block_table(const TensorDims& table, const TensorDims& k, Shape& shape) {
  if (table.size() != 2 || table[1] <= 0) return false;
  const int64_t block = block_size_of(k, shape.Hkv);
  if (block <= 0) return false;
  shape.Skv = table[1] * block;
  return true;
}

// B, Sq and Skv of a packed op from its offsets, lengths, max lengths or block table. Returns
// true when the longest key sequence was bounded from the block table (a ceiling: the last
// block of a sequence is partly filled).
bool fill_packed_lengths(const OpArgsView& args, const AttentionOp& op, const TensorDims& k, bool paged,
                         Shape& shape) {
  if (const auto& offsets = args.dims(op.offsets); offsets.size() == 1 && offsets[0] > 1) shape.B = offsets[0] - 1;
  if (const auto& lens = args.dims(op.seq_lens); lens.size() == 1 && lens[0] > 0) shape.B = lens[0];
  shape.Sq = static_cast<int64_t>(args.number(op.max_seqlen_q).value_or(0));
  shape.Skv = static_cast<int64_t>(args.number(op.max_seqlen_k).value_or(0));
  const bool bounded_by_blocks = shape.Skv == 0 && keys_from_block_table(args.dims(op.block_table), k, shape);
  // Every sequence has at least one query token: as many tokens as sequences is decode.
  if (shape.Sq == 0 && shape.B > 0 && shape.tokens == shape.B) shape.Sq = 1;
  if (shape.B == 1) {
    shape.Sq = shape.tokens;
    if (shape.Skv == 0 && !paged && k.size() == 3) shape.Skv = k[0];
  }
  return bounded_by_blocks;
}

// Returns true when the longest key sequence was bounded from the block table.
bool fill_packed_shape(const OpArgsView& args, const AttentionOp& op, Shape& shape) {
  const auto& k = args.dims(op.key);
  if (!fill_packed_query(args.dims(op.query), k, shape)) return false;
  const bool paged = op.layout == TensorLayout::kPaged || k.size() >= 4;
  fill_packed_kv_heads(k, args.dims(op.value), shape);
  if (paged) shape.kv_cache = k;
  return fill_packed_lengths(args, op, k, paged, shape);
}

void fill_bhsd_shape(const TensorDims& q, const TensorDims& k, Shape& shape) {
  if (q.size() >= 3) {
    shape.B = q.size() == 4 ? q[0] : 1;
    shape.Hq = q[q.size() - 3];
    shape.Sq = q[q.size() - 2];
    shape.D = q.back();
  }
  if (k.size() >= 3) {
    shape.Hkv = k[k.size() - 3];
    shape.Skv = k[k.size() - 2];
  }
}

void fill_bshd_shape(const TensorDims& q, const TensorDims& k, Shape& shape) {
  if (q.size() == 4) {
    shape.B = q[0];
    shape.Sq = q[1];
    shape.Hq = q[2];
    shape.D = q[3];
  }
  if (k.size() == 4) {
    shape.Skv = k[1];
    shape.Hkv = k[2];
  }
}

// [B, S, embedding] with the head count an argument; v carries the embedding, not the head dim.
void fill_bse_shape(const OpArgsView& args, const AttentionOp& op, Shape& shape) {
  const auto& q = args.dims(op.query);
  const auto& k = args.dims(op.key);
  const int64_t heads = static_cast<int64_t>(args.number(op.heads).value_or(0));
  if (q.size() == 3 && heads > 0) {
    shape.B = q[0];
    shape.Sq = q[1];
    shape.Hq = heads;
    shape.D = q[2] / heads;
  }
  if (k.size() == 3) shape.Skv = k[1];
  if (shape.D > 0) shape.Dv = shape.D;
}

// Reads B, H, S, D from the q/k/v dims according to the op's layout. Returns true when the
// key length is only a ceiling read from a block table.
bool fill_shape(const OpArgsView& args, const AttentionOp& op, Shape& shape) {
  bool bounded = false;
  const auto& q = args.dims(op.query);
  const auto& k = args.dims(op.key);
  const auto& v = args.dims(op.value);
  switch (op.layout) {
    case TensorLayout::kBHSD: fill_bhsd_shape(q, k, shape); break;
    case TensorLayout::kBSHD: fill_bshd_shape(q, k, shape); break;
    case TensorLayout::kTHD:
    case TensorLayout::kPaged: bounded = fill_packed_shape(args, op, shape); break;
    case TensorLayout::kBSE:
      fill_bse_shape(args, op, shape);
      shape.dtype = dtype_name(args.type(op.query));
      return false;
  }
  if (!v.empty() && shape.Dv == 0) shape.Dv = v.back();
  shape.dtype = dtype_name(args.type(op.query));
  return bounded;
}

void fill_from_args(const ExtractionContext& ctx, uint32_t slice, const AttentionOp& op, Call& call) {
  const OpArgsView args(ctx.trace, ctx.trace.slices[slice]);
  if (!args.recorded()) return;
  call.shape.skv_ceiling = fill_shape(args, op, call.shape);
  if (const auto& mask = args.dims(op.mask); !mask.empty()) {
    call.mask.present = true;
    call.mask.kind = args.type(op.mask) == "bool" ? "bool" : "float";
    call.mask.dims = mask;
  }
  call.causal = args.flag(op.causal);
  if (!call.mask.present) call.mask.kind = call.causal ? "causal_flag" : "none";
  call.dropout = args.number(op.dropout).value_or(0.0);
  call.scale = args.number(op.scale).value_or(0.0);
  call.gqa = args.flag(op.gqa);
}

int rank_for_args(OpRole role) {  // which op of a call describes it best
  switch (role) {
    case OpRole::kEntry: return 0;    // public signature, canonical BHSD layout
    case OpRole::kExternal: return 1;
    case OpRole::kBackend: return 2;
    case OpRole::kImpl: return 3;
    case OpRole::kAutogradNode: return 4;  // no tensor arguments worth reading
    case OpRole::kLayer: return 1;
    case OpRole::kStandalone: return 2;
  }
  return 5;
}

int rank_for_backend(OpRole role) {  // which op of a call names the backend
  switch (role) {
    case OpRole::kBackend: return 0;
    case OpRole::kImpl: return 1;
    case OpRole::kExternal: return 2;
    case OpRole::kAutogradNode: return 3;
    case OpRole::kEntry: return 4;  // decides nothing by itself
    case OpRole::kLayer: return 3;
    case OpRole::kStandalone: return 3;
  }
  return 5;
}

// Matmuls of an unfused attention op: the last one before the softmax computes Q K^T, the
// first one after it P V; any other is a projection (nn.MultiheadAttention's in/out proj).
void add_math_kernels(ExtractionContext& ctx, uint32_t math_op, Call& call) {
  std::vector<uint32_t> children;
  for_each_child(ctx.trace, ctx.index, math_op, [&](uint32_t c) {
    if (is_cpu_op(ctx.trace.slices[c])) children.push_back(c);
  });
  auto component_at = [&](size_t i) { return component_of_op(ctx.trace.name_of(ctx.trace.slices[children[i]])); };
  const size_t none = children.size();
  size_t softmax = none, qk = none, av = none;
  for (size_t i = 0; i < children.size() && softmax == none; ++i)
    if (component_at(i) == component::kSoftmax) softmax = i;
  for (size_t i = 0; i < softmax && i < children.size(); ++i)
    if (component_at(i) == kGemmComponent) qk = i;
  for (size_t i = softmax + 1; i < children.size() && av == none; ++i)
    if (component_at(i) == kGemmComponent) av = i;
  for (size_t i = 0; i < children.size(); ++i) {
    std::string_view component = component_at(i);
    if (component == kGemmComponent) component = i == qk ? component::kQK : i == av ? component::kAV : component::kOther;
    add_kernels_under(ctx, children[i], component, call);
    note_grad_sequences(ctx, children[i], call.cpu_ts_ns, component);
  }
  add_kernels_under(ctx, math_op, component::kOther, call);  // launched by the op itself
}

// The serving engine whose op launched a call's kernels, from the op's namespace; "" for
// PyTorch's own ops and other libraries.
std::string_view engine_of_op(std::string_view op) {
  struct Namespace {
    std::string_view prefix, engine;
  };
  // vLLM's custom-op namespaces (csrc/torch_bindings.cpp, csrc/rocm/torch_bindings.cpp, its
  // vllm-flash-attn builds) and SGLang's (sgl-kernel, its kernel-shape profiler).
  constexpr Namespace kNamespaces[] = {{"vllm::", "vllm"},          {"_C::", "vllm"},     {"_rocm_C::", "vllm"},
                                       {"_vllm_fa2_C::", "vllm"},   {"_vllm_fa3_C::", "vllm"}, {"sglang::", "sglang"},
                                       {"sglang_profiler::", "sglang"}, {"sgl_kernel::", "sglang"}};
  for (const Namespace& n : kNamespaces)
    if (op.starts_with(n.prefix)) return n.engine;
  return "";
}

// Triton attention kernels that serving engines share (vLLM's triton_decode_attention.py and
// prefix_prefill.py are copies of SGLang's kernels, same function names): the catalog names
// them by one engine; the engine whose op ran them decides.
std::string_view library_for_engine(std::string_view library, std::string_view engine) {
  constexpr std::pair<std::string_view, std::string_view> kEngineTriton[] = {{"vllm", "vllm_triton"},
                                                                             {"sglang", "sglang_triton"}};
  const bool shared = std::any_of(std::begin(kEngineTriton), std::end(kEngineTriton),
                                  [&](const auto& e) { return e.second == library; });
  if (!shared || engine.empty()) return library;
  for (const auto& [name, triton] : kEngineTriton)
    if (name == engine) return triton;
  return library;
}

// Whether autograd runs `slice` as part of a backward node ("autograd::engine::evaluate_function:
// XBackward", a custom autograd Function's backward included).
bool runs_in_backward(ExtractionContext& ctx, uint32_t slice) {
  for (uint32_t p = slice; p != kNoSlice; p = ctx.index.parent[p])
    if (ctx.trace.name_of(ctx.trace.slices[p]).starts_with(kAutogradNodePrefix)) return true;
  return false;
}

// The kernels under a call's op: its main attention kernel (a fused one, a non-auxiliary one
// preferred) and whether any can compute attention (fused, or a matmul/softmax).
struct SubtreeKernels {
  const KernelPattern* main = nullptr;
  bool computes_attention = false;
};

SubtreeKernels subtree_kernels(ExtractionContext& ctx, uint32_t top) {
  SubtreeKernels found;
  std::vector<uint32_t> gpu;
  collect_subtree_gpu(ctx.trace, ctx.index, top, gpu);
  for (const uint32_t g : gpu) {
    const KernelPattern* p = ctx.names.kernel(ctx.trace.slices[g]);
    if (!p) continue;
    if (p->kind == KernelKind::kFusedAttention && (!found.main || found.main->auxiliary())) found.main = p;
    found.computes_attention = found.computes_attention || p->kind == KernelKind::kFusedAttention ||
                               p->kind == KernelKind::kGemm || p->kind == KernelKind::kSoftmax;
  }
  return found;
}

using CallOps = std::vector<std::pair<uint32_t, const AttentionOp*>>;  // slice, its catalog entry

// The call's library: its main kernel's, else the first of its ops' that names one, as the
// serving engine spells it; aten for math and aten_cpu for CPU flash when none does.
std::string call_library(const Call& call, const CallOps& ops, bool math) {
  std::string library = call.library;
  for (const auto& [slice, op] : ops)
    if (library.empty() && !op->library.empty()) library = std::string(op->library);
  library = std::string(library_for_engine(library, engine_of_op(call.op)));
  if (library.empty() && math) return "aten";
  if (library.empty() && call.backend == backend::kCpuFlash) return "aten_cpu";
  return library;
}

Call call_from_op(ExtractionContext& ctx, uint32_t top) {
  const Trace& trace = ctx.trace;
  Call call;
  const Slice& top_slice = trace.slices[top];
  call.op = std::string(trace.name_of(top_slice));
  call.module = module_path(trace, ctx.index, top);
  call.cpu_ts_ns = top_slice.ts_ns;
  call.cpu_dur_ns = top_slice.dur_ns;

  // The ops of the call: the top one and the attention ops below it.
  CallOps ops{{top, ctx.names.attention_op(top_slice)}};
  for_each_descendant(ctx.trace, ctx.index, top, [&](uint32_t s) {
    if (const AttentionOp* op = ctx.names.attention_op(trace.slices[s])) ops.emplace_back(s, op);
  });
  auto best = [&](auto rank) {
    return *std::min_element(ops.begin(), ops.end(), [&](const auto& a, const auto& b) {
      return rank(a.second->role) < rank(b.second->role);
    });
  };
  const auto [args_slice, args_op] = best(rank_for_args);
  const auto [backend_slice, backend_op] = best(rank_for_backend);
  call.direction = std::string(backend_op->direction);
  call.recompute = call.direction == "forward" && runs_in_backward(ctx, top);
  call.backend = std::string(backend_op->backend);
  if (backend_op->role == OpRole::kBackend || backend_op->role == OpRole::kImpl)
    call.backend_op = std::string(trace.name_of(trace.slices[backend_slice]));
  // Autograd nodes carry no arguments: read them from the backend op below.
  if (args_op->role == OpRole::kAutogradNode) fill_from_args(ctx, backend_slice, *backend_op, call);
  else fill_from_args(ctx, args_slice, *args_op, call);

  const bool math = call.backend == backend::kMath;
  if (math) add_math_kernels(ctx, backend_slice, call);
  add_kernels_under(ctx, top, math ? component::kOther : component::kFused, call);
  claim_ops(ctx, top);

  const auto [main_kernel, computes_attention] = subtree_kernels(ctx, top);
  if (main_kernel) {
    call.library = std::string(main_kernel->library);
    if (call.backend.empty()) call.backend = std::string(main_kernel->backend);
    call.phase = std::string(main_kernel->phase);  // packed tokens (THD) do not show decode by shape
  }
  // On a GPU trace, an op whose attention kernels were not recorded (traced during a graph
  // capture, or run where the profiler did not see them) has an unknown device time.
  call.device_time_unknown = ctx.has_gpu && !computes_attention;
  call.fused = ctx.has_gpu && !call.device_time_unknown ? main_kernel != nullptr : backend_op->fused;
  if (call.backend.empty()) call.backend = backend::kExternal;  // entry op without a recorded backend
  call.library = call_library(call, ops, math);
  call.sequence_number = OpArgsView(trace, top_slice).sequence_number();
  return call;
}


// The autograd Sequence number of the innermost op around `slice` that has one: a custom
// Function's forward op and its backward node carry the same number, which pairs them.
int64_t enclosing_sequence_number(ExtractionContext& ctx, uint32_t slice) {
  for (uint32_t p = slice; p != kNoSlice; p = ctx.index.parent[p]) {
    const Slice& s = ctx.trace.slices[p];
    if (!is_cpu_op(s)) continue;
    if (const OpArgs* args = ctx.trace.op_args_of(s); args && args->sequence_number >= 0) return args->sequence_number;
  }
  return -1;
}

// A kernel replayed by cudaGraphLaunch / hipGraphLaunch / cuGraphLaunch.
bool is_graph_replay(ExtractionContext& ctx, uint32_t gpu_slice) {
  const uint32_t launch = ctx.index.launch_of(gpu_slice);
  return launch != kNoSlice && ctx.names.graph_launch(ctx.trace.slices[launch]);
}

// Whether `op` launched the attention kernels of one call only (a library op, a Triton
// launch op), not those of several (a graph launch, a compiled region): then the call takes
// every kernel below the op, else each main kernel is a call of its own.
class SingleCallOps {
 public:
  explicit SingleCallOps(ExtractionContext& ctx) : ctx_(ctx) {}
  bool operator()(uint32_t op) {
    auto [it, inserted] = single_.try_emplace(op, true);
    if (!inserted) return it->second;
    std::vector<uint32_t> gpu;
    collect_subtree_gpu(ctx_.trace, ctx_.index, op, gpu);
    int mains = 0;
    for (const uint32_t g : gpu) {
      const KernelPattern* p = ctx_.names.kernel(ctx_.trace.slices[g]);
      mains += p && p->kind == KernelKind::kFusedAttention && !p->auxiliary();
    }
    return it->second = mains <= 1;
  }

 private:
  ExtractionContext& ctx_;
  std::unordered_map<uint32_t, bool> single_;
};

// Adds one helper kernel (and, when its op launched nothing else of another call, the op)
// to a kernel-only call.
void add_helper_kernel(ExtractionContext& ctx, SingleCallOps& single, uint32_t g, Call& call) {
  const uint32_t op = ctx.index.op_of(g);
  if (op != kNoSlice && single(op)) {
    add_kernels_under(ctx, op, component::kFused, call);
    claim_ops(ctx, op);
  } else if (!ctx.claimed_gpu[g]) {
    call.kernels.push_back(kernel_ref_of(ctx.trace, ctx.trace.slices[g], component::kFused));
    ctx.claimed_gpu[g] = true;
  }
}

Call kernel_only_call(ExtractionContext& ctx, SingleCallOps& single, uint32_t g, const KernelPattern& p) {
  const Trace& trace = ctx.trace;
  Call call;
  call.backend = std::string(p.backend);
  call.library = std::string(p.library);
  call.direction = std::string(p.direction.empty() ? "forward" : p.direction);
  call.phase = std::string(p.phase);
  call.fused = true;
  const uint32_t op = ctx.index.op_of(g);
  const uint32_t launch = ctx.index.launch_of(g);
  // The op is the call's own when it launched this call only; a region around a graph
  // launch is not: then the launch places the call in time.
  const bool own_op = op != kNoSlice && single(op);
  const uint32_t cpu = own_op || launch == kNoSlice ? op : launch;
  call.op = own_op ? std::string(trace.name_of(trace.slices[op])) : std::string();
  call.module = module_path(trace, ctx.index, cpu);
  call.cpu_ts_ns = trace.slices[cpu].ts_ns;
  call.cpu_dur_ns = trace.slices[cpu].dur_ns;
  // Under an autograd node, a kernel the catalog knows as a forward one is a recompute
  // (activation checkpointing); one of no stated direction is the node's backward.
  if (runs_in_backward(ctx, cpu)) {
    if (p.direction == "forward") call.recompute = true;
    else call.direction = "backward";
  }
  call.sequence_number = enclosing_sequence_number(ctx, cpu);
  if (own_op) {
    // The op may fuse more than attention (a custom op with norms, RoPE, casts around the
    // kernel): its other kernels are listed, not counted as attention.
    add_kernels_under(ctx, op, component::kNonAttention, call);
    claim_ops(ctx, op);
  } else {
    // A graph replay (all kernels under one cudaGraphLaunch/hipGraphLaunch) or a region
    // running many calls: the kernel alone.
    call.kernels.push_back(kernel_ref_of(trace, trace.slices[g], component::kFused));
    ctx.claimed_gpu[g] = true;
  }
  return call;
}

// Fused attention kernels that no attention op launched (Inductor templates, Triton
// kernels launched by a Triton launch op, graph replays, library calls without a recorded
// op). Kernels run in device order; a call is its main kernel, the helpers before it
// (KernelPart::kBefore: Q/K quantisation) and the helpers of the same library after it
// (kAfter: split-KV reduce). Kernels with no CPU launch at all (started before the
// profiling window) are not calls: their arguments and layer are unknowable.
std::vector<size_t> add_kernel_only_calls(ExtractionContext& ctx, std::vector<Call>& calls) {
  const Trace& trace = ctx.trace;
  std::vector<size_t> replays;     // calls whose main kernel a graph launch replayed
  SingleCallOps single(ctx);
  size_t open = SIZE_MAX;          // the last kernel-only call, for its kAfter helpers
  std::vector<uint32_t> before;    // kBefore helpers waiting for their main kernel
  for (const uint32_t g : ctx.index.gpu_slices) {
    if (ctx.claimed_gpu[g]) continue;
    const KernelPattern* p = ctx.names.kernel(trace.slices[g]);
    if (!p || p->kind != KernelKind::kFusedAttention) continue;
    const bool launched = ctx.index.launch_of(g) != kNoSlice || ctx.index.op_of(g) != kNoSlice;
    if (!launched) continue;
    if (p->part == KernelPart::kBefore) {
      before.push_back(g);
      continue;
    }
    if (p->part == KernelPart::kAfter && open != SIZE_MAX && calls[open].library == p->library) {
      add_helper_kernel(ctx, single, g, calls[open]);
      continue;
    }
    Call call = kernel_only_call(ctx, single, g, *p);
    for (const uint32_t h : before) {
      const uint32_t cpu = ctx.index.op_of(h) != kNoSlice ? ctx.index.op_of(h) : ctx.index.launch_of(h);
      call.cpu_ts_ns = std::min(call.cpu_ts_ns, trace.slices[cpu].ts_ns);
      add_helper_kernel(ctx, single, h, call);
    }
    before.clear();
    calls.push_back(std::move(call));
    open = calls.size() - 1;
    if (is_graph_replay(ctx, g)) replays.push_back(open);
  }
  return replays;
}

// A graph capture records a call's ops (its kernels go into the graph, not run: device time
// unknown) and a later cudaGraphLaunch/hipGraphLaunch replays the kernels with no op around
// them. When both are in the trace, the k-th replayed call is the k-th captured call that
// started before it: the captured call takes the replay's kernels (it keeps the op, module
// and shape the capture recorded) and the replay is dropped, so each call counts once.
void adopt_graph_replays(std::vector<Call>& calls, const std::vector<size_t>& replays) {
  std::vector<size_t> captured;
  for (size_t i = 0; i < calls.size(); ++i)
    if (calls[i].device_time_unknown && !calls[i].op.empty()) captured.push_back(i);
  std::stable_sort(captured.begin(), captured.end(),
                   [&](size_t a, size_t b) { return calls[a].cpu_ts_ns < calls[b].cpu_ts_ns; });
  std::vector<bool> dropped(calls.size(), false);
  size_t next = 0;
  for (const size_t r : replays) {
    if (next == captured.size()) break;
    if (calls[captured[next]].cpu_ts_ns > calls[r].cpu_ts_ns) continue;  // replay of a graph captured before the trace
    Call& call = calls[captured[next++]];
    call.kernels = std::move(calls[r].kernels);
    call.library = calls[r].library;
    if (call.backend.empty()) call.backend = calls[r].backend;
    if (!calls[r].phase.empty()) call.phase = calls[r].phase;
    call.fused = calls[r].fused;
    call.device_time_unknown = false;
    dropped[r] = true;
  }
  if (std::find(dropped.begin(), dropped.end(), true) == dropped.end()) return;
  std::vector<Call> kept;
  kept.reserve(calls.size());
  for (size_t i = 0; i < calls.size(); ++i)
    if (!dropped[i]) kept.push_back(std::move(calls[i]));
  calls = std::move(kept);
}

// Ops whose names carry attention vocabulary but which no catalog knows (a library's own
// attention op, a profiler's range around one): a call with library "unknown", unless the
// work below or around them is already part of a call.
void add_unrecognised_op_calls(ExtractionContext& ctx, std::vector<Call>& calls) {
  const Trace& trace = ctx.trace;
  for (uint32_t i = 0; i < trace.slices.size(); ++i) {
    const Slice& s = trace.slices[i];
    if (!is_cpu_op(s) || ctx.inside_call[i] || !ctx.names.unrecognised_attention_op(s)) continue;
    bool around_call = false;
    for (uint32_t a = ctx.index.parent[i]; a != kNoSlice && !around_call; a = ctx.index.parent[a])
      around_call = ctx.inside_call[a];
    std::vector<uint32_t> gpu;
    collect_subtree_gpu(trace, ctx.index, i, gpu);
    for (const uint32_t g : gpu) around_call = around_call || ctx.claimed_gpu[g];
    for_each_descendant(ctx.trace, ctx.index, i, [&](uint32_t d) { around_call = around_call || ctx.inside_call[d]; });
    if (around_call) continue;
    Call call;
    call.backend = backend::kExternal;
    call.library = std::string(unrecognised_attention_kernel().library);
    call.direction = "forward";
    call.op = std::string(trace.name_of(s));
    call.module = module_path(trace, ctx.index, i);
    call.cpu_ts_ns = s.ts_ns;
    call.cpu_dur_ns = s.dur_ns;
    add_kernels_under(ctx, i, component::kFused, call);
    claim_ops(ctx, i);
    // Which of its kernels computes attention is unknown; with none recorded, so is its time.
    call.device_time_unknown = ctx.has_gpu && call.kernels.empty();
    call.fused = true;
    calls.push_back(std::move(call));
  }
}

// The CPU time GPU work was launched at: its launch call, else its op; -1 when neither.
int64_t launch_ts(ExtractionContext& ctx, uint32_t g) {
  const uint32_t launch = ctx.index.launch_of(g);
  if (launch != kNoSlice) return ctx.trace.slices[launch].ts_ns;
  const uint32_t op = ctx.index.op_of(g);
  return op != kNoSlice ? ctx.trace.slices[op].ts_ns : -1;
}

// Attention overhead launched outside every call (scheduler metadata and KV-index building
// ahead of a layer's attention, KV-cache writes): part of the next call, the one it serves, in
// device order (graph replays launch a whole forward at one CPU time), else in launch order;
// after the last call, of the last. Never a call of its own.
void attach_overhead(ExtractionContext& ctx, std::vector<Call>& calls) {
  if (calls.empty()) return;
  auto first_kernel_ts = [](const Call& c) {
    int64_t ts = INT64_MAX;
    for (const KernelRef& k : c.kernels)
      if (k.component == component::kFused) ts = std::min(ts, k.ts_ns);
    return ts;
  };
  std::vector<std::pair<int64_t, size_t>> by_device, by_cpu;
  for (size_t i = 0; i < calls.size(); ++i) {
    by_cpu.push_back({calls[i].cpu_ts_ns, i});
    if (const int64_t ts = first_kernel_ts(calls[i]); ts != INT64_MAX) by_device.push_back({ts, i});
  }
  std::sort(by_device.begin(), by_device.end());
  std::sort(by_cpu.begin(), by_cpu.end());
  for (const uint32_t g : ctx.index.gpu_slices) {
    if (ctx.claimed_gpu[g]) continue;
    const KernelPattern* p = ctx.names.kernel(ctx.trace.slices[g]);
    if (!p || !is_attention_overhead(p->kind)) continue;
    const bool device_order = !by_device.empty();
    const int64_t ts = device_order ? ctx.trace.slices[g].ts_ns : launch_ts(ctx, g);
    if (ts < 0) continue;
    const auto& order = device_order ? by_device : by_cpu;
    auto it = std::lower_bound(order.begin(), order.end(), std::pair<int64_t, size_t>{ts, 0});
    const size_t served = it == order.end() ? order.back().second : it->second;
    calls[served].kernels.push_back(kernel_ref_of(ctx.trace, ctx.trace.slices[g], component::kOverhead));
    ctx.claimed_gpu[g] = true;
  }
}

// Whether the thread of CPU slice `slice` launched GPU work between `from` and `to`.
bool launches_between(ExtractionContext& ctx, uint32_t slice, int64_t from, int64_t to) {
  const TraceIndex::Range range = ctx.index.thread_order[ctx.trace.slices[slice].thread];
  auto begin = ctx.index.cpu_order.begin() + range.begin, end = ctx.index.cpu_order.begin() + range.end;
  auto it = std::lower_bound(begin, end, from, [&](uint32_t s, int64_t t) { return ctx.trace.slices[s].ts_ns < t; });
  for (; it != end && ctx.trace.slices[*it].ts_ns <= to; ++it)
    if (is_launch_call(ctx.trace.slices[*it].cat)) return true;
  return false;
}

// A call of a GPU trace whose ops launched no GPU work at all ran on the CPU (an engine's eager
// attention on the host, a CPU fallback): its time is its CPU time, not unknown and not 0.
void mark_cpu_calls(ExtractionContext& ctx, std::vector<Call>& calls) {
  if (!ctx.has_gpu) return;
  std::unordered_map<int64_t, uint32_t> op_at;  // CPU start of a call without kernels -> its first op
  for (const Call& c : calls)
    if (c.kernels.empty()) op_at.emplace(c.cpu_ts_ns, kNoSlice);
  if (op_at.empty()) return;
  for (uint32_t i = 0; i < ctx.trace.slices.size(); ++i) {
    const Slice& s = ctx.trace.slices[i];
    if (!is_cpu_op(s)) continue;
    auto it = op_at.find(s.ts_ns);
    if (it != op_at.end() && it->second == kNoSlice) it->second = i;
  }
  for (Call& c : calls) {
    if (!c.kernels.empty()) continue;
    const uint32_t op = op_at[c.cpu_ts_ns];
    if (op == kNoSlice || launches_between(ctx, op, c.cpu_ts_ns, c.cpu_ts_ns + c.cpu_dur_ns)) continue;
    c.device = "cpu";
    c.device_time_unknown = false;
  }
}

// The component a kernel launched under an op of `op_component` belongs to: a matmul op
// also launches copies and memsets (layout changes), a softmax op a cast; those are "other".
std::string_view kernel_component(const KernelPattern* p, std::string_view op_component) {
  const KernelKind kind = p ? p->kind : KernelKind::kOther;
  if (kind == KernelKind::kFusedAttention) return component::kFused;
  if (is_attention_overhead(kind)) return component::kOverhead;
  if (op_component == component::kQK || op_component == component::kAV)
    return kind == KernelKind::kGemm ? op_component : component::kOther;
  if (op_component == component::kSoftmax) return kind == KernelKind::kSoftmax ? op_component : component::kOther;
  if (op_component == component::kFused) return component::kOther;  // memsets, copies around a fused kernel
  return op_component;  // component::kNonAttention included
}

}  // namespace

const NameClasses::Entry& NameClasses::answer(StrId name, Question question) {
  Entry& e = name < entries_.size() ? entries_[name] : (outside_ = Entry{});
  if (e.answered & question) return e;
  const std::string_view text = trace_.strings.get(name);
  switch (question) {
    case kKernel: e.kernel = classify_kernel(text, extension_); break;
    case kOp: e.op = classify_attention_op(text, extension_); break;
    case kUnrecognisedOp: e.unrecognised_op = is_unrecognised_attention_op(text, extension_); break;
    case kGraphLaunch: e.graph_launch = runtime_call_role(text) == RuntimeCallRole::kGraphLaunch; break;
  }
  e.answered |= question;
  return e;
}

const KernelPattern* NameClasses::kernel(const Slice& s) { return answer(s.name, kKernel).kernel; }
const AttentionOp* NameClasses::attention_op(const Slice& s) { return is_cpu_op(s) ? answer(s.name, kOp).op : nullptr; }
bool NameClasses::unrecognised_attention_op(const Slice& s) { return answer(s.name, kUnrecognisedOp).unrecognised_op; }
bool NameClasses::graph_launch(const Slice& s) { return answer(s.name, kGraphLaunch).graph_launch; }

ExtractionContext::ExtractionContext(const Trace& t, const TraceIndex& i, const CatalogExtension* extension)
    : trace(t), index(i), has_gpu(!i.gpu_slices.empty()), claimed_gpu(t.slices.size(), false),
      inside_call(t.slices.size(), false), names(t, extension) {}

void note_grad_sequences(ExtractionContext& ctx, uint32_t op, int64_t call_ts, std::string_view component) {
  auto note = [&](uint32_t s) {
    if (!is_cpu_op(ctx.trace.slices[s])) return;
    const OpArgs* args = ctx.trace.op_args_of(ctx.trace.slices[s]);
    if (args && args->sequence_number >= 0) ctx.grad_owner[args->sequence_number] = {call_ts, std::string(component)};
  };
  note(op);
  for_each_descendant(ctx.trace, ctx.index, op, note);
}

namespace {

// An autograd node of an unfused forward call's backward, and the component it computes.
struct BackwardNode {
  uint32_t slice;
  std::string component;
  int64_t sequence;
};

// The autograd nodes outside any call, by the unfused forward call whose gradient they compute
// (ctx.grad_owner: their sequence number's forward op).
std::map<size_t, std::vector<BackwardNode>> backward_nodes(const ExtractionContext& ctx, const std::vector<Call>& calls) {
  const Trace& trace = ctx.trace;
  std::unordered_map<int64_t, size_t> forward_at;  // CPU start -> forward call
  for (size_t i = 0; i < calls.size(); ++i)
    if (!calls[i].fused && calls[i].direction == "forward") forward_at.emplace(calls[i].cpu_ts_ns, i);
  std::map<size_t, std::vector<BackwardNode>> nodes_of;
  for (uint32_t i = 0; i < trace.slices.size(); ++i) {
    const Slice& s = trace.slices[i];
    if (!is_cpu_op(s) || ctx.inside_call[i] || !trace.name_of(s).starts_with(kAutogradNodePrefix)) continue;
    const OpArgs* args = trace.op_args_of(s);
    if (!args || args->sequence_number < 0) continue;
    auto owner = ctx.grad_owner.find(args->sequence_number);
    if (owner == ctx.grad_owner.end()) continue;
    auto fwd = forward_at.find(owner->second.first);
    if (fwd == forward_at.end()) continue;
    nodes_of[fwd->second].push_back({i, owner->second.second, args->sequence_number});
  }
  return nodes_of;
}

// The backward call of `fwd` (its facts copied, its own op and sequence number).
Call backward_call_of(const Call& fwd, std::string op, int64_t sequence) {
  Call bwd;
  bwd.direction = "backward";
  bwd.backend = fwd.backend;
  bwd.library = fwd.library;
  bwd.fused = false;
  bwd.sequence_number = sequence;
  bwd.shape = fwd.shape;
  bwd.mask = fwd.mask;
  bwd.causal = fwd.causal;
  bwd.dropout = fwd.dropout;
  bwd.scale = fwd.scale;
  bwd.gqa = fwd.gqa;
  bwd.op = std::move(op);
  return bwd;
}

}  // namespace

void add_unfused_backward_calls(ExtractionContext& ctx, std::vector<Call>& calls) {
  if (ctx.grad_owner.empty()) return;
  const Trace& trace = ctx.trace;
  for (auto& [index, nodes] : backward_nodes(ctx, calls)) {
    auto softmax = std::find_if(nodes.begin(), nodes.end(),
                                [](const BackwardNode& n) { return n.component == component::kSoftmax; });
    if (softmax == nodes.end()) continue;  // not the gradient of this attention
    Call& fwd = calls[index];
    fwd.sequence_number = softmax->sequence;
    Call bwd = backward_call_of(
        fwd, std::string(trace.name_of(trace.slices[softmax->slice]).substr(kAutogradNodePrefix.size())),
        softmax->sequence);
    // Autograd interleaves other nodes with these: the call's CPU time is the sum of its own.
    bwd.cpu_ts_ns = INT64_MAX;
    for (const BackwardNode& n : nodes) {
      const Slice& s = trace.slices[n.slice];
      bwd.cpu_ts_ns = std::min(bwd.cpu_ts_ns, s.ts_ns);
      bwd.cpu_dur_ns += s.dur_ns;
      add_kernels_under(ctx, n.slice, n.component, bwd);
      claim_ops(ctx, n.slice);
    }
    calls.push_back(std::move(bwd));
  }
}

void claim_ops(ExtractionContext& ctx, uint32_t op) {
  ctx.inside_call[op] = true;
  for_each_descendant(ctx.trace, ctx.index, op, [&](uint32_t s) { ctx.inside_call[s] = true; });
}

void add_kernels_under(ExtractionContext& ctx, uint32_t op, std::string_view component, Call& call) {
  const Trace& trace = ctx.trace;
  std::vector<uint32_t> gpu;
  if (is_cpu_op(trace.slices[op])) {
    for (const uint32_t g : ctx.index.gpu_of(op)) gpu.push_back(g);
  }
  // Children's kernels are added with their own component by the caller when it cares;
  // everything not yet claimed below `op` gets `component`.
  for_each_descendant(ctx.trace, ctx.index, op, [&](uint32_t s) {
    if (!is_cpu_op(trace.slices[s])) return;
    for (const uint32_t g : ctx.index.gpu_of(s)) gpu.push_back(g);
  });
  for (const uint32_t g : gpu) {
    if (ctx.claimed_gpu[g]) continue;
    ctx.claimed_gpu[g] = true;
    const Slice& k = trace.slices[g];
    call.kernels.push_back(kernel_ref_of(trace, k, std::string(kernel_component(ctx.names.kernel(k), component))));
  }
}

namespace {

// The call's kernels in time order and its times: attention (device), overhead and other
// components, and the attention kernels' own (kernel) time.
void sum_call_times(Call& call, bool trace_has_gpu) {
  std::sort(call.kernels.begin(), call.kernels.end(),
            [](const KernelRef& a, const KernelRef& b) { return a.ts_ns < b.ts_ns; });
  call.device_time_us = 0;
  call.overhead_time_us = 0;
  call.other_time_us = 0;
  for (const KernelRef& k : call.kernels) {
    if (k.component == component::kOverhead) call.overhead_time_us += k.device_time_us;
    else if (k.component != component::kNonAttention) call.device_time_us += k.device_time_us;
    if (k.component == component::kOther) call.other_time_us += k.device_time_us;
  }
  // CPU-only traces, and work that ran on the CPU in a GPU trace: the op's own CPU time is the
  // time attention took.
  if (!trace_has_gpu) call.device = "cpu";
  if (call.device == "cpu") call.device_time_us = static_cast<double>(call.cpu_dur_ns) / 1000.0;
  if (call.device_time_unknown) call.device_time_us = 0;  // the kernels that ran were not attention
  if (call.device != "gpu" || call.device_time_unknown) call.other_time_us = 0;
  call.kernel_time_us = call.device_time_us - call.other_time_us;
}

}  // namespace

void finish_call(Call& call, bool trace_has_gpu, KernelTemplates* templates, const CatalogExtension* extension) {
  sum_call_times(call, trace_has_gpu);
  apply_kernel_template(call, templates, extension);  // head dim, dtype a templated kernel name spells, where the trace lacks them
  Shape& s = call.shape;
  if (s.Hkv == 0) s.Hkv = s.Hq;
  if (s.Dv == 0) s.Dv = s.D;
  call.gqa = call.gqa || (s.Hkv > 0 && s.Hkv < s.Hq);
  call.decode = s.Sq == 1;
  call.cross = s.tokens == 0 && !call.decode && s.Sq > 0 && s.Skv > 0 && s.Sq != s.Skv;
  refresh_call_flops(call);
}

std::vector<std::string> missing_shape_facts(const Call& call) {
  const Shape& s = call.shape;
  std::vector<std::string> missing;
  auto need = [&](const char* name, int64_t v) {
    if (v <= 0) missing.emplace_back(name);
  };
  if (!s.seqlens_q.empty()) {  // each sequence's lengths known
    need("Hq", s.Hq);
    need("D", s.D);
  } else if (s.tokens > 0) {  // packed: the batch and the longest key sequence may be absent
    need("B", s.B);
    need("Hq", s.Hq);
    need("Skv", s.Skv);
    need("D", s.D);
  } else {
    need("B", s.B);
    need("Hq", s.Hq);
    need("Sq", s.Sq);
    need("Skv", s.Skv);
    need("D", s.D);
  }
  if (s.dtype.empty()) missing.emplace_back("dtype");
  return missing;
}

void number_calls_in_start_order(std::vector<Call>& calls) {
  std::stable_sort(calls.begin(), calls.end(), [](const Call& a, const Call& b) { return a.cpu_ts_ns < b.cpu_ts_ns; });
  for (size_t i = 0; i < calls.size(); ++i) calls[i].id = static_cast<int64_t>(i);
}

KernelRef kernel_ref_of(const Trace& trace, const Slice& k, std::string component) {
  KernelRef ref;
  ref.name = std::string(trace.name_of(k));
  ref.component = std::move(component);
  ref.ts_ns = k.ts_ns;
  ref.device_time_us = static_cast<double>(k.dur_ns) / 1000.0;
  ref.correlation = k.correlation();
  if (const GpuArgs* a = trace.gpu_args_of(k)) ref.stream = a->stream;
  return ref;
}

std::vector<Call> extract_attention_calls(const Trace& trace, const TraceIndex& index,
                                          const CatalogExtension* extension) {
  ExtractionContext ctx(trace, index, extension);
  claim_compile_tracing(ctx);
  std::vector<Call> calls;
  for (const uint32_t top : call_tops(ctx, false)) calls.push_back(call_from_op(ctx, top));
  std::vector<Call> eager = find_eager_calls(ctx);
  std::move(eager.begin(), eager.end(), std::back_inserter(calls));
  for (const uint32_t top : call_tops(ctx, true)) calls.push_back(call_from_op(ctx, top));
  add_unfused_backward_calls(ctx, calls);
  const std::vector<size_t> replays = add_kernel_only_calls(ctx, calls);
  adopt_graph_replays(calls, replays);
  add_unrecognised_op_calls(ctx, calls);
  attach_overhead(ctx, calls);
  mark_cpu_calls(ctx, calls);

  KernelTemplates templates;
  for (Call& call : calls) finish_call(call, ctx.has_gpu, &templates, extension);
  number_calls_in_start_order(calls);
  return calls;
}

}  // namespace attnprof
