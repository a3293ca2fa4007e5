#include "attnprof/trace.h"

#include <functional>
#include <iterator>

#include "attnprof/kineto_keys.h"

namespace attnprof {

void TensorDims::append(const int64_t* first, const int64_t* last) {
  const size_t n = static_cast<size_t>(last - first);
  if (size_ + n > capacity_) {
    const size_t capacity = std::max<size_t>(size_ + n, size_t{capacity_} * 2);
    auto* grown = new int64_t[capacity];
    std::copy(begin(), end(), grown);
    delete[] heap_;
    heap_ = grown;
    capacity_ = static_cast<uint32_t>(capacity);
  }
  std::copy(first, last, (heap_ ? heap_ : inline_) + size_);
  size_ += static_cast<uint32_t>(n);
}

size_t InputLists::Hash::operator()(const std::vector<OpInput>* list) const {
  size_t h = list->size();
  const auto mix = [&h](uint64_t x) { h ^= std::hash<uint64_t>{}(x) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  for (const OpInput& input : *list) {
    mix(input.type);
    mix(input.concrete);
    mix(input.dims.size());
    for (const int64_t d : input.dims) mix(static_cast<uint64_t>(d));
  }
  return h;
}

bool InputLists::Equal::operator()(const std::vector<OpInput>* a, const std::vector<OpInput>* b) const {
  return std::equal(a->begin(), a->end(), b->begin(), b->end(), [](const OpInput& x, const OpInput& y) {
    return x.type == y.type && x.concrete == y.concrete && x.dims == y.dims;
  });
}

OpInputs InputLists::intern(const std::vector<OpInput>& inputs) {
  if (auto it = index_.find(&inputs); it != index_.end()) return OpInputs(*it);
  const std::vector<OpInput>* stored = &lists_.emplace_back(inputs);
  index_.insert(stored);
  return OpInputs(stored);
}

void InputLists::clear() {
  index_.clear();
  lists_.clear();
}

StringPool::StringPool() { intern(""); }

StrId StringPool::intern(std::string_view s) {
  if (auto it = index_.find(s); it != index_.end()) return it->second;
  const auto id = static_cast<StrId>(strings_.size());
  strings_.emplace_back(s);
  index_.emplace(std::string_view(strings_.back()), id);  // view into deque storage: stable
  return id;
}

std::optional<StrId> StringPool::find(std::string_view s) const {
  if (auto it = index_.find(s); it != index_.end()) return it->second;
  return std::nullopt;
}

uint32_t ThreadTable::intern(int64_t pid, int64_t tid) {
  const auto [it, inserted] = index_.try_emplace(ThreadKey{pid, tid}, static_cast<uint32_t>(keys_.size()));
  if (inserted) keys_.push_back(it->first);
  return it->second;
}

const char* category_name(Category c) {
  for (const kineto::CategorySpelling& spelling : kineto::kCategories)
    if (spelling.category == c) return spelling.text.data();  // the literals are NUL-terminated
  return "other";
}

bool is_module_frame(std::string_view frame_name) { return frame_name.starts_with(kineto::kModuleFramePrefix); }

std::string_view python_frame_file(std::string_view frame_name) {
  if (frame_name.empty() || frame_name.front() == '<' || is_module_frame(frame_name)) return {};
  const size_t colon = frame_name.find("): ");
  if (colon == std::string_view::npos) return {};
  const size_t paren = frame_name.rfind('(', colon);
  if (paren == std::string_view::npos || paren == 0) return {};
  return frame_name.substr(0, paren);
}

const OpArgs* Trace::op_args_of(const Slice& s) const {
  if (s.args == kNoArgs) return nullptr;
  if (s.cat != Category::kCpuOp && s.cat != Category::kUserAnnotation) return nullptr;
  return s.args < op_args.size() ? &op_args[s.args] : nullptr;
}

const PythonArgs* Trace::python_args_of(const Slice& s) const {
  if (s.args == kNoArgs || s.cat != Category::kPythonFunction) return nullptr;
  return s.args < python_args.size() ? &python_args[s.args] : nullptr;
}

const GpuArgs* Trace::gpu_args_of(const Slice& s) const {
  if (s.args == kNoArgs) return nullptr;
  if (!is_gpu_activity(s.cat)) return nullptr;
  return s.args < gpu_args.size() ? &gpu_args[s.args] : nullptr;
}

int64_t Trace::external_id_of(const Slice& s) const {
  if (!links_by_correlation(s.cat)) return s.link_id();
  const GpuArgs* gpu = gpu_args_of(s);
  return gpu ? Slice::link_id_of(gpu->external_id) : kNoId;
}

IngestIssue& Trace::issue_of(std::string_view kind) {
  for (IngestIssue& issue : issues)
    if (issue.kind == kind) return issue;
  return issues.emplace_back(IngestIssue{std::string(kind), 0, {}});
}

void Trace::add_issue(std::string_view kind, std::string sample) {
  IngestIssue& issue = issue_of(kind);
  ++issue.count;
  if (issue.samples.size() < IngestIssue::kMaxSamples) issue.samples.push_back(std::move(sample));
}

// ---- MemoryEvents -------------------------------------------------------------------------

namespace {

// Differences are taken in uint64 (wrapping), so any int64 values round-trip exactly.
uint64_t zigzag(uint64_t delta) { return (delta << 1) ^ (0 - (delta >> 63)); }
uint64_t unzigzag(uint64_t z) { return (z >> 1) ^ (0 - (z & 1)); }

void put_varint(std::vector<uint8_t>& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<uint8_t>(v));
}

uint64_t get_varint(const uint8_t* data, size_t& offset) {
  uint64_t v = 0;
  for (int shift = 0;; shift += 7) {
    const uint8_t byte = data[offset++];
    v |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if (byte < 0x80) return v;
  }
}

uint64_t u(int64_t x) { return static_cast<uint64_t>(x); }

// What a block's first event is taken to follow: all zero, so its fields are stored whole.
constexpr MemoryEvent kBeforeBlock{.total_allocated = 0, .total_reserved = 0, .device_id = 0};

// What each field is predicted from: the event before (Total Allocated: plus this one's Bytes).
uint64_t predicted_total(const MemoryEvent& previous, int64_t bytes) { return u(previous.total_allocated) + u(bytes); }

}  // namespace

// An event is its time, address and size as zigzag varints of their differences, then one
// byte saying which of the other five fields differ from what they are predicted to be (the
// event before; Total Allocated: plus Bytes), then those differences. An allocator's stream
// nearly always keeps those five: 4 bytes an event fewer than writing each one's 0.
void MemoryEvents::push_back(const MemoryEvent& e) {
  if (size_ % kBlock == 0) {
    block_offsets_.push_back(data_.size());
    last_ = kBeforeBlock;
  }
  const MemoryEvent& p = last_;
  put_varint(data_, zigzag(u(e.ts_ns) - u(p.ts_ns)));
  put_varint(data_, zigzag(u(e.addr) - u(p.addr)));
  put_varint(data_, zigzag(u(e.bytes)));
  const uint64_t rest[] = {
      zigzag(u(e.total_allocated) - predicted_total(p, e.bytes)), zigzag(u(e.total_reserved) - u(p.total_reserved)),
      zigzag(uint64_t{e.thread} - uint64_t{p.thread}), zigzag(u(e.device_type) - u(p.device_type)),
      zigzag(u(e.device_id) - u(p.device_id))};
  uint8_t present = 0;
  for (size_t i = 0; i < std::size(rest); ++i) present |= static_cast<uint8_t>((rest[i] != 0) << i);
  data_.push_back(present);
  for (size_t i = 0; i < std::size(rest); ++i)
    if (rest[i] != 0) put_varint(data_, rest[i]);
  last_ = e;
  ++size_;
}

size_t MemoryEvents::decode(size_t offset, const MemoryEvent& p, MemoryEvent& e) const {
  const uint8_t* d = data_.data();
  e.ts_ns = static_cast<int64_t>(u(p.ts_ns) + unzigzag(get_varint(d, offset)));
  e.addr = static_cast<int64_t>(u(p.addr) + unzigzag(get_varint(d, offset)));
  e.bytes = static_cast<int64_t>(unzigzag(get_varint(d, offset)));
  const uint8_t present = d[offset++];
  const auto next = [&](int field) { return present & (1 << field) ? unzigzag(get_varint(d, offset)) : 0; };
  e.total_allocated = static_cast<int64_t>(predicted_total(p, e.bytes) + next(0));
  e.total_reserved = static_cast<int64_t>(u(p.total_reserved) + next(1));
  e.thread = static_cast<uint32_t>(uint64_t{p.thread} + next(2));
  e.device_type = static_cast<int16_t>(u(p.device_type) + next(3));
  e.device_id = static_cast<int16_t>(u(p.device_id) + next(4));
  return offset;
}

MemoryEvent MemoryEvents::operator[](size_t i) const {
  MemoryEvent out[kBlock];
  read_block(i / kBlock, out);
  return out[i % kBlock];
}

size_t MemoryEvents::read_block(size_t block, MemoryEvent* out) const {
  size_t n = 0;
  for (auto it = at_block(block); n < kBlock && it != end(); ++n) {
    out[n] = *it;
    if (n + 1 < kBlock) ++it;  // not into the next block
  }
  return n;
}

void MemoryEvents::const_iterator::load() {
  if (events_ == nullptr || index_ >= events_->size_) return;
  if (index_ % kBlock == 0) {
    offset_ = events_->block_offsets_[index_ / kBlock];
    current_ = kBeforeBlock;
  }
  const MemoryEvent previous = current_;
  offset_ = events_->decode(offset_, previous, current_);
}

void MemoryEvents::clear() {
  data_.clear();
  block_offsets_.clear();
  size_ = 0;
  last_ = MemoryEvent{};
}

void MemoryEvents::reserve(size_t events) {
  data_.reserve(events * 16);
  block_offsets_.reserve(events / kBlock + 1);
}

}  // namespace attnprof
