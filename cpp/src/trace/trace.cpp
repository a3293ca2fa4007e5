#include "attnprof/trace.h"

#include <functional>

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
  if (!links_by_correlation(s.cat)) return s.link_id;
  const GpuArgs* gpu = gpu_args_of(s);
  return gpu ? gpu->external_id : kNoId;
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

}  // namespace attnprof
