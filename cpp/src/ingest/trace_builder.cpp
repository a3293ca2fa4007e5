#include "ingest/trace_builder.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "ingest/chunks.h"
#include "ingest/key_index.h"
#include "ingest/numbers.h"
#include "ingest/scanner.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace attnprof::ingest {

using simdjson::error_code;
using simdjson::SUCCESS;

bool is_structural_error(error_code e) {
  switch (e) {
    case SUCCESS:
    case simdjson::INCORRECT_TYPE:
    case simdjson::NUMBER_OUT_OF_RANGE:
    case simdjson::NUMBER_ERROR:
    case simdjson::NO_SUCH_FIELD:
      return false;
    default:
      return true;
  }
}

simdjson::error_code check_literal(od::value v) {
  od::json_type t;
  if (auto e = v.type().get(t)) return e;
  if (t == od::json_type::boolean) {
    bool b = false;
    return v.get_bool().get(b);
  }
  if (t == od::json_type::null) {
    bool null = false;
    if (auto e = v.is_null().get(null)) return e;
    return null ? SUCCESS : simdjson::N_ATOM_ERROR;
  }
  return SUCCESS;
}

namespace {

bool has_op_args(Category c) { return c == Category::kCpuOp || c == Category::kUserAnnotation; }

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && is_json_space(s.back())) s.remove_suffix(1);
  constexpr size_t kMaxSample = 80;
  return s.substr(0, kMaxSample);
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The first '"' or '\\' at or after p. Keys and strings end inside the padded buffer, so
// 16-byte loads from inside them stay inside simdjson's padding (SIMDJSON_PADDING >= 16).
const char* find_quote_or_backslash(const char* p) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
  for (;; p += 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const auto hits = static_cast<uint32_t>(
        _mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(bytes, quote), _mm_cmpeq_epi8(bytes, backslash))));
    if (hits != 0) return p + __builtin_ctz(hits);
  }
#else
  while (*p != '"' && *p != '\\') ++p;
  return p;
#endif
}

// An object key as a view into the parsed buffer, between its quotes, escapes not undone. Its
// end is found from its value's start, not by scanning the key: simdjson has already checked
// that only whitespace, a ':' and whitespace lie between the key's closing quote and the value.
std::string_view raw_key(od::field& field) {
  const char* begin = field.key().raw();
  const char* p = field.value().raw_json_token().data();
  do --p; while (is_json_space(*p));  // the ':'
  do --p; while (is_json_space(*p));  // the key's closing quote
  return std::string_view(begin, static_cast<size_t>(p - begin));
}

template <const auto& Keys>
constexpr bool holds_no_backslash() {
  return std::none_of(Keys.begin(), Keys.end(), [](std::string_view k) { return k.find('\\') != k.npos; });
}

// The key of `field` and its position in `Keys` (Keys.size() when none). Kineto's keys never
// hold escapes, and none of `Keys` holds a backslash, so a raw key that matches one is that
// key; one that matches none is unescaped (`"p\u0068"`) and looked up again only when it
// holds a backslash.
template <const auto& Keys>
simdjson::error_code key_of(od::field& field, std::string_view& key, size_t& which) {
  static_assert(holds_no_backslash<Keys>());
  key = raw_key(field);
  which = find_key<Keys>(key);
  if (which != Keys.size() || find_quote_or_backslash(key.data()) == key.data() + key.size()) return SUCCESS;
  if (auto e = field.unescaped_key().get(key)) return e;
  which = find_key<Keys>(key);
  return SUCCESS;
}

// A string value as a view into the parsed buffer when it holds no escape (names, categories
// and phases nearly always), else unescaped by simdjson; the value is not consumed on the
// fast path (the object's iteration steps over it). Errors as get_string().
simdjson::error_code string_of(od::value& v, std::string_view& out) {
  const std::string_view token = v.raw_json_token();  // the string and the whitespace after it
  if (!token.empty() && token[0] == '"') {
    const char* end = find_quote_or_backslash(token.data() + 1);
    if (*end == '"') {
      out = std::string_view(token.data() + 1, static_cast<size_t>(end - token.data() - 1));
      return SUCCESS;
    }
  }
  return v.get_string().get(out);
}

// Keys of a traceEvents element, in the order of EventKey.
enum EventKey : size_t { kPhKey, kCatKey, kNameKey, kPidKey, kTidKey, kTsKey, kDurKey, kFlowIdKey, kArgsKey };
constexpr std::array kEventKeys{kineto::kPhase, kineto::kCat, kineto::kName, kineto::kPid, kineto::kTid,
                                kineto::kTs, kineto::kDur, kineto::kFlowId, kineto::kArgs};
static_assert(find_key<kEventKeys>(kineto::kArgs) == kArgsKey && find_key<kEventKeys>(kineto::kPhase) == kPhKey);

}  // namespace

// Keys of an event's args that ingest reads, in the order of kArgKeys.
enum class TraceBuilder::ArgKey : size_t {
  kExternalId, kCorrelation, kInputDims, kInputType, kConcreteInputs, kSequenceNumber,
  kPythonId, kPythonParentId, kPythonModuleId, kDevice, kStream,
  kDeviceType, kDeviceId, kAddr, kMemoryBytes, kTotalAllocated, kTotalReserved, kOther,
};

// Which values of an event's args are read.
enum class TraceBuilder::ArgsRead : uint8_t {
  kSliceIds,      // External id and correlation (every 'X' event)
  kOp,            // + Sequence number: an op whose inputs no analysis reads
  kOpWithInputs,  // + Input Dims, Input type, Concrete Inputs
  kPython,        // + Python id, parent id, module id (TraceReads::python_ids)
  kGpu,           // + device, stream
  kMemory,        // a `[memory]` event's own args
};

