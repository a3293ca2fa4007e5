// The Trace: what ingest produces and every analysis reads. Columnar-ish tables of plain
// structs, strings interned once. No JSON types leak out of ingest; nothing here computes
// a metric (see cpp/src/attention and cpp/src/analysis for that).
//
// Times are int64 nanoseconds on the trace's own clock (Kineto writes microseconds with
// three decimals relative to baseTimeNanoseconds; older traces write integer microseconds
// since the epoch). Converting to ns keeps ordering exact and fits int64 either way.
#pragma once

#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace attnprof {

using StrId = uint32_t;
inline constexpr StrId kNoStr = 0;  // id 0 is always the empty string

// Interns strings; ids are stable and dense. string_views returned stay valid for the
// pool's lifetime (storage is a deque of strings, never moved).
class StringPool {
 public:
  StringPool();
  StrId intern(std::string_view s);
  std::string_view get(StrId id) const { return strings_[id]; }
  size_t size() const { return strings_.size(); }
  // Looks a string up without interning it; nullopt when it was never seen.
  std::optional<StrId> find(std::string_view s) const;

 private:
  std::deque<std::string> strings_;
  std::unordered_map<std::string_view, StrId> index_;
};

// Kineto `cat` values that matter to attnprof; everything else is kOther.
enum class Category : uint8_t {
  kCpuOp,              // cpu_op (ATen ops, record_function FUNCTION scope)
  kUserAnnotation,     // user_annotation (record_function USER_SCOPE, ProfilerStep#N)
  kGpuUserAnnotation,  // gpu_user_annotation
  kPythonFunction,     // python_function (with_stack=True)
  kRuntime,            // cuda_runtime (also hip* launches on ROCm)
  kDriver,             // cuda_driver
  kKernel,             // kernel
  kMemcpy,             // gpu_memcpy
  kMemset,             // gpu_memset
  kOther,
};
const char* category_name(Category c);

inline constexpr int64_t kNoId = -1;

// A (pid, tid) as Kineto writes them; string pids/tids ("Spans", "Traces") are mapped to
// negative ids (TraceMetadata::string_ids).
struct ThreadKey {
  int64_t pid = 0;
  int64_t tid = 0;
  friend auto operator<=>(const ThreadKey&, const ThreadKey&) = default;
};

// The distinct (pid, tid) pairs of a trace, numbered densely in order of first appearance,
// so that a slice holds one 4-byte number instead of two 8-byte ids. Id 0 is always (0, 0),
// so a default Slice reads as pid 0, tid 0.
class ThreadTable {
 public:
  // Slice::thread holds 24 bits: ingest drops an event of a thread past this, as an issue.
  static constexpr size_t kMaxThreads = size_t{1} << 24;
  ThreadTable() { intern(0, 0); }
  uint32_t intern(int64_t pid, int64_t tid);
  const ThreadKey& get(uint32_t id) const { return keys_[id]; }
  size_t size() const { return keys_.size(); }

 private:
  std::vector<ThreadKey> keys_;
  std::map<ThreadKey, uint32_t> index_;
};

// Runtime and driver calls: what launches GPU work (and begins or ends a graph capture).
inline bool is_launch_call(Category c) { return c == Category::kRuntime || c == Category::kDriver; }
// Kernels, copies and memsets: the work that runs on the GPU.
inline bool is_gpu_activity(Category c) {
  return c == Category::kKernel || c == Category::kMemcpy || c == Category::kMemset;
}
// Launches and GPU activity are linked by args["correlation"]; the other categories (cpu
// ops) by args["External id"].
inline bool links_by_correlation(Category c) { return is_launch_call(c) || is_gpu_activity(c); }

// One complete ('X') event. Arguments that only some categories carry live in side
// tables indexed by `args` (kNoArgs when the event has none that attnprof keeps).
struct Slice {
  static constexpr uint32_t kNoLink = UINT32_MAX;
  // The largest link id a slice holds: correlation and External ids are counters (CUPTI's
  // correlation id is 32 bits); a larger or negative one is left unset at ingest, as an issue.
  static constexpr int64_t kMaxLinkId = kNoLink - 1;

  StrId name = kNoStr;
  // Thread ids fit 24 bits (ThreadTable::kMaxThreads), so the category shares their word.
  uint32_t thread : 24 = 0;  // into Trace::threads (Trace::pid_of / tid_of)
  Category cat : 8 = Category::kOther;
  int64_t ts_ns = 0;
  int64_t dur_ns = 0;
  uint32_t args = UINT32_MAX;   // index into Trace::op_args / python_args / gpu_args by cat
  // args["correlation"] where the category links by it (links_by_correlation), else
  // args["External id"]; kNoLink when absent. A GPU slice's External id is in its GpuArgs
  // (Trace::external_id_of); a launch's is not kept (no analysis reads it).
  uint32_t link = kNoLink;

