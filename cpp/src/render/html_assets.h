// Inline CSS and JavaScript of the dashboard (html_assets.cpp).
#pragma once

namespace attnprof::render {
extern const char* const kDashboardCss;
extern const char* const kDashboardJs;         // helpers and the core sections (html_assets.cpp)
extern const char* const kDashboardSectionsJs; // roofline, scaling, heads, what-if, diff (html_sections_js.cpp)
extern const char* const kDashboardPageJs;     // lays out the sections the page asks for (html_sections_js.cpp)
}  // namespace attnprof::render