namespace {

using ArgKey = TraceBuilder::ArgKey;

constexpr std::array kArgKeys{
    kineto::kExternalId, kineto::kCorrelation, kineto::kInputDims, kineto::kInputType, kineto::kConcreteInputs,
    kineto::kSequenceNumber, kineto::kPythonId, kineto::kPythonParentId, kineto::kPythonModuleId, kineto::kDevice,
    kineto::kStream, kineto::kDeviceType, kineto::kDeviceId, kineto::kAddr, kineto::kMemoryBytes,
    kineto::kTotalAllocated, kineto::kTotalReserved};
static_assert(kArgKeys.size() == static_cast<size_t>(ArgKey::kOther));
static_assert(find_key<kArgKeys>(kineto::kTotalReserved) == static_cast<size_t>(ArgKey::kTotalReserved) &&
              find_key<kArgKeys>(kineto::kInputDims) == static_cast<size_t>(ArgKey::kInputDims));

// The `cat` spellings of kineto::kCategories, as constants to compare with, in two sets: the
// current lower-case ones every event of a modern trace is compared with, and the capitalised
// legacy ones, compared only with a `cat` that starts with a capital (an event's category is
// looked up once or more, so each unmatched spelling costs every event of the trace).
constexpr bool capitalised(std::string_view text) { return !text.empty() && text[0] >= 'A' && text[0] <= 'Z'; }

constexpr size_t count_spellings(bool legacy) {
  size_t n = 0;
  for (const kineto::CategorySpelling& c : kineto::kCategories) n += capitalised(c.text) == legacy;
  return n;
}

template <bool Legacy>
constexpr auto category_spellings() {
  std::array<kineto::CategorySpelling, count_spellings(Legacy)> out{};
  size_t n = 0;
  for (const kineto::CategorySpelling& c : kineto::kCategories)
    if (capitalised(c.text) == Legacy) out[n++] = c;
  return out;
}
constexpr auto kCurrentSpellings = category_spellings<false>();
constexpr auto kLegacySpellings = category_spellings<true>();

template <const auto& Spellings>
constexpr auto spelling_texts() {
  std::array<std::string_view, Spellings.size()> texts;
  for (size_t i = 0; i < texts.size(); ++i) texts[i] = Spellings[i].text;
  return texts;
}
constexpr auto kCurrentCategoryTexts = spelling_texts<kCurrentSpellings>();
constexpr auto kLegacyCategoryTexts = spelling_texts<kLegacySpellings>();

enum class MetaKind : uint8_t { kNone, kProcessName, kProcessLabels, kThreadName };

}  // namespace

Category category_of(std::string_view cat) {
  if (capitalised(cat)) {
    const size_t i = find_key<kLegacyCategoryTexts>(cat);
    return i == kLegacyCategoryTexts.size() ? Category::kOther : kLegacySpellings[i].category;
  }
  const size_t i = find_key<kCurrentCategoryTexts>(cat);
  return i == kCurrentCategoryTexts.size() ? Category::kOther : kCurrentSpellings[i].category;
}

// The args of an 'X' event that finish_event folds into its Slice (Slice::link) or GpuArgs.
struct SliceArgs {
  int64_t external_id = kNoId;
  int64_t correlation = kNoId;
  uint32_t args = kNoArgs;
};

struct TraceBuilder::Event {
  char ph = 0;
  bool has_cat = false, has_name = false, has_ts = false, has_dur = false, has_id = false;
  std::string_view cat;
  std::string_view name;
  int64_t pid = 0, tid = 0;
  int64_t ts = 0, dur = 0;
  int64_t flow_id = 0;
  SliceArgs slice;   // External id, correlation and the args row for 'X'
  bool op_args = false;  // args of a cpu_op / user_annotation were read into pending_op_
  MemoryEvent mem;   // for `[memory]`
  MetaKind meta = MetaKind::kNone;
  std::string_view meta_text;
  int64_t index = 0;  // position in traceEvents, for issue samples

  // Whether the args can be read where they stand: which of their values are read depends
  // on the phase, the category and, for ops, the name (Kineto writes them before "args").
  bool knows_what_args_hold() const {
    if (ph == 0) return false;
    if (ph == 'X') return has_cat && has_name;
    if (ph == 'i' || ph == 'I' || ph == 'M') return has_name;
    return true;
  }
  // After the last key: an 'X' event without a name still has its args read.
  bool args_readable() const { return ph == 'X' ? has_cat : knows_what_args_hold(); }
};

namespace {

// Samples of event-level issues start with this and the event's position in traceEvents
// (absorb() renumbers a chunk's samples by it).
constexpr std::string_view kEventSamplePrefix = "event #";

std::string event_sample(int64_t event_index, std::string_view detail) {
  return std::string(kEventSamplePrefix) + std::to_string(event_index) + ": " + std::string(detail);
}

// "event #12: ..." from a chunk whose first event is number `base` -> "event #(base + 12): ...".
std::string renumbered_sample(const std::string& sample, int64_t base) {
  if (sample.compare(0, kEventSamplePrefix.size(), kEventSamplePrefix) != 0) return sample;
  const size_t digits = kEventSamplePrefix.size();
  size_t end = digits;
  int64_t local = 0;
  while (end < sample.size() && sample[end] >= '0' && sample[end] <= '9') local = local * 10 + (sample[end++] - '0');
  if (end == digits) return sample;
  return std::string(kEventSamplePrefix) + std::to_string(base + local) + sample.substr(end);
}

}  // namespace

void TraceBuilder::issue(std::string_view kind, std::string_view detail) {
  trace_->add_issue(kind, event_sample(trace_->event_count - 1, detail));
}

namespace {
size_t id_slot(uint32_t id, size_t mask) {
  const uint64_t h = static_cast<uint64_t>(id) * 0x9E3779B97F4A7C15ULL;  // Fibonacci hashing
  return static_cast<size_t>(h >> 32) & mask;
}
}  // namespace

bool IdSet::insert(uint32_t id) {
  if ((size_ + 1) * 2 > slots_.size()) grow();
  const size_t mask = slots_.size() - 1;
  for (size_t i = id_slot(id, mask);; i = (i + 1) & mask) {
    if (slots_[i] == id) return false;
    if (slots_[i] == Slice::kNoLink) {
      slots_[i] = id;
      ++size_;
      return true;
    }
  }
}

void IdSet::grow() {
  std::vector<uint32_t> old =
      std::exchange(slots_, std::vector<uint32_t>(std::max<size_t>(64, slots_.size() * 2), Slice::kNoLink));
  const size_t mask = slots_.size() - 1;
  for (const uint32_t id : old) {
    if (id == Slice::kNoLink) continue;
    size_t i = id_slot(id, mask);
    while (slots_[i] != Slice::kNoLink) i = (i + 1) & mask;
    slots_[i] = id;
  }
}

void TraceBuilder::note_launch(const Slice& s, int64_t event_index) {
  if (!is_correlated_launch(s)) return;
  if (mode_ == Mode::kWhole) check_launch(s, event_index);
  else launch_events_.push_back(event_index);
}

void TraceBuilder::end_chunk(size_t first_slice) {
  size_t launch = 0;
  for (size_t i = first_slice; i < trace_->slices.size(); ++i)
    if (is_correlated_launch(trace_->slices[i])) check_launch(trace_->slices[i], launch_events_[launch++]);
  launch_events_.clear();
}

// GPU work is linked to its launch by correlation id, so two launches with the same id make
// that link ambiguous.
void TraceBuilder::check_launch(const Slice& s, int64_t event_index) {
  if (!launch_correlations_.insert(s.link))
    trace_->add_issue("duplicate_correlation", event_sample(event_index, std::string(trace_->name_of(s)) +
                                                                            " correlation " + std::to_string(s.correlation())));
}

