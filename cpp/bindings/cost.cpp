// attnprof._core cost functions: the `attnprof scale` pipeline for Python's attnprof.sweep.
// Only argument conversion here; the fits live in cpp/src/analysis.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "attnprof/analyze.h"
#include "attnprof/report_json.h"
#include "attnprof/scaling.h"
#include "binding.h"

namespace nb = nanobind;

namespace attnprof::bindings {
namespace {

// Trace paths (one per length/backend) -> Report JSON with the scaling and advice sections.
std::string scale_to_json(const std::vector<std::string>& paths, const std::string& memory_cap,
                          const std::string& gpu, const std::string& alloc_conf) {
  Result<Report> report = [&] {
    nb::gil_scoped_release release;
    return scale_traces(paths, memory_cap, gpu, alloc_conf);
  }();
  if (!report) throw nb::value_error(report.error().message.c_str());
  return report_to_json(*report, /*pretty=*/false);
}

void bind_cost(nb::module_& m) {
  m.def("scale", &scale_to_json, nb::arg("paths"), nb::arg("memory_cap") = "", nb::arg("gpu") = "",
        nb::arg("alloc_conf") = "",
        "Fit time(S)/memory(S) per backend, OOM threshold and backend advice over traces; Report JSON");
}

const BindingRegistration kRegistration(&bind_cost);

}  // namespace
}  // namespace attnprof::bindings
