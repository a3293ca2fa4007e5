// The diff section (Report::diff, sections/diff.h) in the text and Markdown reports
// (diff_render.cpp). A Report that holds only a diff section, as `attnprof diff` writes it,
// renders as this alone; any other Report shows it after its own sections.
#pragma once

#include <string>

#include "attnprof/report.h"

namespace attnprof {

// The terminal summary of each pair and the overall verdict, before terminal_escape.
std::string render_diff_text(const DiffSection& diff);
// The pull-request comment: a heading with the verdict, each pair's tables and causes.
std::string render_diff_markdown(const DiffSection& diff);
// Whether the Report is only a diff: a diff section, and no calls and no source files.
bool diff_only(const Report& report);

}  // namespace attnprof