// Names, types and concrete values repeat across millions of events: a direct-mapped cache
// keyed by the length and the first and last 8 bytes answers most lookups without hashing
// the whole string or walking the pool's node-based map. A miss (or a collision, checked by
// comparing the pooled text) falls through to the pool.
StrId TraceBuilder::intern(std::string_view s) {
  uint64_t head = 0, tail = 0;
  if (s.size() >= 8) {
    std::memcpy(&head, s.data(), 8);
    std::memcpy(&tail, s.data() + s.size() - 8, 8);
  } else if (!s.empty()) {  // (memcpy from a null data() is undefined even for 0 bytes)
    std::memcpy(&head, s.data(), s.size());
  }
  const uint64_t h = (head * 0x9E3779B97F4A7C15ULL) ^ (tail * 0xC2B2AE3D27D4EB4FULL) ^ s.size();
  StrId& slot = intern_cache_[(h ^ (h >> 29)) & (kInternCacheSize - 1)];
  if (slot != kNoCachedStr && strings_->get(slot) == s) return slot;
  slot = strings_->intern(s);
  return slot;
}

// A chunk numbers its string pids/tids from INT64_MIN up (absorb() maps them to the trace's
// -1, -2, ...): real traces hold negative numeric tids, so -1, -2, ... cannot mark them.
constexpr int64_t kChunkTextIdBase = INT64_MIN;

// Events of one thread come in runs: the table is looked up when the thread changes.
uint32_t TraceBuilder::thread_of(int64_t pid, int64_t tid) {
  if (last_thread_ == kNoThread || pid != last_pid_ || tid != last_tid_) {
    last_thread_ = trace_->threads.intern(pid, tid);
    last_pid_ = pid;
    last_tid_ = tid;
  }
  return last_thread_;
}

int64_t TraceBuilder::string_id(std::string_view text) {
  auto [it, inserted] = string_ids_.try_emplace(std::string(text), 0);
  if (inserted) {
    trace_->meta.string_ids.emplace_back(text);
    const auto n = static_cast<int64_t>(trace_->meta.string_ids.size());
    it->second = mode_ == Mode::kChunk ? kChunkTextIdBase + (n - 1) : -n;
  }
  return it->second;
}

error_code TraceBuilder::read_int(od::value& v, std::string_view key, int64_t& out) {
  int64_t x = 0;
  const error_code e = v.get_int64().get(x);
  if (e == SUCCESS) {
    out = x;
    return SUCCESS;
  }
  if (is_structural_error(e)) return e;
  const std::string_view token = trimmed(v.raw_json_token());
  const bool integer_text = !token.empty() && token.find_first_not_of("-0123456789") == std::string_view::npos;
  issue(integer_text ? "number_out_of_range" : "bad_value", std::string(key) + " = " + std::string(token));
  return SUCCESS;
}

error_code TraceBuilder::read_id(od::value& v, std::string_view key, int64_t& out) {
  if (int64_t x = 0; v.get_int64().get(x) == SUCCESS) {  // the common case; a failure consumes nothing
    out = x;
    return SUCCESS;
  }
  od::json_type t;
  if (auto e = v.type().get(t)) return e;
  if (t == od::json_type::string) {
    std::string_view s;
    if (auto e = v.get_string().get(s)) return is_structural_error(e) ? e : SUCCESS;
    out = string_id(s);
    return SUCCESS;
  }
  return read_int(v, key, out);
}

error_code TraceBuilder::read_time(od::value& v, std::string_view key, int64_t& out, bool& present) {
  const std::string_view token = v.raw_json_token();
  // What type() says of a number, without asking it: JSON numbers start with '-' or a digit.
  od::json_type t = od::json_type::number;
  if (token.empty() || (token[0] != '-' && (token[0] < '0' || token[0] > '9')))
    if (auto e = v.type().get(t)) return e;
  if (t == od::json_type::number) {
    if (micros_text_to_ns(token, out)) {
      present = true;
      return SUCCESS;
    }
    issue("number_out_of_range", std::string(key) + " = " + std::string(trimmed(token)));
    return SUCCESS;
  }
  issue("bad_value", std::string(key) + " = " + std::string(trimmed(token)));
  return SUCCESS;
}

// ---- traceEvents ------------------------------------------------------------------------

// long: the one pass over an event's fields, a switch on the key with each field read once in
// place (simdjson On-Demand); the ingest hot path
error_code TraceBuilder::add_event(od::value value) {
  ++trace_->event_count;
  od::object obj;
  if (auto e = value.get_object().get(obj)) {
    if (is_structural_error(e)) return e;
    if (auto bad = check_literal(value)) return bad;
    // Not raw_json_token(): after a failed get_object() on malformed input its view can run
    // past the buffer (found by the fuzzer, cpp/fuzz); the simdjson error names what was there.
    issue("event_not_object", simdjson::error_message(e));
    return SUCCESS;
  }
  Event ev;
  ev.index = trace_->event_count - 1;
  bool args_deferred = false;
  for (auto field_result : obj) {
    // The field and its value are used in place: copies of simdjson's just-built iterators
    // stall on store forwarding (perf: a third of this function's time).
    if (auto e = field_result.error()) return e;
    od::field& field = field_result.value_unsafe();
    std::string_view key;
    size_t which = 0;
    if (auto e = key_of<kEventKeys>(field, key, which)) return e;
    if (which == kEventKeys.size()) continue;  // not read: the iteration steps over the value
    od::value& v = field.value();
    error_code e = SUCCESS;
    switch (which) {
      case kPhKey: e = read_phase(v, ev); break;
      case kCatKey: ev.has_cat = (e = string_of(v, ev.cat)) == SUCCESS; break;
      case kNameKey: ev.has_name = (e = string_of(v, ev.name)) == SUCCESS; break;
      case kPidKey: e = read_id(v, key, ev.pid); break;
      case kTidKey: e = read_id(v, key, ev.tid); break;
      case kTsKey: e = read_time(v, key, ev.ts, ev.has_ts); break;
      case kDurKey: e = read_time(v, key, ev.dur, ev.has_dur); break;
      case kFlowIdKey:
        e = read_id(v, key, ev.flow_id);
        ev.has_id = true;
        break;
      case kArgsKey:
        if (ev.knows_what_args_hold()) {
          od::object args;
          e = v.get_object().get(args);
          if (e == SUCCESS) e = read_args(args, ev);
        } else {
          args_deferred = true;
        }
        break;
      default: break;
    }
    if (e != SUCCESS && is_structural_error(e)) return e;
  }
  if (args_deferred && ev.args_readable()) {  // "args" came before "ph"/"cat"/"name"
    if (auto e = obj.reset().error()) return e;
    od::object args;
    const error_code e = obj.find_field_unordered(kineto::kArgs).get_object().get(args);
    if (e == SUCCESS) {
      if (auto e2 = read_args(args, ev)) return e2;
    } else if (is_structural_error(e)) {
      return e;
    }
  }
  finish_event(ev);
  return SUCCESS;
}

error_code TraceBuilder::read_phase(od::value& v, Event& ev) {
  std::string_view ph;
  error_code e = string_of(v, ph);
  if (e == SUCCESS && ph.size() == 1) {
    ev.ph = ph[0];
  } else if (!is_structural_error(e)) {
    issue("bad_value", "ph = " + std::string(trimmed(v.raw_json_token())));
    e = SUCCESS;
  }
  return e;
}