  int64_t end_ns() const { return ts_ns + dur_ns; }
  int64_t link_id() const { return link_id_of(link); }
  // A stored link id (this one, or a GpuArgs External id) as an id, kNoId when unset.
  static int64_t link_id_of(uint32_t stored) { return stored == kNoLink ? kNoId : stored; }
  // `id` in [0, kMaxLinkId] or kNoId (ingest checks the range).
  void set_link_id(int64_t id) { link = id == kNoId ? kNoLink : static_cast<uint32_t>(id); }
  int64_t correlation() const { return links_by_correlation(cat) ? link_id() : kNoId; }
};
// A trace holds one Slice per 'X' event (millions in a multi-GB trace): its size is most of
// analyze's peak memory, so a field that only some categories use belongs in a side table
// (32 bytes: the 26 M slices of the 20 GB bench trace are 785 MiB).
static_assert(sizeof(Slice) <= 32, "Slice is one row per event: keep it at most 32 bytes");
// A launch with a correlation id: what GPU work is linked to.
inline bool is_correlated_launch(const Slice& s) { return is_launch_call(s.cat) && s.link != Slice::kNoLink; }
inline constexpr uint32_t kNoArgs = UINT32_MAX;

// A tensor's dims or strides: up to kInline values stored in place (the rank of attention's
// q/k/v and masks, so most inputs cost no allocation, and freeing a Trace no per-input free),
// longer ones on the heap. Reads like a std::vector<int64_t> and converts to one.
class TensorDims {
 public:
  static constexpr uint32_t kInline = 4;
  using value_type = int64_t;
  using iterator = const int64_t*;
  using const_iterator = const int64_t*;

  TensorDims() = default;
  TensorDims(std::initializer_list<int64_t> values) { append(values.begin(), values.end()); }
  TensorDims(const std::vector<int64_t>& values) { append(values.data(), values.data() + values.size()); }  // NOLINT
  TensorDims(const TensorDims& other) { append(other.begin(), other.end()); }
  TensorDims(TensorDims&& other) noexcept { take(other); }
  TensorDims& operator=(const TensorDims& other) {
    if (this != &other) {
      size_ = 0;
      append(other.begin(), other.end());
    }
    return *this;
  }
  TensorDims& operator=(TensorDims&& other) noexcept {
    if (this != &other) {
      delete[] heap_;
      take(other);
    }
    return *this;
  }
  ~TensorDims() { delete[] heap_; }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const int64_t* data() const { return heap_ ? heap_ : inline_; }
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + size_; }
  int64_t operator[](size_t i) const { return data()[i]; }
  int64_t front() const { return data()[0]; }
  int64_t back() const { return data()[size_ - 1]; }
  void push_back(int64_t x) { append(&x, &x + 1); }
  void append(const int64_t* first, const int64_t* last);
  operator std::vector<int64_t>() const { return {begin(), end()}; }  // NOLINT

  friend bool operator==(const TensorDims& a, const TensorDims& b) {
    return a.size_ == b.size_ && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator==(const TensorDims& a, const std::vector<int64_t>& b) {
    return a.size_ == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }

 private:
  void take(TensorDims& other) noexcept {
    heap_ = other.heap_;
    size_ = other.size_;
    capacity_ = other.capacity_;
    std::copy(other.inline_, other.inline_ + kInline, inline_);
    other.heap_ = nullptr;
    other.size_ = 0;
    other.capacity_ = kInline;
  }
  int64_t* heap_ = nullptr;  // null while the values fit in inline_
  uint32_t size_ = 0;
  uint32_t capacity_ = kInline;
  int64_t inline_[kInline] = {};
};

// One positional argument of a cpu_op, from "Input Dims", "Input type" and "Concrete Inputs"
// (parallel lists in Kineto). Only what an analysis reads is kept (TraceReads): no analysis
// reads "Input Strides" or the member shapes of a TensorList, so neither is stored.
struct OpInput {
  TensorDims dims;               // empty for scalars, None and TensorList
  StrId type = kNoStr;           // e.g. "c10::BFloat16", "float", "Scalar", "" for None
  StrId concrete = kNoStr;       // e.g. "0.", "True", "" when not recorded
};

