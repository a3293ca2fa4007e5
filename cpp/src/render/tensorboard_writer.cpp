// TensorBoard event files (tensorboard.h): Event protobufs from tensorboard_event.proto in
// TFRecord frames, plus the annotated trace where the PyTorch profiler plugin finds it.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <chrono>
#include <filesystem>
#include <fmt/format.h>

#include <map>
#include <system_error>

#include "attnprof/io.h"
#include "attnprof/overlay.h"
#include "attnprof/peak_memory.h"
#include "attnprof/report_view.h"
#include "attnprof/tensorboard.h"
#include "tensorboard_event.pb.h"

namespace attnprof {
namespace {

namespace fs = std::filesystem;

constexpr const char* kEventFileMarker = ".attnprof.";  // our event files: ...tfevents.<t>.<host>.attnprof.<run>
constexpr const char* kTextTag = "attnprof/report";

std::array<uint32_t, 256> make_crc32c_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ ((crc & 1u) ? 0x82F63B78u : 0u);  // Castagnoli, reflected
    table[i] = crc;
  }
  return table;
}

void put_le(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((value >> (8 * i)) & 0xFF);
}

std::string layer_tag(int64_t index, int width, const char* what) {
  return fmt::format("layer/{:0{}d}/{}", index, width, what);
}

// Step of the next run: one more than the number of attnprof event files already in `dir`.
int64_t next_run_index(const fs::path& dir) {
  std::error_code ec;
  int64_t count = 0;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find("tfevents") != std::string::npos && name.find(kEventFileMarker) != std::string::npos) ++count;
  }
  return count;
}

std::string host_name() {
  char buf[256] = {0};
  if (::gethostname(buf, sizeof(buf) - 1) != 0 || buf[0] == '\0') return "localhost";
  std::string host(buf);
  std::replace(host.begin(), host.end(), '/', '_');
  return host;
}

// "…/llama_sdpa.pt.trace.json.gz" -> "llama_sdpa": letters, digits, '_' and '-' only, so the
// plugin's ^(.*?)(\.\d+)?\.pt\.trace\.json(\.gz)?$ reads our run index as the span.
std::string worker_name(const std::string& explicit_name, const std::string& trace_path) {
  std::string name = explicit_name;
  if (name.empty() && !trace_path.empty()) {
    name = fs::path(trace_path).filename().string();
    for (const char* suffix : {".gz", ".json", ".trace", ".pt"})
      if (name.size() > std::strlen(suffix) && name.ends_with(suffix)) name.resize(name.size() - std::strlen(suffix));
  }
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '_';
  return name.empty() ? "attnprof" : name;
}

std::string serialized(const tensorboard::Event& event) {
  std::string bytes;
  event.SerializeToString(&bytes);
  return tfrecord_frame(bytes);
}

tensorboard::Event scalars_event(const Report& report, int64_t step, double wall_time) {
  tensorboard::Event event;
  event.set_wall_time(wall_time);
  event.set_step(step);
  for (const auto& [tag, value] : tensorboard_scalars(report)) {
    auto* v = event.mutable_summary()->add_value();
    v->set_tag(tag);
    v->set_simple_value(static_cast<float>(value));
  }
  return event;
}

// The text plugin's format: a DT_STRING tensor with plugin_name "text".
tensorboard::Event text_event(const std::string& markdown, int64_t step, double wall_time) {
  tensorboard::Event event;
  event.set_wall_time(wall_time);
  event.set_step(step);
  auto* v = event.mutable_summary()->add_value();
  v->set_tag(kTextTag);
  v->mutable_metadata()->mutable_plugin_data()->set_plugin_name("text");
  v->mutable_metadata()->set_data_class(tensorboard::DATA_CLASS_TENSOR);
  auto* tensor = v->mutable_tensor();
  tensor->set_dtype(tensorboard::DT_STRING);
  tensor->mutable_tensor_shape();  // rank 0: one string
  tensor->add_string_val(markdown);
  return event;
}

}  // namespace

