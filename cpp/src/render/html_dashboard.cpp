// render_html: page skeleton + view model as JSON + the embedded assets. See dashboard.h for the
// escaping rules that keep hostile trace strings inert.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <random>

#include "attnprof/dashboard.h"
#include "attnprof/output_format.h"
#include "attnprof/text_format.h"
#include "render/diff_render.h"
#include "render/html_assets.h"
#include "render/html_sections.h"
#include "attnprof/report_view.h"
#include "render/html_view.h"

namespace attnprof {
namespace {

// JSON text safe inside <script type="application/json">: no '<' (so no "</script>" or
// "<!--"), no '>' or '&', and no U+2028/U+2029. All of them can only occur inside JSON
// strings, where \uXXXX means the same character.
std::string script_safe_json(const nlohmann::json& data) {
  const std::string text = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + text.size() / 16);
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '<') out += "\\u003c";
    else if (c == '>') out += "\\u003e";
    else if (c == '&') out += "\\u0026";
    else if (c == '\xE2' && i + 2 < text.size() && text[i + 1] == '\x80' && (text[i + 2] == '\xA8' || text[i + 2] == '\xA9')) {
      out += text[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

// Per-file CSP nonce: only our own inline script runs, even if markup were ever injected
// (inline event handlers are refused too).
std::string make_nonce() {
  std::random_device rd;
  return fmt::format("{:08x}{:08x}{:08x}", rd(), rd(), rd());
}

std::string default_label(const Report& r, size_t index) {
  if (!r.source.files.empty()) {
    const std::string& f = r.source.files.front();
    const size_t slash = f.find_last_of('/');
    return slash == std::string::npos ? f : f.substr(slash + 1);
  }
  if (diff_only(r)) return "diff";  // attnprof diff's Report: a verdict, no run of its own
  return fmt::format("run {}", index + 1);
}

constexpr const char* kSections[] = {"summary", "steps", "activation-map", "model-graph", "roofline", "spread", "memory",
                                     "scaling", "heads", "advice", "ranks", "whatif", "verification", "diff",
                                     "findings"};

}  // namespace

std::span<const char* const> dashboard_sections() { return kSections; }

std::string_view dashboard_stylesheet() { return render::kDashboardCss; }

std::string render_html(const std::vector<Report>& reports, const std::vector<std::string>& labels) {
  DashboardOptions options;
  options.labels = labels;
  return render_html(reports, options);
}

std::string render_html(const std::vector<Report>& reports, const DashboardOptions& options) {
  return render_html(views_of(reports), options);
}

std::string render_html(const std::vector<ReportView>& views, const std::vector<std::string>& labels) {
  DashboardOptions options;
  options.labels = labels;
  return render_html(views, options);
}

namespace {

// The page's data: how it spells numbers (format.js), every run's view (a diff is a run's
// section), their comparison, the sections shown.
nlohmann::json dashboard_data(const std::vector<ReportView>& views, const std::vector<std::string>& names,
                              const DashboardOptions& options) {
  nlohmann::json data = {{"components", activation_map_components()},
                         {"format", render::format_spec_view()},
                         {"runs", nlohmann::json::array()}};
  for (size_t i = 0; i < views.size(); ++i) data["runs"].push_back(render::run_view(views[i], names[i]));
  if (views.size() > 1) data["comparison"] = render::comparison_view(views, names);
  data["sections"] = options.sections.empty() ? std::vector<std::string>(kSections, std::end(kSections))
                                              : options.sections;
  return data;
}

std::string page_title(const std::vector<std::string>& names) {
  std::string title = "attnprof";
  if (names.size() == 1) title += " \u2014 " + names.front();
  if (names.size() > 1) title += fmt::format(" \u2014 {} runs", names.size());
  return title;
}

}  // namespace

std::string render_html(const std::vector<ReportView>& views, const DashboardOptions& options) {
  const std::vector<std::string>& labels = options.labels;
  std::vector<std::string> names;
  for (size_t i = 0; i < views.size(); ++i)
    names.push_back(i < labels.size() && !labels[i].empty() ? labels[i] : default_label(*views[i].report, i));
  const nlohmann::json data = dashboard_data(views, names, options);
  const std::string title = page_title(names);
  std::string subtitle = views.empty() ? std::string() : views.front().report->source.device_name;
  const std::string nonce = make_nonce();

  std::string page;
  page += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  page += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  page += fmt::format(
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; "
      "style-src 'unsafe-inline'; script-src 'nonce-{}'\">\n",
      nonce);
  page += "<meta name=\"generator\" content=\"attnprof " + html_escape(ATTNPROF_VERSION) + "\">\n";
  page += "<title>" + html_escape(title) + "</title>\n";
  page += "<style>\n";
  page += render::kDashboardCss;
  page += "</style>\n</head>\n<body>\n";
  page += "<header><h1>" + html_escape(title) + "</h1><p>" +
          html_escape(subtitle.empty() ? "attention profile" : subtitle) + "</p></header>\n";
  page += "<main id=\"app\"><noscript>This dashboard draws its charts with JavaScript.</noscript></main>\n";
  page += "<script type=\"application/json\" id=\"attnprof-data\">" + script_safe_json(data) + "</script>\n";
  page += "<script nonce=\"" + nonce + "\">\n";
  page += render::kDashboardScript;
  page += "</script>\n";
  page += "</body>\n</html>\n";
  return page;
}

namespace {
std::string html_of(const FormatInput& in) { return render_html(in.views); }
}  // namespace

extern const OutputFormat kHtmlFormat{
    "html", ".html", "--html",
    "write a self-contained HTML dashboard (several traces: one page with a multi-run view)", html_of, nullptr};

}  // namespace attnprof
