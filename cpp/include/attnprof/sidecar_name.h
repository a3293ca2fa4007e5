// Where the live capture's sidecar lives: beside its trace, named by the trace path plus
// kSidecarSuffix (sidecar_path_for, capture.h). In the report stage because a Report's source
// files name it, and the outputs tell it from a trace by it.
#pragma once

#include <string_view>

namespace attnprof {

inline constexpr std::string_view kSidecarSuffix = ".attnprof-capture.json";

}  // namespace attnprof