// Only the values some analysis reads are parsed (TraceReads); simdjson steps over the rest
// unparsed, so a bad value there is no issue (docs/ingest.md, "What is checked").
// long: the one pass over an event's args (ingest hot path): which reader the args go to is
// decided once per event above the loop, by phase and category, and each key read in place
error_code TraceBuilder::read_args(od::object args, Event& ev) {
  if (ev.ph == 'M') return read_metadata_args(args, ev);
  const bool memory = (ev.ph == 'i' || ev.ph == 'I') && ev.name == kineto::kMemoryEventName;
  if (ev.ph != 'X' && !memory) return SUCCESS;
  const Category cat = ev.ph == 'X' ? category_of(ev.cat) : Category::kOther;
  // A python_function's args hold only its frame ids (Kineto's Python tracer writes no
  // External id or correlation there, and frames are linked by time): with the ids not
  // kept, nothing in them is read. Frames are two events in five of a with_stack trace.
  if (cat == Category::kPythonFunction && !reads_.python_ids) return SUCCESS;
  ArgsRead what = ArgsRead::kSliceIds;
  if (memory) {
    what = ArgsRead::kMemory;
  } else if (has_op_args(cat)) {
    pending_op_.inputs.clear();
    pending_op_.sequence_number = kNoId;
    ev.op_args = true;
    what = reads_.op_inputs == nullptr || inputs_read(intern(ev.name)) ? ArgsRead::kOpWithInputs : ArgsRead::kOp;
  } else if (cat == Category::kPythonFunction) {  // python ids kept (returned above otherwise)
    ev.slice.args = static_cast<uint32_t>(trace_->python_args.size());
    trace_->python_args.emplace_back();
    what = ArgsRead::kPython;
  } else if (is_gpu_activity(cat)) {
    ev.slice.args = static_cast<uint32_t>(trace_->gpu_args.size());
    trace_->gpu_args.emplace_back();
    what = ArgsRead::kGpu;
  }
  for (auto field_result : args) {
    if (auto e = field_result.error()) return e;
    od::field& field = field_result.value_unsafe();  // in place, as in add_event
    std::string_view key;
    size_t which = 0;
    if (auto e = key_of<kArgKeys>(field, key, which)) return e;
    const auto k = static_cast<ArgKey>(which);
    if (k == ArgKey::kOther) {  // not read: the iteration steps over the value
      // torch 1.8-era traces spelt "External id" in lower case; looked for only among the keys
      // that matched none, so current traces do not pay a compare per key for it.
      if (key == kineto::kLegacyExternalId) {
        if (auto e = read_arg(what, ArgKey::kExternalId, key, field.value(), ev); is_structural_error(e)) return e;
      }
      continue;
    }
    if (auto e = read_arg(what, k, key, field.value(), ev); is_structural_error(e)) return e;
  }
  return SUCCESS;
}

error_code TraceBuilder::read_arg(ArgsRead what, ArgKey k, std::string_view key, od::value& v, Event& ev) {
  if (what == ArgsRead::kMemory) return read_memory_arg(k, key, v, ev.mem);
  if (k == ArgKey::kExternalId) return read_link_id(v, key, ev.slice.external_id);
  if (k == ArgKey::kCorrelation) return read_link_id(v, key, ev.slice.correlation);
  switch (what) {
    case ArgsRead::kOpWithInputs:
      if (k == ArgKey::kInputDims) return read_input_dims(v, pending_op_.inputs);
      if (k == ArgKey::kInputType) return read_string_list(v, pending_op_.inputs, false);
      if (k == ArgKey::kConcreteInputs) return read_string_list(v, pending_op_.inputs, true);
      [[fallthrough]];
    case ArgsRead::kOp:
      if (k == ArgKey::kSequenceNumber) return read_int(v, key, pending_op_.sequence_number);
      return SUCCESS;
    case ArgsRead::kPython: return read_python_arg(k, key, v, trace_->python_args.back());
    case ArgsRead::kGpu:
      if (k == ArgKey::kDevice) return read_narrow_int(v, key, trace_->gpu_args.back().device);
      if (k == ArgKey::kStream) return read_narrow_int(v, key, trace_->gpu_args.back().stream);
      return SUCCESS;
    default: return SUCCESS;
  }
}

// "Input Dims": one entry per positional input: [] for scalars and None, [d0, d1, ...] for a
// tensor, [[...], [...]] for a TensorList. The numbers go to a reused scratch buffer first, then
// into the pending op's inputs (shapes of rank <= 4 live inside OpInput, see TensorDims), which
// store_op_args hands to the trace's InputLists. A TensorList's member shapes are stepped over:
// no analysis reads them.
error_code TraceBuilder::read_input_dims(od::value& v, std::vector<OpInput>& out) {
  od::array inputs;
  if (auto e = v.get_array().get(inputs)) return e;
  scratch_values_.clear();
  scratch_spans_.clear();
  uint32_t n = 0;  // inputs seen
  for (auto input_result : inputs) {
    od::value input;
    if (auto e = input_result.get(input)) return e;
    const uint32_t input_index = n++;
    od::array items;
    if (auto e = input.get_array().get(items)) {
      if (is_structural_error(e)) return e;
      continue;  // null or a scalar: no shape
    }
    const size_t flat_begin = scratch_values_.size();
    for (auto item_result : items) {
      od::value item;
      if (auto e = item_result.get(item)) return e;
      int64_t x = 0;
      if (item.get_int64().get(x) != SUCCESS) {  // a failure consumes nothing: look at what it is
        od::json_type t;
        if (auto e = item.type().get(t)) return e;
        if (t == od::json_type::array) continue;  // TensorList: one shape per tensor, not kept
        if (auto e = read_int(item, kineto::kInputDims, x)) return e;  // an issue; the dim stays 0
      }
      scratch_values_.push_back(x);
    }
    if (scratch_values_.size() > flat_begin) scratch_spans_.push_back({input_index, flat_begin, scratch_values_.size()});
  }
  if (out.size() < n) out.resize(n);
  for (const ScratchSpan& span : scratch_spans_)
    out[span.input].dims.append(scratch_values_.data() + span.begin, scratch_values_.data() + span.end);
  return SUCCESS;
}

error_code TraceBuilder::read_string_list(od::value& v, std::vector<OpInput>& out, bool concrete) {
  od::array items;
  if (auto e = v.get_array().get(items)) return e;
  scratch_ids_.clear();
  for (auto item_result : items) {
    od::value item;
    if (auto e = item_result.get(item)) return e;
    std::string_view s;
    const error_code e = item.get_string().get(s);
    if (is_structural_error(e)) return e;
    if (e != SUCCESS) s = trimmed(item.raw_json_token());  // a number or null: keep its text
    scratch_ids_.push_back(intern(s));
  }
  if (out.size() < scratch_ids_.size()) out.resize(scratch_ids_.size());
  for (size_t i = 0; i < scratch_ids_.size(); ++i)
    (concrete ? out[i].concrete : out[i].type) = scratch_ids_[i];
  return SUCCESS;
}

