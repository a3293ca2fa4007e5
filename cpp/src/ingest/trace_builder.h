// Turns simdjson on-demand values (one traceEvents element, or one top-level key) into rows
// of the Trace tables. Value-level problems (wrong types, out-of-range numbers, missing ts,
// negative durations, duplicate ids) become Trace::issues; only structural JSON errors are
// returned, and they stop the ingest.
#pragma once

#include <simdjson.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "attnprof/kineto_keys.h"
#include "attnprof/trace.h"

namespace attnprof::ingest {

namespace od = simdjson::ondemand;

// Errors after which the document cannot be read on; the rest are value-level problems.
bool is_structural_error(simdjson::error_code e);

// The Category of a Kineto `cat` string (every spelling ingest knows).
Category category_of(std::string_view cat);

// On-demand parsing checks a literal only when it reads it: `tru` or `nul` where a value of
// another type was expected is malformed JSON, not a value of the wrong type. SUCCESS for
// well-formed literals and for every other type.
simdjson::error_code check_literal(od::value v);

struct ParsedChunk;

// A set of ids that are never kNoId, for the duplicate-launch check (one insert per launch,
// ~0.3 M per GB of trace): open addressing in one power-of-two table grown at half full,
// instead of a node allocated per id (std::unordered_set was 1.6 - 1.9% of a single-thread
// analyze on the 1 GB trace).
class IdSet {
 public:
  bool insert(uint32_t id);  // a link id (Slice::link); false when `id` was there already

 private:
  void grow();
  std::vector<uint32_t> slots_;  // Slice::kNoLink: empty
  size_t size_ = 0;
};

class TraceBuilder {
 public:
  // kWhole: the builder sees every event of the trace and checks launch correlations for
  // duplicates itself. kChunk: it sees one chunk (chunks.h) and records the launches for
  // absorb() to check across chunks. kStream: it sees every event, chunk by chunk, and checks
  // a chunk's launches when told the chunk ended (end_chunk), where absorb() would check them,
  // so the issues come out in the same order as through the merge.
  enum class Mode { kWhole, kChunk, kStream };
  // `reads`: what to keep besides each slice's own fields (TraceReads). absorb() applies the
  // op inputs read by the builder it appends to, and takes the python frames a chunk kept.
  explicit TraceBuilder(Trace& trace, Mode mode = Mode::kWhole, TraceReads reads = {})
      : trace_(&trace), strings_(&trace.strings), mode_(mode), reads_(reads) {}
  // A kChunk builder that outlives its chunks (ChunkContext, chunks.h): it interns into
  // `strings`, kept from one chunk to the next, so its cache and per-name verdicts stay warm
  // and a string is copied once per parsing thread instead of once per chunk.
  TraceBuilder(StringPool& strings, TraceReads reads)
      : trace_(nullptr), strings_(&strings), mode_(Mode::kChunk), reads_(reads) {}
  // The chunk about to be parsed goes into `part` (fresh or cleared rows; its own string
  // pool is not used): chunk-local numbering starts over, the interned strings stay.
  void begin_chunk(Trace& part);

  // One element of traceEvents.
  simdjson::error_code add_event(od::value event);
  // One top-level key other than traceEvents.
  simdjson::error_code add_top_level(std::string_view key, od::value value);

  int64_t events_seen() const { return trace_->event_count; }

  // kChunk: chunk-local event numbers of the runtime/driver slices with a correlation
  // (swapped with `out`, whose old contents are dropped: both keep their capacity).
  void take_launch_events(std::vector<int64_t>& out) {
    out.swap(launch_events_);
    launch_events_.clear();
  }
  // Appends a chunk parsed by another builder (kChunk) after the rows already here, mapping
  // its string ids (through its context's table), string pids/tids, args rows and event
  // numbers into this trace's. Chunks come in file order, so a string's id here is still
  // the order of its first appearance in the file.
  void absorb(ParsedChunk& chunk);
  // kStream: the chunk whose rows start at slice `first_slice` is complete.
  void end_chunk(size_t first_slice);

 private:
  struct Event;  // fields of the event being read
 public:
  enum class ArgKey : size_t;    // a key of an event's args that ingest reads
  enum class ArgsRead : uint8_t;  // which of them an event's args are read for
 private:

