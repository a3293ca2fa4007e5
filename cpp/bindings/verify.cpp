// attnprof._core verify functions for python/attnprof/verify.py: the fixes a Report calls for,
// the verdict of one measured fix, and the Report with its verification section. Only
// argument conversion here; the planning and judging live in cpp/src/verify.
#include <nanobind/stl/string.h>

#include "attnprof/analyze.h"
#include "attnprof/cost.h"
#include "attnprof/ingest.h"
#include "attnprof/report_json.h"
#include "attnprof/verify.h"
#include "binding.h"

namespace nb = nanobind;

namespace attnprof::bindings {
namespace {

Report report_or_throw(const std::string& report_json) {
  Result<Report> report = report_from_json(report_json);
  if (!report) throw nb::value_error(report.error().message.c_str());
  return std::move(*report);
}

std::string plan_fixes_json(const std::string& report_json) {
  return verify::plans_to_json(verify::plan_fixes(report_or_throw(report_json)));
}

std::string judge_fix_json(const std::string& measurement_json) {
  Result<verify::FixMeasurement> m = verify::measurement_from_json(measurement_json);
  if (!m) throw nb::value_error(m.error().message.c_str());
  return fix_verification_to_json(verify::judge_fix(*m));
}

std::string with_verification(const std::string& report_json, const std::string& section_json) {
  Report report = report_or_throw(report_json);
  Result<VerificationSection> section = verification_from_json(section_json);
  if (!section) throw nb::value_error(section.error().message.c_str());
  report.verification = std::move(*section);
  return report_to_json(report, /*pretty=*/false);
}

// One profiled forward's Report (analyze_loaded_trace: the capture sidecar beside the trace
// merged) and the allocator's view of it from the same loaded trace (profile_memory=True): what
// it held before, its peak, and the peak above what it held before, -1 each when unrecorded.
nb::tuple analyze_with_memory(const std::string& trace_path) {
  Result<Trace> trace = [&] {
    nb::gil_scoped_release release;
    return load_trace(trace_path);
  }();
  if (!trace) throw nb::value_error(trace.error().message.c_str());
  Report report;
  PassMemory memory;
  {
    nb::gil_scoped_release release;  // the analyses never touch Python objects
    report = analyze_loaded_trace(*trace);
    memory = pass_memory(*trace);
  }
  nb::dict out;
  out["baseline_bytes"] = memory.baseline_bytes;
  out["peak_allocated_bytes"] = memory.peak_allocated_bytes;
  out["peak_activation_bytes"] = memory.peak_activation_bytes;
  return nb::make_tuple(report_to_json(report, /*pretty=*/false), out);
}

void bind_verify(nb::module_& m) {
  m.def("analyze_with_memory", &analyze_with_memory, nb::arg("trace_path"),
        "(Report JSON, {baseline_bytes, peak_allocated_bytes, peak_activation_bytes}) of a trace profiled with "
        "profile_memory=True, read once");
  m.def("plan_fixes", &plan_fixes_json, nb::arg("report_json"),
        "The fixes a Report's findings call for (attnprof.verify), as a JSON list");
  m.def("judge_fix", &judge_fix_json, nb::arg("measurement_json"),
        "Verdict, medians and bootstrap interval of one measured fix, as FixVerification JSON");
  m.def("with_verification", &with_verification, nb::arg("report_json"), nb::arg("section_json"),
        "The Report with its verification section set; Report JSON");
}

const BindingRegistration kRegistration(&bind_verify);

}  // namespace
}  // namespace attnprof::bindings