error_code TraceBuilder::read_python_arg(ArgKey k, std::string_view key, od::value& v, PythonArgs& out) {
  switch (k) {
    case ArgKey::kPythonId: return read_int(v, key, out.python_id);
    case ArgKey::kPythonParentId: {
      bool null = false;
      if (v.is_null().get(null) == SUCCESS && null) return SUCCESS;  // roots: parent stays kNoId
      return read_int(v, key, out.parent_id);
    }
    case ArgKey::kPythonModuleId: return read_int(v, key, out.module_id);
    default: return SUCCESS;
  }
}

error_code TraceBuilder::read_memory_arg(ArgKey k, std::string_view key, od::value& v, MemoryEvent& out) {
  switch (k) {
    case ArgKey::kDeviceType: return read_narrow_int(v, key, out.device_type);
    case ArgKey::kDeviceId: return read_narrow_int(v, key, out.device_id);
    case ArgKey::kAddr: return read_int(v, key, out.addr);
    case ArgKey::kMemoryBytes: return read_int(v, key, out.bytes);
    case ArgKey::kTotalAllocated: return read_int(v, key, out.total_allocated);
    case ArgKey::kTotalReserved: return read_int(v, key, out.total_reserved);
    default: return SUCCESS;
  }
}

template <typename Int>
error_code TraceBuilder::read_narrow_int(od::value& v, std::string_view key, Int& out) {
  int64_t x = out;
  if (auto e = read_int(v, key, x)) return e;
  if (x < std::numeric_limits<Int>::min() || x > std::numeric_limits<Int>::max()) {
    issue("number_out_of_range", std::string(key) + " = " + std::to_string(x));
    return SUCCESS;
  }
  out = static_cast<Int>(x);
  return SUCCESS;
}

error_code TraceBuilder::read_link_id(od::value& v, std::string_view key, int64_t& out) {
  int64_t x = kNoId;
  if (auto e = read_int(v, key, x)) return e;
  if (x != kNoId && (x < 0 || x > Slice::kMaxLinkId)) {
    issue("number_out_of_range", std::string(key) + " = " + std::to_string(x));
    return SUCCESS;
  }
  out = x;
  return SUCCESS;
}

error_code TraceBuilder::read_metadata_args(od::object args, Event& ev) {
  std::string_view wanted;
  if (ev.name == kineto::kProcessName) ev.meta = MetaKind::kProcessName, wanted = kineto::kMetaName;
  else if (ev.name == kineto::kThreadName) ev.meta = MetaKind::kThreadName, wanted = kineto::kMetaName;
  else if (ev.name == kineto::kProcessLabels) ev.meta = MetaKind::kProcessLabels, wanted = kineto::kMetaLabels;
  else return SUCCESS;
  const error_code e = args.find_field_unordered(wanted).get_string().get(ev.meta_text);
  if (e != SUCCESS) ev.meta = MetaKind::kNone;
  return is_structural_error(e) ? e : SUCCESS;
}

void TraceBuilder::drop_args(const Event& ev) {
  if (ev.slice.args == kNoArgs) return;  // op args wait in pending_op_ until finish_event
  const Category cat = category_of(ev.cat);
  if (cat == Category::kPythonFunction) trace_->python_args.pop_back();
  else if (is_gpu_activity(cat)) trace_->gpu_args.pop_back();
}

bool TraceBuilder::inputs_read(StrId name) {
  if (reads_.op_inputs == nullptr) return true;
  enum : uint8_t { kUnchecked, kRead, kUnread };
  if (name >= inputs_read_.size()) inputs_read_.resize(strings_->size(), kUnchecked);
  uint8_t& verdict = inputs_read_[name];
  if (verdict == kUnchecked) verdict = reads_.op_inputs(strings_->get(name)) ? kRead : kUnread;
  return verdict == kRead;
}

bool TraceBuilder::python_frame_kept(StrId name) {
  if (reads_.python_frame_read == nullptr) return false;
  enum : uint8_t { kUnchecked, kKept, kDropped };
  if (name >= python_frames_kept_.size()) python_frames_kept_.resize(strings_->size(), kUnchecked);
  uint8_t& verdict = python_frames_kept_[name];
  if (verdict == kUnchecked) verdict = reads_.python_frame_read(strings_->get(name)) ? kKept : kDropped;
  return verdict == kKept;
}

int32_t TraceBuilder::frame_file_number(StrId name) {
  if (name >= frame_file_numbers_.size()) frame_file_numbers_.resize(strings_->size(), kUncheckedFrame);
  int32_t& number = frame_file_numbers_[name];
  if (number != kUncheckedFrame) return number;
  const std::string_view frame = strings_->get(name);
  if (is_module_frame(frame)) return number = kModuleFrame;
  const std::string_view file = python_frame_file(frame);
  if (file.empty()) return number = kNoFile;
  const auto [it, added] = file_numbers_.try_emplace(file, static_cast<int32_t>(file_last_kept_.size()));
  if (added) file_last_kept_.emplace_back();
  return number = it->second;
}

// Only a frame inside an earlier-kept frame of its own file is dropped: any call that one
// encloses, the earlier one encloses too, so the files that enclose calls and the order of
// their first such frames (attention_source_files) are what every frame would give.
void TraceBuilder::keep_source_frame(const Slice& frame) {
  const int32_t file = frame_file_number(frame.name);
  if (file < 0) return;
  Span& last = file_last_kept_[static_cast<size_t>(file)];
  if (last.ts_ns <= frame.ts_ns && frame.end_ns() <= last.end_ns) return;
  last = {frame.ts_ns, frame.end_ns()};
  trace_->source_frames.push_back({frame.name, frame.ts_ns, frame.end_ns()});
}

uint8_t TraceBuilder::nesting_verdict(StrId name) {
  if (name >= nesting_verdicts_.size()) nesting_verdicts_.resize(strings_->size(), kUncheckedNesting);
  uint8_t& verdict = nesting_verdicts_[name];
  if (verdict == kUncheckedNesting) {
    const std::string_view text = strings_->get(name);
    verdict = static_cast<uint8_t>((reads_.nested_op_read(text) ? 0 : kUnreadNested) |
                                   (reads_.subtree_read != nullptr && reads_.subtree_read(text) ? kSubtreeRead : 0));
  }
  return verdict;
}