// One op's inputs, as stored once in InputLists for every op recorded with the same ones.
class OpInputs {
 public:
  OpInputs() = default;
  explicit OpInputs(const std::vector<OpInput>* list) : list_(list) {}
  size_t size() const { return list_ ? list_->size() : 0; }
  bool empty() const { return size() == 0; }
  const OpInput& operator[](size_t i) const { return (*list_)[i]; }
  const OpInput* begin() const { return list_ ? list_->data() : nullptr; }
  const OpInput* end() const { return begin() + size(); }
  const std::vector<OpInput>* list() const { return list_; }

 private:
  const std::vector<OpInput>* list_ = nullptr;
};

// The distinct input lists of a trace's ops, each stored once: a model's layers record the
// same shapes op after op (the 4-layer LLaMA fixture: 22 distinct lists among the 138 ops
// per step whose inputs are read). Lists never move, so OpInputs point at them; the pool is
// not copyable, as a copy's OpInputs would still point into the original.
class InputLists {
 public:
  InputLists() = default;
  InputLists(const InputLists&) = delete;
  InputLists& operator=(const InputLists&) = delete;
  InputLists(InputLists&&) = default;
  InputLists& operator=(InputLists&&) = default;
  // The stored list equal to `inputs`, stored now when it is new.
  OpInputs intern(const std::vector<OpInput>& inputs);
  size_t size() const { return lists_.size(); }
  void clear();

 private:
  struct Hash {
    size_t operator()(const std::vector<OpInput>* list) const;
  };
  struct Equal {
    bool operator()(const std::vector<OpInput>* a, const std::vector<OpInput>* b) const;
  };
  std::deque<std::vector<OpInput>> lists_;
  std::unordered_set<const std::vector<OpInput>*, Hash, Equal> index_;
};

// For kCpuOp and kUserAnnotation slices that carry something kept: inputs an analysis reads
// (TraceReads::op_inputs) or a sequence number. Other ops have no row (Slice::args is kNoArgs).
struct OpArgs {
  OpInputs inputs;  // in Trace::input_lists
  int64_t sequence_number = kNoId;  // autograd "Sequence number" (pairs fwd and bwd)
};

// What the analyses read of a trace beyond each slice's own fields. The pipeline passes the
// analyses' declaration (analysis_reads(), cpp/src/attention/trace_reads.cpp) to ingest, which
// then stores nothing else: op inputs are most of a trace's rows, and most ops are views,
// casts and copies whose shapes nothing reads. The default keeps everything ingest can read,
// for tools and tests that inspect a trace itself.
struct TraceReads {
  // Ops whose recorded inputs some analysis reads; null: every op's.
  bool (*op_inputs)(std::string_view op_name) = nullptr;
  bool python_ids = true;  // python_function ids ("Python id", parent, module id)
  bool flows = true;       // 's' / 'f' flow events
  // Every python_function frame as a slice (true), or only the nn.Module frames (false): the
  // other frames of a with_stack trace are half its slices, and what is read of them is
  // their source file and time (Trace::source_frames); the rest are counted.
  bool all_python_frames = true;
  // With all_python_frames false: other frames kept as slices all the same (engine step
  // functions that mark steps). null: none.
  bool (*python_frame_read)(std::string_view frame_name) = nullptr;
  // Ops read only where no other op holds them. A cpu op nested in another op of its thread
  // (inside its time, later in the file), with no sequence number, outside every op whose
  // subtree is read, is not kept when nested_op_read says false for its name (Trace counts
  // it in nested_ops_left_out). null: every op is kept.
  bool (*nested_op_read)(std::string_view op_name) = nullptr;
  bool (*subtree_read)(std::string_view op_name) = nullptr;  // null: no op's
};

// A python_function frame with a source file that is not kept as a slice
// (TraceReads::all_python_frames false). A chunk keeps one frame per nesting of frames of the
// same file: one inside an earlier-kept frame of its file encloses nothing that one does not.
struct SourceFrame {
  StrId name = kNoStr;  // "models/llama.py(123): forward" (python_frame_file gives the file)
  int64_t ts_ns = 0;
  int64_t end_ns = 0;
};

// "nn.Module: LlamaAttention_0": a module's forward (with_stack / with_modules).
bool is_module_frame(std::string_view frame_name);
// "models/llama.py(123): forward" -> "models/llama.py"; "" for builtins ("<built-in ...>")
// and module frames.
std::string_view python_frame_file(std::string_view frame_name);

