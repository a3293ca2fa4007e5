// View models of the dashboard sections beyond the summary, activation map and module tree
// (html_sections.cpp): the per-call roofline against the GPU's peaks, scaling with its fitted
// curves, heads heat maps with candidates and sliding-window waste, what-if; and, for every
// section with nothing to show, the one line that says why.
#pragma once

#include <nlohmann/json.hpp>

#include "attnprof/report.h"

namespace attnprof::render {

// Adds "roofline_calls", "scaling", "heads", "whatif" and "why" to a run's view (run_view).
void add_section_views(nlohmann::json& run, const Report& report);

// Requests per power-of-two length bucket [2^k, 2^(k+1)) against the what-if window:
// [{from, to, requests, within_window}], ascending; a fixed, small number of bars however many
// lines the distribution had.

// Points of y = c0 + c1*S + c2*S^2 between `from` and `to`, geometrically spaced (the charts'
// S axis is logarithmic): [[S, y], ...]; empty when the fit has no terms.
nlohmann::json fit_curve(const FitTerm& fit, double from, double to);

}  // namespace attnprof::render
