// Report <-> JSON text. The JSON form is the document users keep, diff and feed back in.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "attnprof/error.h"
#include "attnprof/report.h"

namespace attnprof {

// Pretty-printed (indent 2) when `pretty`, else compact. `threads` > 1 writes the calls on that
// many threads (the text is the same for any value).
std::string report_to_json(const Report& report, bool pretty = true, size_t threads = 1);

// Parses a Report written by report_to_json. Unknown fields are ignored; a missing
// schema_version or a newer major version is an error.
Result<Report> report_from_json(std::string_view text);

// The verification section alone (attnprof.verify builds it in Python, the binding attaches
// it to the Report); an error names the first bad field.
Result<VerificationSection> verification_from_json(std::string_view text);
std::string verification_to_json(const VerificationSection& section);
Result<FixVerification> fix_verification_from_json(std::string_view text);
std::string fix_verification_to_json(const FixVerification& fix);
// One rank's summary (cpp/src/fleet), compact: what a fleet task sends to the driver.
Result<RankSummary> rank_summary_from_json(std::string_view text);
std::string rank_summary_to_json(const RankSummary& summary);

// The diff section alone (sections/diff.h, docs/diff.md): attnprof.compare's `data`. Compact
// unless `pretty`; an error names the first bad field.
std::string diff_section_to_json(const DiffSection& section, bool pretty = false);
Result<DiffSection> diff_section_from_json(std::string_view text);

// True when the text looks like a Report rather than a trace: it names "schema_version"
// (Kineto writes "schemaVersion") and has no "traceEvents". For commands that accept both.
bool looks_like_report(std::string_view text);

}  // namespace attnprof
