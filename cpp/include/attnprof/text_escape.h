// Escaping a text for a target that would otherwise read it as markup. Every renderer and
// every stage that writes such a target uses these, so a name from a trace shows the same
// everywhere.
#pragma once

#include <string>
#include <string_view>

namespace attnprof {

// A text as Markdown shows it literally, also inside a table cell ('|', backticks, emphasis,
// brackets, '<>&' escaped; line breaks become spaces).
std::string markdown_escape(std::string_view text);

}  // namespace attnprof
