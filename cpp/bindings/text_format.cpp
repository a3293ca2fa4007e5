// The one spelling of sizes, times, FLOP/s, FLOP counts and percentages (text_format.h) for Python, so a
// progress line or a summary printed from Python reads as the C++ outputs do.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "attnprof/text_format.h"
#include "binding.h"

namespace nb = nanobind;

namespace attnprof::bindings {
namespace {

void bind_text_format(nb::module_& m) {
  m.def("bytes_text", &bytes_text, nb::arg("bytes"), "\"1.5 MiB\": binary units, \"unknown\" for NaN/inf.");
  m.def("time_text", &time_text, nb::arg("us"), "A duration in microseconds: \"250 ns\", \"12.3 us\", \"1.50 ms\".");
  m.def("flops_text", &flops_text, nb::arg("tflops"), "A rate in TFLOP/s: \"312.5 TFLOP/s\", \"52.3 GFLOP/s\".");
  m.def("flop_count_text", &flop_count_text, nb::arg("flops"), "A number of FLOPs: \"52.30 GFLOP\".");
  m.def("percent_text", &percent_text, nb::arg("fraction"), "A fraction as \"12.3%\".");
  m.def("ratio_text", &ratio_text, nb::arg("ratio"), "A measured ratio: \"1.25x\".");
  m.def("estimated_ratio_text", &estimated_ratio_text, nb::arg("ratio"), "A modelled ratio: \"~1.3x\".");
}

const BindingRegistration registration(bind_text_format);

}  // namespace
}  // namespace attnprof::bindings