  simdjson::error_code read_phase(od::value& v, Event& ev);
  simdjson::error_code read_args(od::object args, Event& ev);
  simdjson::error_code read_arg(ArgsRead what, ArgKey k, std::string_view key, od::value& v, Event& ev);
  simdjson::error_code read_python_arg(ArgKey k, std::string_view key, od::value& v, PythonArgs& out);
  simdjson::error_code read_memory_arg(ArgKey k, std::string_view key, od::value& v, MemoryEvent& out);
  simdjson::error_code read_metadata_args(od::object args, Event& ev);
  simdjson::error_code read_input_dims(od::value& v, std::vector<OpInput>& out);
  simdjson::error_code read_string_list(od::value& v, std::vector<OpInput>& out, bool concrete);
  simdjson::error_code read_device_properties(od::value v);
  simdjson::error_code read_distributed_info(od::value v);
  simdjson::error_code read_process_groups(od::value& v, std::vector<ProcessGroupInfo>& groups);
  simdjson::error_code read_rank_list(od::value& v, std::vector<int64_t>& out);

  simdjson::error_code read_int(od::value& v, std::string_view key, int64_t& out);
  // An int into a narrower field: one out of its range is a number_out_of_range issue and
  // leaves the field as it was.
  template <typename Int>
  simdjson::error_code read_narrow_int(od::value& v, std::string_view key, Int& out);
  simdjson::error_code read_id(od::value& v, std::string_view key, int64_t& out);  // int or string
  // A correlation or External id: one outside [0, Slice::kMaxLinkId] is a number_out_of_range
  // issue and leaves `out` as it was.
  simdjson::error_code read_link_id(od::value& v, std::string_view key, int64_t& out);
  simdjson::error_code read_time(od::value& v, std::string_view key, int64_t& out, bool& present);
  void finish_event(Event& ev);  // the event just read, into the tables its phase goes to
  // finish_event's parts, forced inline into it (the ingest hot path: as one function they cost
  // no call per event); defined in trace_builder.cpp, the one file that calls them.
  // A complete ('X') event as a Slice, or left out with its args (no ts, a thread past the
  // table's ids, a nested op or python frame no analysis reads).
  [[gnu::always_inline]] inline void finish_slice(Event& ev);
  [[gnu::always_inline]] inline bool slice_times_usable(Event& ev);  // false without a ts; a missing or negative dur is 0
  [[gnu::always_inline]] inline Category slice_category(const Event& ev);  // an event without "cat" is a cpu op (legacy profiler)
  // Counts the python frame; false when it is not kept as a slice (keep_source_frame has it).
  [[gnu::always_inline]] inline bool keeps_python_frame(const Slice& frame);
  [[gnu::always_inline]] inline void finish_memory_event(Event& ev);  // an instant event: the allocator's [memory] ones
  [[gnu::always_inline]] inline void finish_flow(const Event& ev);
  [[gnu::always_inline]] inline void finish_metadata(const Event& ev);
  void drop_args(const Event& ev);
  void keep_gpu_external_id(Slice& s, int64_t external_id);
  bool slice_thread_fits(uint32_t thread, StrId name);
  // The op args just read (pending_op_) as a row of Trace::op_args, their inputs dropped unless
  // an analysis reads them; kNoArgs when nothing is left to keep.
  uint32_t store_op_args(StrId name);
  // `row` (its inputs, if any, read by an analysis and in this trace's input_lists) as a row of
  // Trace::op_args; kNoArgs when it holds nothing.
  uint32_t push_op_args(OpArgs row);
  bool inputs_read(StrId name);  // reads_.op_inputs, decided once per interned name
  // A python frame not kept as a slice (reads_.all_python_frames false): its source file
  // and time go to Trace::source_frames unless an earlier frame of the file holds it.
  void keep_source_frame(const Slice& frame);
  int32_t frame_file_number(StrId name);  // into file_last_kept_; kModuleFrame or kNoFile, decided once per name
  bool python_frame_kept(StrId name);      // reads_.python_frame_read, asked once per name
  // A cpu op as it joins the trace, in file order with this trace's thread ids: whether it
  // is kept (TraceReads::nested_op_read). Every op goes through here, kept or not, so that
  // the nesting of the ops after it is known.
  bool keeps_op(const Slice& op, int64_t sequence_number);
  uint8_t nesting_verdict(StrId name);  // kUnreadNested / kSubtreeRead bits, decided once per name
  int64_t string_id(std::string_view text);
  uint32_t thread_of(int64_t pid, int64_t tid);  // trace_.threads.intern, cached for runs of one thread
  StrId intern(std::string_view s);  // trace_.strings.intern through a small cache
  void issue(std::string_view kind, std::string_view detail);
  void note_launch(const Slice& s, int64_t event_index);
  void check_launch(const Slice& s, int64_t event_index);
  void absorb_issues(const Trace& part, int64_t event_base);
  const std::vector<StrId>& global_string_ids(ParsedChunk& chunk);  // context id -> this trace's
  OpInputs absorbed_inputs(OpInputs inputs, const std::vector<StrId>& str);

