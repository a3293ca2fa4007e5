// Rendering of the cost sections (roofline/memory per layer, scaling, advice, what-if) as
// terminal text or Markdown. Pure functions Report -> text; the general text/markdown
// renderers call these for the sections, and so do `attnprof scale|predict|whatif`.
#pragma once

#include <string>

#include "attnprof/report.h"

namespace attnprof {

// Empty string when the report has none of the cost data.
std::string render_cost_text(const Report& report);
std::string render_cost_markdown(const Report& report);

// "1.51 GiB", "812.0 MiB", "96 B"
std::string format_bytes(double bytes);

}  // namespace attnprof
