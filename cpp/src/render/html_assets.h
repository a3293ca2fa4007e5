// Inline CSS and JavaScript of the dashboard (html_assets.cpp).
#pragma once

namespace attnprof::render {
extern const char* const kDashboardCss;
extern const char* const kDashboardJs;
}  // namespace attnprof::render
