// Facts about a Report that several renderers show, computed in one place for the render stage.
#pragma once

#include <cstdint>

#include "attnprof/report.h"

namespace attnprof::render {

// The largest peak memory the Report knows (layers' and calls' costs), -1 when unknown; the
// dashboard's summary and the TensorBoard memory/peak_bytes scalar.
int64_t report_peak_bytes(const Report& report);

}  // namespace attnprof::render
