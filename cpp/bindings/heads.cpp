// attnprof._core heads functions: captured Q/K(/V, W_O) arrays -> the heads section of a
// Report. Arrays arrive as float32 C-contiguous numpy arrays (no copy); all work is C++.
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "attnprof/heads.h"
#include "attnprof/report_json.h"
#include "binding.h"

namespace nb = nanobind;

namespace attnprof::bindings {
namespace {

using Array = nb::ndarray<const float, nb::c_contig, nb::device::cpu>;

// One captured attention call (one layer) as Python hands it over.
struct CapturedLayer {
  int64_t layer = 0;
  Array q, k;
  std::optional<Array> v, w_o;
  bool causal = false;
  double scale = 0;
  std::vector<int64_t> key_lengths;
};

HeadInputs inputs_of(const CapturedLayer& c) {
  auto require4 = [](const Array& a, const char* what) {
    if (a.ndim() != 4) throw nb::value_error((std::string(what) + " must be [B, H, S, D]").c_str());
  };
  require4(c.q, "q");
  require4(c.k, "k");
  HeadInputs in;
  in.layer = c.layer;
  in.q = c.q.data();
  in.k = c.k.data();
  in.B = static_cast<int64_t>(c.q.shape(0));
  in.Hq = static_cast<int64_t>(c.q.shape(1));
  in.Sq = static_cast<int64_t>(c.q.shape(2));
  in.D = static_cast<int64_t>(c.q.shape(3));
  in.Hkv = static_cast<int64_t>(c.k.shape(1));
  in.Skv = static_cast<int64_t>(c.k.shape(2));
  if (static_cast<int64_t>(c.k.shape(0)) != in.B || static_cast<int64_t>(c.k.shape(3)) != in.D)
    throw nb::value_error("q and k must share B and D");
  if (c.v) {
    require4(*c.v, "v");
    if (static_cast<int64_t>(c.v->shape(2)) != in.Skv || static_cast<int64_t>(c.v->shape(1)) != in.Hkv)
      throw nb::value_error("v must be [B, Hkv, Skv, Dv] like k");
    in.v = c.v->data();
    in.Dv = static_cast<int64_t>(c.v->shape(3));
    if (c.w_o) {
      if (c.w_o->ndim() != 2 || static_cast<int64_t>(c.w_o->shape(1)) != in.Hq * in.Dv)
        throw nb::value_error("w_o must be [hidden, Hq * Dv]");
      in.w_o = c.w_o->data();
      in.hidden = static_cast<int64_t>(c.w_o->shape(0));
    }
  }
  in.causal = c.causal;
  in.scale = c.scale;
  in.key_lengths = c.key_lengths;
  return in;
}

// Computes every layer, summarises, adds the sliding-window verdicts of the report's calls
// (with the window the capture saw), and returns the report JSON with its heads section.
std::string attach_heads(const std::string& report_json, const std::vector<CapturedLayer>& layers,
                         const HeadOptions& options) {
  Report report;
  if (!report_json.empty()) {
    auto parsed = report_from_json(report_json);
    if (!parsed) throw nb::value_error(parsed.error().message.c_str());
    report = std::move(parsed).value();
  } else {
    report.tool_version = ATTNPROF_VERSION;
  }
  std::vector<HeadInputs> inputs;
  for (const auto& l : layers) inputs.push_back(inputs_of(l));
  std::vector<HeadStats> all;
  HeadModelShape shape;
  {
    nb::gil_scoped_release release;
    for (const auto& in : inputs) {
      auto stats = compute_head_stats(in, options);
      if (!stats) {
        nb::gil_scoped_acquire acquire;
        throw nb::value_error(stats.error().message.c_str());
      }
      for (auto& s : stats.value()) all.push_back(std::move(s));
      shape = {in.Hq, in.Hkv, in.D, in.Dv};
    }
  }
  HeadsSection section = summarize_heads(std::move(all), shape, options);
  section.sliding_window = sliding_window_effectiveness(report, nullptr, options.model_window);
  for (auto& w : section.sliding_window)
    if (options.model_window > 0) w.window_source = "capture";
  report.heads = std::move(section);
  return report_to_json(report, /*pretty=*/false);
}

void bind_heads(nb::module_& m) {
  nb::class_<CapturedLayer>(m, "CapturedLayer")
      .def(nb::init<>())
      .def_rw("layer", &CapturedLayer::layer)
      .def_rw("q", &CapturedLayer::q)
      .def_rw("k", &CapturedLayer::k)
      .def_rw("v", &CapturedLayer::v)
      .def_rw("w_o", &CapturedLayer::w_o)
      .def_rw("causal", &CapturedLayer::causal)
      .def_rw("scale", &CapturedLayer::scale)
      .def_rw("key_lengths", &CapturedLayer::key_lengths);
  nb::class_<HeadOptions>(m, "HeadOptions")
      .def(nb::init<>())
      .def_rw("block_size", &HeadOptions::block_size)
      .def_rw("sink_tokens", &HeadOptions::sink_tokens)
      .def_rw("trailing_special_tokens", &HeadOptions::trailing_special_tokens)
      .def_rw("windows", &HeadOptions::windows)
      .def_rw("recall_window", &HeadOptions::recall_window)
      .def_rw("model_window", &HeadOptions::model_window)
      .def_rw("max_query_blocks", &HeadOptions::max_query_blocks)
      .def_rw("threads", &HeadOptions::threads)
      .def_rw("kv_bytes_per_element", &HeadOptions::kv_bytes_per_element);
  m.def("attach_heads", &attach_heads, nb::arg("report_json"), nb::arg("layers"), nb::arg("options"),
        "Per-head statistics of captured layers added to a Report (JSON in, JSON out; '' = new Report).");
  m.def(
      "analyze_heads_file",
      [](const std::string& path, const HeadOptions& options) {
        Result<HeadsSection> section = [&] {
          nb::gil_scoped_release release;
          return analyze_heads_file(path, options);
        }();
        if (!section) throw nb::value_error(section.error().message.c_str());
        Report report;
        report.tool_version = ATTNPROF_VERSION;
        report.source.files.push_back(path);
        report.heads = std::move(section).value();
        return report_to_json(report, /*pretty=*/false);
      },
      nb::arg("path"), nb::arg("options"), "Saved Q/K safetensors -> Report JSON with the heads section.");
}

const BindingRegistration kRegistration(bind_heads);

}  // namespace
}  // namespace attnprof::bindings