// The op is nested when the innermost open op contains it: that one starts no later, ends no
// earlier and comes first in the file, so the index's nesting order puts it around this one
// too. Anything less certain keeps the op: a partial overlap, or an op of a run that went back
// in time, while it overlaps the time of the ops before (one of those, an attention op, may
// hold it). Kineto writes a thread's ops in one time-ordered run per profiling window.
bool TraceBuilder::keeps_op(const Slice& op, int64_t sequence_number) {
  if (reads_.nested_op_read == nullptr) return true;
  const uint8_t verdict = nesting_verdict(op.name);
  if (op.thread >= nesting_.size()) nesting_.resize(trace_->threads.size());
  ThreadNesting& thread = nesting_[op.thread];
  if (op.ts_ns < thread.last_ts_ns) {
    thread.open.clear();
    thread.unsure_until_ns = std::max(thread.unsure_until_ns, thread.latest_end_ns);
  }
  thread.last_ts_ns = op.ts_ns;
  thread.latest_end_ns = std::max(thread.latest_end_ns, op.end_ns());
  std::vector<OpenOp>& open = thread.open;
  while (!open.empty() && op.ts_ns >= open.back().end_ns) open.pop_back();
  const bool nested = !open.empty() && op.end_ns() <= open.back().end_ns;
  const bool in_read_subtree = !open.empty() && open.back().in_read_subtree;
  open.push_back({op.end_ns(), in_read_subtree || (verdict & kSubtreeRead) != 0});
  const bool unsure = op.ts_ns < thread.unsure_until_ns;
  if (!nested || unsure || in_read_subtree || (verdict & kUnreadNested) == 0 || sequence_number != kNoId) return true;
  ++trace_->nested_ops_left_out;
  return false;
}

uint32_t TraceBuilder::store_op_args(StrId name) {
  OpArgs row;
  row.sequence_number = pending_op_.sequence_number;
  if (!pending_op_.inputs.empty() && inputs_read(name)) row.inputs = trace_->input_lists.intern(pending_op_.inputs);
  return push_op_args(row);
}

uint32_t TraceBuilder::push_op_args(OpArgs row) {
  if (row.inputs.empty() && row.sequence_number == kNoId) return kNoArgs;
  const auto index = static_cast<uint32_t>(trace_->op_args.size());
  trace_->op_args.push_back(row);
  return index;
}

// Slice::thread holds ThreadTable::kMaxThreads ids; a slice of a thread past them is left out
// (the sample names no event: a chunk's slices are absorbed without their event numbers).
bool TraceBuilder::slice_thread_fits(uint32_t thread, StrId name) {
  if (thread < ThreadTable::kMaxThreads) return true;
  const ThreadKey& key = trace_->threads.get(thread);
  trace_->add_issue("too_many_threads", std::string(trace_->strings.get(name)) + " on pid " + std::to_string(key.pid) +
                                            " tid " + std::to_string(key.tid));
  return false;
}

// A GPU slice's External id goes to its GpuArgs row (Slice::link holds its correlation),
// which is made for it when the event had no other GPU args.
void TraceBuilder::keep_gpu_external_id(Slice& s, int64_t external_id) {
  if (s.args == kNoArgs) {
    s.args = static_cast<uint32_t>(trace_->gpu_args.size());
    trace_->gpu_args.emplace_back();
  }
  trace_->gpu_args[s.args].external_id = static_cast<uint32_t>(external_id);  // read_link_id checked its range
}

// Once per event: its parts below are inline (trace_builder.h), so they compile into it.
void TraceBuilder::finish_event(Event& ev) {
  switch (ev.ph) {
    case 'X': return finish_slice(ev);
    case 'i':
    case 'I': return finish_memory_event(ev);
    case 's':
    case 'f':
    case 't': return finish_flow(ev);
    case 'M': return finish_metadata(ev);
    case 'B':
    case 'E': return issue("ignored_begin_end_event", std::string(ev.name));
    case 0: return issue("missing_ph", std::string(ev.name));
    default: return;  // counters, async and other phases attnprof does not use
  }
}

inline void TraceBuilder::finish_slice(Event& ev) {
  if (!slice_times_usable(ev)) return drop_args(ev);
  Slice s;
  s.name = intern(ev.name);
  s.cat = slice_category(ev);
  const uint32_t thread = thread_of(ev.pid, ev.tid);
  if (!slice_thread_fits(thread, s.name)) return drop_args(ev);
  s.thread = thread;
  s.ts_ns = ev.ts;
  s.dur_ns = ev.dur;
  s.args = ev.slice.args;
  s.set_link_id(links_by_correlation(s.cat) ? ev.slice.correlation : ev.slice.external_id);
  if (is_gpu_activity(s.cat) && ev.slice.external_id != kNoId) keep_gpu_external_id(s, ev.slice.external_id);
  // A chunk's ops are decided when the chunk is absorbed, in file order after the ones before it.
  if (s.cat == Category::kCpuOp && mode_ != Mode::kChunk &&
      !keeps_op(s, ev.op_args ? pending_op_.sequence_number : kNoId))
    return;
  if (ev.op_args && has_op_args(s.cat)) s.args = store_op_args(s.name);
  if (s.cat == Category::kPythonFunction && !keeps_python_frame(s)) return drop_args(ev);
  note_launch(s, trace_->event_count - 1);
  trace_->slices.push_back(s);
}

inline bool TraceBuilder::slice_times_usable(Event& ev) {
  if (!ev.has_ts) {
    issue("missing_ts", std::string(ev.name));
    return false;
  }
  if (!ev.has_dur) {
    issue("missing_duration", std::string(ev.name));
    ev.dur = 0;
  } else if (ev.dur < 0) {
    issue("negative_duration", std::string(ev.name) + " dur " + std::to_string(ev.dur) + " ns (set to 0)");
    ev.dur = 0;
  }
  return true;
}

inline Category TraceBuilder::slice_category(const Event& ev) {
  if (ev.has_cat) return category_of(ev.cat);
  // PyTorch's legacy (pre-Kineto) profiler wrote its op ranges without a "cat".
  issue("no_category", std::string(ev.name));
  return Category::kCpuOp;
}

inline bool TraceBuilder::keeps_python_frame(const Slice& frame) {
  ++trace_->python_frames;
  if (reads_.all_python_frames || frame_file_number(frame.name) == kModuleFrame || python_frame_kept(frame.name))
    return true;
  keep_source_frame(frame);
  return false;
}

inline void TraceBuilder::finish_memory_event(Event& ev) {
  if (ev.name != kineto::kMemoryEventName) return;
  if (!ev.has_ts) return issue("missing_ts", "[memory]");
  ev.mem.ts_ns = ev.ts;
  ev.mem.thread = thread_of(ev.pid, ev.tid);
  trace_->memory.push_back(ev.mem);
}

inline void TraceBuilder::finish_flow(const Event& ev) {
  if (!ev.has_ts || !ev.has_id) return issue(ev.has_ts ? "flow_without_id" : "missing_ts", std::string("flow ") + ev.ph);
  // Interned even when flows are not kept: a chunk parsed elsewhere interns it too, and
  // the string pool is then numbered alike with any number of threads.
  const StrId cat = intern(ev.cat);
  if (reads_.flows) trace_->flows.push_back(FlowEvent{ev.flow_id, ev.ph, cat, ev.pid, ev.tid, ev.ts});
}

