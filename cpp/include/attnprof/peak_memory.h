// Peak memory during attention: what a call's, a layer's and a run's peak are, defined once for
// every output (summary, dashboard, TensorBoard) and for `diff`. A call's peak is measured by the
// cost stage from the trace's [memory] events inside its span (docs/cost.md); a layer's is the
// largest of its calls'. Every value is in bytes, -1 when unknown (no memory events recorded).
#pragma once

#include <cstdint>

#include "attnprof/report.h"

namespace attnprof {

// The call's transient peak (CallCost::peak_bytes_during).
int64_t call_peak_bytes(const Call& call);

// The layer's peak (LayerCost::peak_bytes): one number per run, not per step.
int64_t layer_peak_bytes(const Layer& layer);

// The run's peak during attention: the largest of its calls' and layers' peaks. The layers
// count too so that a Report whose calls carry no cost (an older or merged Report) keeps its peak.
int64_t report_peak_bytes(const Report& report);

}  // namespace attnprof
