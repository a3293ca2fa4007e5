// attnprof._core.diff: the same comparison as `attnprof diff` (diff_paths), returning the
// Report's diff section as JSON and the Report's Markdown/text renderings; attnprof._core.code_info: git provenance of a
// directory, for the live capture. No logic here beyond argument conversion.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <nlohmann/json.hpp>

#include "attnprof/diff.h"
#include "attnprof/render.h"
#include "attnprof/report_json.h"
#include "binding.h"

namespace nb = nanobind;

namespace attnprof::bindings {
namespace {

template <typename T>
T value_or_raise(Result<T> r) {
  if (!r) throw nb::value_error(r.error().message.c_str());
  return std::move(r).value();
}

// Defaults, then the config file, then the thresholds given explicitly (as the CLI does).
DiffThresholds thresholds_of(const std::string& config, std::optional<double> max_fused_drop,
                             const std::optional<std::string>& max_time_increase,
                             const std::optional<std::string>& max_memory_increase) {
  DiffThresholds t;
  if (!config.empty()) t = value_or_raise(load_diff_config(config, t));
  if (max_fused_drop) {
    if (*max_fused_drop < 0) throw nb::value_error("max_fused_drop must be >= 0 (percentage points)");
    t.max_fused_drop_pp = *max_fused_drop;
  }
  if (max_time_increase) t.max_time_increase = value_or_raise(parse_percent(*max_time_increase));
  if (max_memory_increase) t.max_memory_increase = value_or_raise(parse_percent(*max_memory_increase));
  return t;
}

std::tuple<std::string, std::string, std::string> diff_to_strings(
    const std::string& baseline, const std::string& candidate, const std::vector<std::string>& extra_baseline,
    const std::vector<std::string>& extra_candidate, std::optional<double> max_fused_drop,
    const std::optional<std::string>& max_time_increase, const std::optional<std::string>& max_memory_increase,
    const std::string& config, const std::string& repo) {
  DiffOptions options;
  options.thresholds = thresholds_of(config, max_fused_drop, max_time_increase, max_memory_increase);
  options.extra_baseline = extra_baseline;
  options.extra_candidate = extra_candidate;
  options.repo_dir = repo;
  Result<DiffSection> result = [&] {
    nb::gil_scoped_release release;  // analysis and git never touch Python objects
    return diff_paths(baseline, candidate, options);
  }();
  const Report report = diff_report(value_or_raise(std::move(result)));
  return {diff_section_to_json(*report.diff), render_markdown(report), render_text(report)};
}

std::optional<std::string> code_info_json(const std::string& dir) {
  std::optional<CodeInfo> info = detect_code_info_in(dir);
  if (!info) return std::nullopt;
  return nlohmann::json{{"git_commit", info->git_commit},
                        {"git_dirty", info->git_dirty},
                        {"git_root", info->git_root}}
      .dump();
}

void bind_diff(nb::module_& m) {
  m.def("diff", &diff_to_strings, nb::arg("baseline"), nb::arg("candidate"),
        nb::arg("extra_baseline") = std::vector<std::string>{}, nb::arg("extra_candidate") = std::vector<std::string>{},
        nb::arg("max_fused_drop") = nb::none(), nb::arg("max_time_increase") = nb::none(),
        nb::arg("max_memory_increase") = nb::none(), nb::arg("config") = "", nb::arg("repo") = "",
        "Compares two traces/Reports/directories like `attnprof diff`; returns (verdict JSON, Markdown, text). "
        "Thresholds: max_fused_drop in percentage points, the others as '10%'. Raises ValueError on bad input.");
  m.def("code_info", &code_info_json, nb::arg("dir"),
        "Git commit, dirty state and root of the work tree holding DIR as JSON, or None outside git.");
}

const BindingRegistration kRegistration(bind_diff);

}  // namespace
}  // namespace attnprof::bindings