  Trace* trace_;
  StringPool* strings_;  // trace_->strings, or a ChunkContext's
  Mode mode_;
  TraceReads reads_;
  struct PendingOp {
    std::vector<OpInput> inputs;
    int64_t sequence_number = kNoId;
  };
  PendingOp pending_op_;  // the op args of the event being read, stored by finish_event
  std::vector<OpInput> scratch_inputs_;  // absorbed_inputs' renumbered copy
  std::unordered_map<const std::vector<OpInput>*, OpInputs> absorbed_lists_;  // the chunk being absorbed: its lists -> this trace's
  std::vector<uint8_t> inputs_read_;  // per StrId of strings_: kUnchecked, or whether reads_.op_inputs holds
  static constexpr int32_t kUncheckedFrame = -3, kModuleFrame = -2, kNoFile = -1;
  std::vector<uint8_t> python_frames_kept_;  // per StrId of strings_: python_frame_kept's answer
  std::vector<int32_t> frame_file_numbers_;  // per StrId of strings_: frame_file_number's answer, or kUncheckedFrame
  std::unordered_map<std::string_view, int32_t> file_numbers_;  // a frame's source file (a view into strings_) -> its number
  struct Span {
    int64_t ts_ns = INT64_MAX, end_ns = INT64_MIN;  // empty until a frame of the file is kept
  };
  std::vector<Span> file_last_kept_;  // per file number: the last frame of it kept in this chunk
  // Per thread of trace_: the ops open at the last op, outermost first, each with whether
  // it or one around it has its subtree read; the last op's start, as a file that goes back
  // in time on the thread (a new run) forgets what is open; and until when that leaves it
  // unsure what holds an op (the latest end of the ops before the new run).
  struct OpenOp {
    int64_t end_ns;
    bool in_read_subtree;
  };
  struct ThreadNesting {
    std::vector<OpenOp> open;
    int64_t last_ts_ns = INT64_MIN;
    int64_t latest_end_ns = INT64_MIN;
    int64_t unsure_until_ns = INT64_MIN;
  };
  std::vector<ThreadNesting> nesting_;
  static constexpr uint8_t kUncheckedNesting = 0xff, kUnreadNested = 1, kSubtreeRead = 2;
  std::vector<uint8_t> nesting_verdicts_;  // per StrId of strings_
  std::vector<int64_t> launch_events_;  // kChunk and kStream: event numbers of the launches not yet checked
  std::unordered_map<std::string, int64_t> string_ids_;
  IdSet launch_correlations_;  // runtime/driver correlation ids seen
  static constexpr uint32_t kNoThread = UINT32_MAX;
  uint32_t last_thread_ = kNoThread;  // thread_of's last answer, for (last_pid_, last_tid_)
  int64_t last_pid_ = 0, last_tid_ = 0;

  // Reused by read_input_dims / read_string_list (no allocation per event once warm).
  struct ScratchSpan {
    uint32_t input;  // position in the list
    size_t begin, end;
  };
  std::vector<int64_t> scratch_values_;
  std::vector<ScratchSpan> scratch_spans_;
  std::vector<StrId> scratch_ids_;

  static constexpr size_t kInternCacheSize = 4096;  // power of two
  static constexpr StrId kNoCachedStr = UINT32_MAX;
  std::array<StrId, kInternCacheSize> intern_cache_ = make_empty_cache();
  static std::array<StrId, kInternCacheSize> make_empty_cache() {
    std::array<StrId, kInternCacheSize> cache;
    cache.fill(kNoCachedStr);
    return cache;
  }
};

}  // namespace attnprof::ingest
