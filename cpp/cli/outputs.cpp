#include "outputs.h"

#include <fmt/format.h>

#include <cstdio>

namespace attnprof::cli {
namespace {

constexpr std::string_view kPathHelp = " to FILE ('-' or no FILE: stdout)";

bool to_stdout(const std::optional<std::string>& path) { return path && (path->empty() || *path == "-"); }

void add_form(CLI::App& cmd, OutputOptions& options, const DocumentFormWord& w, std::string_view what) {
  cmd.add_option(std::string(w.flag), options.paths[std::string(w.name)],
                 fmt::format("write {} {}{}", what, w.as, kPathHelp))
      ->expected(0, 1)
      ->type_name("[FILE]");
}

void add_common(CLI::App& cmd, OutputOptions& options) {
  add_deprecated(options,
                 cmd.add_option("--markdown", options.paths["markdown"], "old spelling of --md")
                     ->expected(0, 1)
                     ->group(""),  // hidden from --help
                 "--md");
  cmd.add_flag("-q,--quiet", options.quiet, "print no terminal view (the files asked for are still written)");
}

void warn_deprecated(const OutputOptions& options) {
  for (const auto& [option, replacement] : options.deprecated)
    if (option->count() > 0)
      std::fprintf(stderr, "attnprof: --%s is deprecated, use %s (it goes in the next release)\n",
                   option->get_lnames().front().c_str(), replacement.c_str());
}

// The registry's formats that print as one text take the document vocabulary's help words.
std::string report_format_help(const OutputFormat& f, std::string_view what) {
  for (const DocumentFormWord& w : document_forms())
    if (w.name == f.name) return fmt::format("write {} {}{}", what, w.as, kPathHelp);
  return std::string(f.help);
}

}  // namespace

std::map<std::string, std::string, std::less<>> OutputOptions::files() const {
  std::map<std::string, std::string, std::less<>> out;
  for (const auto& [name, path] : paths)
    if (path && !to_stdout(path)) out[name] = *path;
  return out;
}

std::string OutputOptions::stdout_form() const {
  for (const auto& [name, path] : paths)
    if (to_stdout(path)) return name;
  return "";
}

void add_deprecated(OutputOptions& options, CLI::Option* old, std::string_view replacement) {
  options.deprecated.emplace_back(old, std::string(replacement));
}

void add_document_options(CLI::App& cmd, OutputOptions& options, std::string_view what, bool table) {
  for (const DocumentFormWord& w : document_forms())
    if (table || w.form != DocumentForm::kCsv) add_form(cmd, options, w, what);
  add_common(cmd, options);
}

void add_report_options(CLI::App& cmd, OutputOptions& options, std::string_view what) {
  for (const OutputFormat& f : output_formats()) {
    CLI::Option* option = cmd.add_option(std::string(f.flags), options.paths[std::string(f.name)], report_format_help(f, what));
    if (f.render != nullptr) option->expected(0, 1)->type_name("[FILE]");  // a text can go to stdout
  }
  add_common(cmd, options);
}

Status write_document_outputs(const OutputOptions& options, const Document& document) {
  warn_deprecated(options);
  std::vector<std::pair<DocumentForm, std::string>> asked;
  for (const DocumentFormWord& w : document_forms()) {
    const auto it = options.paths.find(w.name);
    if (it == options.paths.end() || !it->second) continue;
    // A form this answer lacks fails before any other form is written: no half of the outputs.
    if (!document.has(w.form)) return document.render(w.form).error();
    asked.emplace_back(w.form, to_stdout(it->second) ? "-" : *it->second);
  }
  for (const auto& [form, path] : asked)
    if (Status s = write_document(document, form, path); !s) return s;
  if (options.quiet || !options.stdout_form().empty()) return Ok{};
  return write_document(document, DocumentForm::kText, "-");
}

Status write_report_outputs(const OutputOptions& options, const FormatInput& input, std::string_view stdout_format) {
  warn_deprecated(options);
  for (const OutputFormat& f : output_formats()) {
    const auto it = options.paths.find(f.name);
    if (it == options.paths.end() || !it->second) continue;
    if (!to_stdout(it->second)) {
      if (Status s = write_output(f, input, *it->second); !s) return s;
      continue;
    }
    Result<std::string> text = render_output(f, input);
    if (!text) return text.error();
    std::fputs(text->c_str(), stdout);
  }
  if (options.quiet || !options.stdout_form().empty()) return Ok{};
  auto format = find_output_format(stdout_format);
  if (!format) return format.error();
  Result<std::string> printed = render_output(**format, input);
  if (!printed) return printed.error();
  std::fputs(printed->c_str(), stdout);
  return Ok{};
}

}  // namespace attnprof::cli
