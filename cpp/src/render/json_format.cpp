// The "json" output format: the Report document itself (report_json.h).
#include "attnprof/output_format.h"
#include "attnprof/report_json.h"

namespace attnprof {
namespace {

// One Report as its JSON; several as a JSON array, in argument order.
std::string json_of(const FormatInput& in) {
  if (in.reports.size() == 1) return report_to_json(in.reports.front(), true, in.threads);
  std::string out = "[\n";
  for (size_t i = 0; i < in.reports.size(); ++i) out += (i ? ",\n" : "") + report_to_json(in.reports[i], true, in.threads);
  return out + "\n]\n";
}

}  // namespace

extern const OutputFormat kJsonFormat{
    "json", ".json", "--json",
    "write the Report as JSON (several traces: a JSON array of Reports, in argument order)", json_of, nullptr};

}  // namespace attnprof
