// The dashboard's stylesheet and script: the files of cpp/src/render/dashboard/, embedded at build
// time (cmake/dashboard_assets.cmake generates these definitions). The script lays out the view
// model of html_view.cpp and html_sections.cpp; it only writes text with textContent and
// attributes with setAttribute.
#pragma once

#include <string_view>

namespace attnprof::render {
extern const std::string_view kDashboardCss;     // style.css
extern const std::string_view kDashboardScript;  // the .js files in page order, one function
}  // namespace attnprof::render