struct PythonArgs {  // for kPythonFunction slices
  int64_t python_id = kNoId;
  int64_t parent_id = kNoId;   // "Python parent id"; kNoId for roots
  int64_t module_id = kNoId;   // "Python module id"; set only for nn.Module calls
};

// For kKernel, kMemcpy, kMemset slices. Grid, block and bytes are not kept: no analysis
// reads them (kernel identity comes from the name, the cost from the call's shape).
struct GpuArgs {
  int32_t device = kNoId;  // one outside int32 is a number_out_of_range issue, left unset
  int32_t stream = kNoId;
  // args["External id"] (a link id, as Slice::link; Trace::external_id_of reads it): links
  // the kernel to its op when no launch was recorded.
  uint32_t external_id = Slice::kNoLink;
};

// `[memory]` instant events (profile_memory=True). Bytes < 0 is a free. Stored packed
// (MemoryEvents).
struct MemoryEvent {
  int64_t ts_ns = 0;
  int64_t addr = 0;
  int64_t bytes = 0;
  int64_t total_allocated = -1;  // -1 when absent
  int64_t total_reserved = -1;
  uint32_t thread = 0;  // into Trace::threads, as Slice::thread
  int16_t device_type = 0;  // c10::DeviceType: 0 = CPU, 1 = CUDA (also ROCm), others as Kineto writes them
  int16_t device_id = -1;
};

// A trace's `[memory]` events in file order, packed: each event as varints of its fields'
// differences from the event before it in its block of kBlock (Total Allocated from the one
// before plus Bytes, which it nearly always equals; the five fields that rarely change are
// written only when they do, MemoryEvents::push_back), about 10 bytes an event where the
// struct is 48 (a trace recorded with profile_memory holds about one per five events, all of
// them read). Reads like a vector of MemoryEvent by value: in order through the iterator
// (one decode per event), or at any index (decodes from the start of its block).
class MemoryEvents {
 public:
  static constexpr size_t kBlock = 16;

  void push_back(const MemoryEvent& e);
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  MemoryEvent operator[](size_t i) const;
  // Decodes block `block` into out[0, kBlock); returns how many events it holds.
  size_t read_block(size_t block, MemoryEvent* out) const;
  MemoryEvent front() const { return (*this)[0]; }
  MemoryEvent back() const { return last_; }
  void clear();
  // Room for about `events` events (virtual memory until written).
  void reserve(size_t events);
  size_t encoded_bytes() const { return data_.size(); }

  class const_iterator {
   public:
    using value_type = MemoryEvent;
    using difference_type = std::ptrdiff_t;
    const_iterator() = default;
    // `index`: 0, a block's first event or size() (at_block, begin, end).
    const_iterator(const MemoryEvents* events, size_t index) : events_(events), index_(index) { load(); }
    MemoryEvent operator*() const { return current_; }
    const MemoryEvent* operator->() const { return &current_; }
    const_iterator& operator++() {
      ++index_;
      load();
      return *this;
    }
    friend bool operator==(const const_iterator& a, const const_iterator& b) { return a.index_ == b.index_; }

   private:
    void load();
    const MemoryEvents* events_ = nullptr;
    size_t index_ = 0;
    size_t offset_ = 0;  // where the event at index_ + 1 starts, when index_ is not a block's last
    MemoryEvent current_;
  };
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }
  // From the first event of block `block` (index block * kBlock) on.
  const_iterator at_block(size_t block) const { return {this, std::min(block * kBlock, size_)}; }

 private:
  friend class const_iterator;
  // Decodes the event at `offset` that follows `previous` in its block (all zero at a block's
  // start); returns the offset after it.
  size_t decode(size_t offset, const MemoryEvent& previous, MemoryEvent& out) const;
  std::vector<uint8_t> data_;
  std::vector<uint64_t> block_offsets_;  // where each block starts in data_
  MemoryEvent last_;                     // the last event pushed
  size_t size_ = 0;
};

struct FlowEvent {  // 's' and 'f' events (ac2g, fwdbwd, older async_gpu)
  int64_t id = 0;
  char phase = 's';
  StrId cat = kNoStr;
  int64_t pid = 0;
  int64_t tid = 0;
  int64_t ts_ns = 0;
};

struct DeviceProperties {  // one entry of top-level "deviceProperties"
  int64_t id = 0;
  std::string name;             // "NVIDIA H200", "AMD Instinct MI300X"
  int64_t total_global_mem = 0; // bytes
  int compute_major = 0;
  int compute_minor = 0;
  int num_sms = 0;               // SMs (NVIDIA) or CUs (AMD)
  int warp_size = 0;             // 32 on NVIDIA, 64 on AMD CDNA (0 when not recorded)
};