inline void TraceBuilder::finish_metadata(const Event& ev) {
  switch (ev.meta) {
    case MetaKind::kProcessName: trace_->meta.process_names[ev.pid] = std::string(ev.meta_text); break;
    case MetaKind::kProcessLabels: trace_->meta.process_labels[ev.pid] = std::string(ev.meta_text); break;
    case MetaKind::kThreadName: trace_->meta.thread_names[{ev.pid, ev.tid}] = std::string(ev.meta_text); break;
    case MetaKind::kNone: break;
  }
}

// ---- chunks parsed elsewhere (chunks.h) ------------------------------------------------

void TraceBuilder::absorb_issues(const Trace& part, int64_t event_base) {
  for (const IngestIssue& from : part.issues) {
    IngestIssue& into = trace_->issue_of(from.kind);
    into.count += from.count;
    for (const std::string& sample : from.samples) {
      if (into.samples.size() >= IngestIssue::kMaxSamples) break;
      into.samples.push_back(renumbered_sample(sample, event_base));
    }
  }
}

void TraceBuilder::begin_chunk(Trace& part) {
  trace_ = &part;
  string_ids_.clear();
  last_thread_ = kNoThread;
  launch_events_.clear();
  std::fill(file_last_kept_.begin(), file_last_kept_.end(), Span{});  // the chunks of a context are not neighbours
}

// A chunk's strings seen before by its context were mapped when the chunk that first held
// them was absorbed (earlier in the file); the ones new to the context, in the order the
// chunk first held them, are interned here.
const std::vector<StrId>& TraceBuilder::global_string_ids(ParsedChunk& chunk) {
  std::vector<StrId>& to_global = chunk.context->to_global;
  to_global.resize(chunk.first_new_string);
  for (const std::string_view text : chunk.new_strings) to_global.push_back(intern(text));
  return to_global;
}

// A chunk's input list as one of this trace's, its strings renumbered (once per list and chunk).
OpInputs TraceBuilder::absorbed_inputs(OpInputs inputs, const std::vector<StrId>& str) {
  auto [it, added] = absorbed_lists_.try_emplace(inputs.list());
  if (!added) return it->second;
  std::vector<OpInput>& renumbered = scratch_inputs_;
  renumbered.assign(inputs.begin(), inputs.end());
  for (OpInput& input : renumbered) {
    input.type = str[input.type];
    input.concrete = str[input.concrete];
  }
  return it->second = trace_->input_lists.intern(renumbered);
}

// long: every table of the chunk is renumbered through the same maps built at the top (strings,
// text ids, threads, args rows), once per chunk, in the order the tables are appended
void TraceBuilder::absorb(ParsedChunk& chunk) {
  Trace& part = chunk.part;
  const int64_t event_base = trace_->event_count;
  const std::vector<StrId>& str = global_string_ids(chunk);
  std::vector<int64_t> text_ids(part.meta.string_ids.size());  // chunk id kChunkTextIdBase + i -> this trace's id
  for (size_t i = 0; i < text_ids.size(); ++i) text_ids[i] = string_id(part.meta.string_ids[i]);
  const auto id = [&](int64_t x) {
    const auto i = static_cast<uint64_t>(x) - static_cast<uint64_t>(kChunkTextIdBase);
    return i < text_ids.size() ? text_ids[i] : x;
  };

  absorb_issues(part, event_base);
  const auto python_base = static_cast<uint32_t>(trace_->python_args.size());
  const auto gpu_base = static_cast<uint32_t>(trace_->gpu_args.size());
  std::vector<uint32_t> threads(part.threads.size());
  for (size_t i = 0; i < threads.size(); ++i) {
    const ThreadKey& key = part.threads.get(static_cast<uint32_t>(i));
    threads[i] = trace_->threads.intern(id(key.pid), id(key.tid));
  }
  absorbed_lists_.clear();
  size_t launch = 0;
  for (Slice s : part.slices) {
    s.name = str[s.name];
    if (!slice_thread_fits(threads[s.thread], s.name)) continue;
    s.thread = threads[s.thread];
    if (s.cat == Category::kCpuOp &&
        !keeps_op(s, s.args != kNoArgs ? part.op_args[s.args].sequence_number : kNoId))
      continue;
    if (s.args != kNoArgs) {
      if (has_op_args(s.cat)) {  // kept by the chunk's builder (its reads): renumbered, or dropped here
        OpArgs row = part.op_args[s.args];
        if (!row.inputs.empty()) row.inputs = inputs_read(s.name) ? absorbed_inputs(row.inputs, str) : OpInputs();
        s.args = push_op_args(row);
      } else if (s.cat == Category::kPythonFunction) {
        s.args = reads_.python_ids ? s.args + python_base : kNoArgs;
      } else if (is_gpu_activity(s.cat)) {
        s.args += gpu_base;
      }
    }
    if (is_correlated_launch(s)) check_launch(s, event_base + chunk.launch_events[launch++]);
    trace_->slices.push_back(s);
  }
  if (reads_.python_ids)
    trace_->python_args.insert(trace_->python_args.end(), part.python_args.begin(), part.python_args.end());
  trace_->gpu_args.insert(trace_->gpu_args.end(), part.gpu_args.begin(), part.gpu_args.end());
  for (MemoryEvent m : part.memory) {
    m.thread = threads[m.thread];
    trace_->memory.push_back(m);
  }
  for (SourceFrame f : part.source_frames) {
    f.name = str[f.name];
    trace_->source_frames.push_back(f);
  }
  trace_->python_frames += part.python_frames;
  if (reads_.flows) {
    for (FlowEvent f : part.flows) {
      f.cat = str[f.cat];
      f.pid = id(f.pid);
      f.tid = id(f.tid);
      trace_->flows.push_back(f);
    }
  }
  // Later metadata events win, as they do within one chunk.
  for (auto& [pid, name] : part.meta.process_names) trace_->meta.process_names[id(pid)] = std::move(name);
  for (auto& [pid, label] : part.meta.process_labels) trace_->meta.process_labels[id(pid)] = std::move(label);
  for (auto& [key, name] : part.meta.thread_names) trace_->meta.thread_names[{id(key.first), id(key.second)}] = std::move(name);
  trace_->event_count += part.event_count;
}

// ---- top-level keys ----------------------------------------------------------------------

namespace {

// Profiler flags are written as 1 by torch.profiler; accept true and "1" as well.
bool truthy(od::value v) {
  od::json_type t;
  if (v.type().get(t) != SUCCESS) return false;
  if (t == od::json_type::boolean) return v.get_bool().value_unsafe();
  if (t == od::json_type::number) {
    double d = 0;
    return v.get_double().get(d) == SUCCESS && d != 0;
  }
  if (t == od::json_type::string) {
    std::string_view s;
    return v.get_string().get(s) == SUCCESS && (s == "1" || s == "true" || s == "True");
  }
  return false;
}

}  // namespace