uint32_t crc32c(std::string_view data) {
  static const std::array<uint32_t, 256> table = make_crc32c_table();
  uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char c : data) crc = table[(crc ^ c) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

uint32_t masked_crc32c(std::string_view data) {
  const uint32_t crc = crc32c(data);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

std::string tfrecord_frame(std::string_view payload) {
  std::string out;
  out.reserve(payload.size() + 16);
  put_le(out, payload.size(), 8);
  put_le(out, masked_crc32c(out), 4);
  out.append(payload);
  put_le(out, masked_crc32c(payload), 4);
  return out;
}

std::vector<std::pair<std::string, double>> tensorboard_scalars(const Report& report) {
  const Summary& s = report.summary;
  std::vector<std::pair<std::string, double>> out = {
      {"attention/calls", static_cast<double>(s.call_count)},
  };
  if (!device_time_unknown(s)) {
    out.push_back({"attention/fused_time_fraction", s.fused_time_fraction});
    out.push_back({"attention/fused_call_fraction", s.fused_call_fraction});
    out.push_back({"attention/device_time_us", s.attention_device_time_us});
  }
  if (s.has_gpu) out.push_back({"attention/share_of_gpu_time", s.attention_share});
  if (const int64_t peak = report_peak_bytes(report); peak >= 0)
    out.push_back({"memory/peak_bytes", static_cast<double>(peak)});
  int64_t max_index = 0;
  for (const Layer& l : report.layers) max_index = std::max(max_index, l.index);
  const int width = std::max<int>(2, static_cast<int>(fmt::format("{}", max_index).size()));
  for (const Layer& l : report.layers) {
    // A layer whose kernels were not recorded (graph capture) has no time to plot, not 0.
    if (!l.device_time_unknown) {
      out.push_back({layer_tag(l.index, width, "device_time_us"), l.device_time_us});
      out.push_back({layer_tag(l.index, width, "fused_time_fraction"), l.fused_time_fraction});
    }
    if (l.cost && l.cost->peak_bytes >= 0)
      out.push_back({layer_tag(l.index, width, "peak_bytes"), static_cast<double>(l.cost->peak_bytes)});
  }
  // attnprof.verify's measured speed-ups (a fix verified twice, for two findings, gets _2, ...).
  if (report.verification) {
    std::map<std::string, int> seen;
    for (const FixVerification& f : report.verification->fixes) {
      if (f.pairs == 0) continue;
      const int n = ++seen[f.fix];
      const std::string tag = "verify/" + f.fix + (n > 1 ? fmt::format("_{}", n) : "");
      out.push_back({tag + "/speedup", f.speedup});
      if (f.speedup_ci.size() == 2) {
        out.push_back({tag + "/speedup_ci_low", f.speedup_ci[0]});
        out.push_back({tag + "/speedup_ci_high", f.speedup_ci[1]});
      }
    }
  }
  return out;
}

Result<int64_t> write_tensorboard_events(const Report& report, const std::string& dir,
                                         const TensorBoardOptions& options, std::string_view annotated_trace) {
  std::error_code ec;
  const fs::path root(dir);
  fs::create_directories(root, ec);
  if (ec || !fs::is_directory(root)) return make_error(ErrorCode::kIoError, "cannot create directory " + dir);
  const int64_t step = next_run_index(root);
  const double wall_time =
      options.wall_time > 0
          ? options.wall_time
          : std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();

  if (!annotated_trace.empty()) {
    const fs::path target =
        root / fmt::format("{}.{}.pt.trace.json.gz", worker_name(options.worker, options.trace_path), step);
    // The annotated trace (overlay included), so the plugin's trace view shows attention too.
    auto compressed = gzip_compress(annotated_trace);
    if (!compressed) return compressed.error();
    if (auto st = write_file_atomic(target.string(), *compressed); !st) return st.error();
  }

  tensorboard::Event version;
  version.set_wall_time(wall_time);
  version.set_step(step);
  version.set_file_version("brain.Event:2");
  std::string records = serialized(version) + serialized(scalars_event(report, step, wall_time));
  if (!options.markdown.empty()) records += serialized(text_event(options.markdown, step, wall_time));
  const std::string name = fmt::format("events.out.tfevents.{:010d}.{}{}{:06d}", static_cast<int64_t>(wall_time),
                                        host_name(), kEventFileMarker, step);
  if (auto st = write_file_atomic((root / name).string(), records); !st) return st.error();
  return step;
}

}  // namespace attnprof