// One entry of distributedInfo.pg_config: a process group torch.distributed created.
struct ProcessGroupInfo {
  std::string name;           // pg_name ("0", "3")
  std::string desc;           // pg_desc ("default_pg", "tp", "dp", "undefined", ...)
  int64_t size = 0;           // pg_size
  std::vector<int64_t> ranks; // global ranks of its members
};

struct DistributedInfo {
  std::string backend;
  int rank = -1;
  int world_size = -1;
  std::vector<ProcessGroupInfo> groups;
};

// Top-level keys other than traceEvents.
struct TraceMetadata {
  int schema_version = 0;
  std::string display_time_unit;  // "ms", "ns", or "" when absent
  int64_t base_time_ns = 0;
  std::vector<DeviceProperties> devices;
  std::optional<DistributedInfo> distributed;
  // Version-ish keys as written (cuda_runtime_version, cuda_driver_version, cupti_version,
  // hip_version, pytorch version when a user added it, ...). Key -> value text.
  std::vector<std::pair<std::string, std::string>> versions;
  bool record_shapes = false, profile_memory = false, with_stack = false;
  bool with_modules = false, with_flops = false;
  // Process / thread names from 'M' events: pid 418 -> "python3", (0, 7) -> "stream 7 ".
  std::unordered_map<int64_t, std::string> process_names;
  std::unordered_map<int64_t, std::string> process_labels;  // pid 0 -> "GPU 0", pid 418 -> "CPU"
  std::map<std::pair<int64_t, int64_t>, std::string> thread_names;  // (pid, tid) -> name
  // String pids/tids ("Spans", "Traces", "") get ids -1, -2, ... in order of first
  // appearance: string_ids[0] is the text of id -1.
  std::vector<std::string> string_ids;
  std::string trace_name;  // top-level "traceName" (the path Kineto wrote), "" when absent
};

// Problems found while reading: counted, with a few samples, never thrown (errors that make
// the whole file unusable are returned as an Error by ingest instead).
struct IngestIssue {
  static constexpr size_t kMaxSamples = 3;
  std::string kind;       // stable snake_case key, e.g. "negative_duration", "duplicate_correlation"
  int64_t count = 0;
  std::vector<std::string> samples;  // the first kMaxSamples, for the user
};

struct Trace {
  std::string path;  // file the trace came from
  TraceMetadata meta;
  StringPool strings;
  ThreadTable threads;  // the (pid, tid) of every Slice::thread

  std::vector<Slice> slices;  // all 'X' events, in file order
  std::vector<OpArgs> op_args;
  InputLists input_lists;  // what op_args' inputs point at
  std::vector<PythonArgs> python_args;  // empty unless TraceReads::python_ids
  std::vector<GpuArgs> gpu_args;
  MemoryEvents memory;  // in file order
  std::vector<FlowEvent> flows;  // empty unless TraceReads::flows
  std::vector<SourceFrame> source_frames;  // empty when TraceReads::all_python_frames
  int64_t python_frames = 0;  // python_function events read, kept as slices or not
  int64_t nested_ops_left_out = 0;  // cpu ops not kept (TraceReads::nested_op_read)
  std::vector<IngestIssue> issues;
  int64_t event_count = 0;  // all events in traceEvents, including ignored ones

  // Convenience accessors (nullptr when the slice carries no such args).
  const OpArgs* op_args_of(const Slice& s) const;
  const PythonArgs* python_args_of(const Slice& s) const;
  const GpuArgs* gpu_args_of(const Slice& s) const;
  std::string_view name_of(const Slice& s) const { return strings.get(s.name); }
  int64_t pid_of(const Slice& s) const { return threads.get(s.thread).pid; }
  int64_t tid_of(const Slice& s) const { return threads.get(s.thread).tid; }
  int64_t pid_of(const MemoryEvent& m) const { return threads.get(m.thread).pid; }
  int64_t tid_of(const MemoryEvent& m) const { return threads.get(m.thread).tid; }
  // args["External id"] of a cpu op or GPU slice (kNoId when absent, and for launches).
  int64_t external_id_of(const Slice& s) const;
  // Counts one occurrence of `kind`, keeping `sample` among the first IngestIssue::kMaxSamples.
  void add_issue(std::string_view kind, std::string sample);
  // The entry for `kind`, appended with count 0 when there is none yet.
  IngestIssue& issue_of(std::string_view kind);
};

}  // namespace attnprof
