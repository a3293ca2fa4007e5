// File helpers shared by every output: nothing half-written, one-line errors.
#pragma once

#include <string>
#include <string_view>

#include "attnprof/error.h"

namespace attnprof {

// Writes to PATH.tmp-<pid> then renames over PATH, so a failure never leaves a partial
// file. Creates missing parent directories.
Status write_file_atomic(const std::string& path, std::string_view content);

// Reads a whole (small) file; gunzips when it starts with the gzip magic. For Reports,
// configs and sidecars, not for traces (use load_trace).
Result<std::string> read_text_file(const std::string& path);

}  // namespace attnprof