// long: one case per top-level key of a Kineto trace that ingest keeps
error_code TraceBuilder::add_top_level(std::string_view key, od::value v) {
  TraceMetadata& meta = trace_->meta;
  if (key == kineto::kSchemaVersion) {
    int64_t x = 0;
    if (auto e = read_int(v, key, x)) return e;
    meta.schema_version = static_cast<int>(x);
  } else if (key == kineto::kDeviceProperties) {
    return read_device_properties(v);
  } else if (key == kineto::kDistributedInfo) {
    return read_distributed_info(v);
  } else if (key == kineto::kDisplayTimeUnit) {
    std::string_view s;
    const error_code e = v.get_string().get(s);
    if (e == SUCCESS) meta.display_time_unit = std::string(s);
    return is_structural_error(e) ? e : SUCCESS;
  } else if (key == kineto::kBaseTimeNanoseconds) {
    return read_int(v, key, meta.base_time_ns);
  } else if (key == kineto::kTraceName) {
    std::string_view s;
    const error_code e = v.get_string().get(s);
    if (e == SUCCESS) meta.trace_name = std::string(s);
    return is_structural_error(e) ? e : SUCCESS;
  } else if (ends_with(key, kineto::kVersionSuffix)) {
    od::json_type t;
    if (auto e = v.type().get(t)) return e;
    std::string_view s;
    if (t == od::json_type::string) {
      if (auto e = v.get_string().get(s)) return is_structural_error(e) ? e : SUCCESS;
    } else if (t == od::json_type::number) {
      s = trimmed(v.raw_json_token());
    } else {
      return SUCCESS;
    }
    meta.versions.emplace_back(std::string(key), std::string(s));
  } else if (key == kineto::kRecordShapes) {
    meta.record_shapes = truthy(v);
  } else if (key == kineto::kProfileMemory) {
    meta.profile_memory = truthy(v);
  } else if (key == kineto::kWithStack) {
    meta.with_stack = truthy(v);
  } else if (key == kineto::kWithModules) {
    meta.with_modules = truthy(v);
  } else if (key == kineto::kWithFlops) {
    meta.with_flops = truthy(v);
  }
  return SUCCESS;
}

// long: one case per key of a deviceProperties entry that ingest keeps
error_code TraceBuilder::read_device_properties(od::value v) {
  od::array devices;
  if (auto e = v.get_array().get(devices)) return is_structural_error(e) ? e : SUCCESS;
  for (auto device_result : devices) {
    od::object device;
    if (auto e = device_result.get_object().get(device)) {
      if (is_structural_error(e)) return e;
      continue;
    }
    DeviceProperties props;
    for (auto field_result : device) {
      std::string_view key;
      if (auto e = field_result.unescaped_key().get(key)) return e;
      od::value fv;
      if (auto e = field_result.value().get(fv)) return e;
      int64_t x = 0;
      error_code e = SUCCESS;
      if (key == kineto::kDeviceName) {
        std::string_view s;
        e = fv.get_string().get(s);
        if (e == SUCCESS) props.name = std::string(s);
      } else if (key == kineto::kDeviceIndex) {
        e = read_int(fv, key, props.id);
      } else if (key == kineto::kTotalGlobalMem) {
        e = read_int(fv, key, props.total_global_mem);
      } else if (key == kineto::kComputeMajor) {
        e = read_int(fv, key, x);
        props.compute_major = static_cast<int>(x);
      } else if (key == kineto::kComputeMinor) {
        e = read_int(fv, key, x);
        props.compute_minor = static_cast<int>(x);
      } else if (key == kineto::kNumSms) {
        e = read_int(fv, key, x);
        props.num_sms = static_cast<int>(x);
      } else if (key == kineto::kWarpSize) {
        e = read_int(fv, key, x);
        props.warp_size = static_cast<int>(x);
      }
      if (is_structural_error(e)) return e;
    }
    trace_->meta.devices.push_back(std::move(props));
  }
  return SUCCESS;
}

// A pg_config entry's member ranks; a non-integer member is skipped.
error_code TraceBuilder::read_rank_list(od::value& v, std::vector<int64_t>& out) {
  od::array items;
  if (auto e = v.get_array().get(items)) return is_structural_error(e) ? e : SUCCESS;
  for (auto item_result : items) {
    int64_t rank = 0;
    const error_code e = item_result.get_int64().get(rank);
    if (is_structural_error(e)) return e;
    if (e == SUCCESS) out.push_back(rank);
  }
  return SUCCESS;
}

// distributedInfo.pg_config; an entry of another form is skipped, not an error.
// long: one case per key of a distributedInfo pg_config entry that ingest keeps
error_code TraceBuilder::read_process_groups(od::value& v, std::vector<ProcessGroupInfo>& groups) {
  od::array entries;
  if (auto e = v.get_array().get(entries)) return is_structural_error(e) ? e : SUCCESS;
  for (auto entry_result : entries) {
    od::object entry;
    if (auto e = entry_result.get_object().get(entry)) {
      if (is_structural_error(e)) return e;
      continue;
    }
    ProcessGroupInfo group;
    for (auto field_result : entry) {
      std::string_view key, s;
      if (auto e = field_result.unescaped_key().get(key)) return e;
      od::value fv;
      if (auto e = field_result.value().get(fv)) return e;
      error_code e = SUCCESS;
      if (key == kineto::kPgName) {
        if ((e = fv.get_string().get(s)) == SUCCESS) group.name = std::string(s);
      } else if (key == kineto::kPgDesc) {
        if ((e = fv.get_string().get(s)) == SUCCESS) group.desc = std::string(s);
      } else if (key == kineto::kPgSize) {
        e = read_int(fv, key, group.size);
      } else if (key == kineto::kPgRanks) {
        e = read_rank_list(fv, group.ranks);
      }
      if (is_structural_error(e)) return e;
    }
    groups.push_back(std::move(group));
  }
  return SUCCESS;
}

error_code TraceBuilder::read_distributed_info(od::value v) {
  od::object info;
  if (auto e = v.get_object().get(info)) return is_structural_error(e) ? e : SUCCESS;
  DistributedInfo dist;
  for (auto field_result : info) {
    std::string_view key;
    if (auto e = field_result.unescaped_key().get(key)) return e;
    od::value fv;
    if (auto e = field_result.value().get(fv)) return e;
    int64_t x = -1;
    error_code e = SUCCESS;
    std::string_view s;
    if (key == kineto::kBackend) {
      e = fv.get_string().get(s);
      if (e == SUCCESS) dist.backend = std::string(s);
    } else if (key == kineto::kRank) {
      e = read_int(fv, key, x);
      dist.rank = static_cast<int>(x);
    } else if (key == kineto::kWorldSize) {
      e = read_int(fv, key, x);
      dist.world_size = static_cast<int>(x);
    } else if (key == kineto::kNcclVersion) {
      e = fv.get_string().get(s);
      if (e == SUCCESS) trace_->meta.versions.emplace_back(std::string(kineto::kNcclVersion), std::string(s));
    } else if (key == kineto::kPgConfig) {
      e = read_process_groups(fv, dist.groups);
    }
    if (is_structural_error(e)) return e;
  }
  trace_->meta.distributed = std::move(dist);
  return SUCCESS;
}

}  // namespace attnprof::ingest
