// The format registry (formats.h) is what the CLI, the binding and Python save() serve: one
// row per format, its flag on the command line, its text the renderers' own.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "attnprof/analyze.h"
#include "attnprof/formats.h"
#include "attnprof/io.h"
#include "attnprof/render.h"
#include "render/render_test_reports.h"

namespace attnprof {

// The rows the list names, declared as the registry declares them.
#define ATTNPROF_FORMAT(row) extern const OutputFormat row;
#include "outputs/format_list.h"
#undef ATTNPROF_FORMAT

namespace {

namespace fs = std::filesystem;

std::string source_text(const fs::path& path) {
  auto text = read_text_file(path.string());
  return text ? *text : "";
}

// Every `extern const OutputFormat kName{` of cpp/src and cpp/include: name -> defining files.
std::map<std::string, std::set<std::string>> defined_rows() {
  static const std::regex row(R"(extern const OutputFormat (k\w+)\s*\{)");
  std::map<std::string, std::set<std::string>> out;
  for (const char* dir : {"cpp/src", "cpp/include"}) {
    const fs::path root = fs::path(ATTNPROF_SOURCE_DIR) / dir;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      if (!entry.is_regular_file()) continue;
      const std::string text = source_text(entry.path());
      for (auto m = std::sregex_iterator(text.begin(), text.end(), row); m != std::sregex_iterator(); ++m)
        out[(*m)[1]].insert(fs::relative(entry.path(), ATTNPROF_SOURCE_DIR).string());
    }
  }
  return out;
}

TEST(Formats, NamesExtensionsAndFlagsAreUniqueAndEveryFormatCanBeWritten) {
  std::set<std::string_view> names, extensions, flags;
  for (const OutputFormat& f : output_formats()) {
    EXPECT_TRUE(names.insert(f.name).second) << f.name;
    if (!f.extension.empty()) {
      EXPECT_TRUE(extensions.insert(f.extension).second) << f.extension;
    }
    EXPECT_TRUE(flags.insert(f.flags).second) << f.flags;
    EXPECT_TRUE(f.render != nullptr || f.write != nullptr) << f.name;
  }
  for (const char* name : {"json", "text", "markdown", "html", "chrome", "tensorboard"})
    EXPECT_TRUE(find_output_format(name).ok()) << name;
  const auto unknown = find_output_format("pdf");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("json, text, markdown, html, csv, chrome, tensorboard"), std::string::npos);
}

// A new format is its own file (renderer and row) plus one line of format_list.h: the registry
// is exactly the listed rows in list order, each row is defined once in a source file that is
// not the registry and in no header, and a row defined but not listed fails here.
TEST(Formats, AFormatIsItsOwnFileAndOneLineOfTheList) {
  const std::vector<const OutputFormat*> listed = {
#define ATTNPROF_FORMAT(row) &row,
#include "outputs/format_list.h"
#undef ATTNPROF_FORMAT
  };
  const std::span<const OutputFormat> registry = output_formats();
  ASSERT_EQ(registry.size(), listed.size());
  for (size_t i = 0; i < listed.size(); ++i) {
    EXPECT_EQ(registry[i].name, listed[i]->name);
    EXPECT_EQ(registry[i].render, listed[i]->render) << registry[i].name;
    EXPECT_EQ(registry[i].write, listed[i]->write) << registry[i].name;
  }

  const std::string list = source_text(fs::path(ATTNPROF_SOURCE_DIR) / "cpp/src/outputs/format_list.h");
  static const std::regex line(R"(ATTNPROF_FORMAT\((k\w+)\))");
  std::set<std::string> list_names;
  std::istringstream lines(list);
  std::smatch m;
  for (std::string l; std::getline(lines, l);)
    if (std::regex_match(l, m, line)) list_names.insert(m[1]);
  EXPECT_EQ(list_names.size(), listed.size());

  const auto defined = defined_rows();
  std::set<std::string> defined_names;
  for (const auto& [name, files] : defined) {
    defined_names.insert(name);
    ASSERT_EQ(files.size(), 1u) << name << " is defined in several files";
    const std::string& file = *files.begin();
    EXPECT_TRUE(file.starts_with("cpp/src/")) << name << " is defined in a header: " << file;
    EXPECT_NE(file, "cpp/src/outputs/formats.cpp") << name << ": the registry holds no row";
  }
  EXPECT_EQ(defined_names, list_names);
}

TEST(Formats, ThePathsExtensionPicksTheFormatLongestFirst) {
  auto of = [](std::string_view path) {
    auto f = output_format_of_path(path);
    return f ? std::string((*f)->name) : "error: " + f.error().message;
  };
  EXPECT_EQ(of("out/report.md"), "markdown");
  EXPECT_EQ(of("report.json"), "json");
  EXPECT_EQ(of("trace.attnprof.json.gz"), "chrome");
  EXPECT_EQ(of("page.html"), "html");
  EXPECT_EQ(of("report.pdf").rfind("error: report.pdf: no report format", 0), 0u);
}

TEST(Formats, RegistryTextIsTheRenderersTextOnARealTrace) {
  auto report = analyze_file(testing::fixture(testing::kCudnnTrace), {});
  ASSERT_TRUE(report.ok()) << report.error().message;
  const std::vector<Report> reports{*report};
  const std::vector<ReportView> views = views_of(reports);
  const FormatInput input{reports, views};
  EXPECT_EQ(*render_output(**find_output_format("markdown"), input), render_markdown(*report));
  EXPECT_EQ(*render_output(**find_output_format("text"), input), render_text(*report));
  EXPECT_FALSE(render_output(**find_output_format("chrome"), input).ok());  // copies the trace: a file only
}

class FormatsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("attnprof_formats_cli_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  int run(const std::string& args) {
    const std::string cmd = std::string(ATTNPROF_CLI_PATH) + " analyze " + args + " >" + (dir_ / "stdout").string() +
                            " 2>" + (dir_ / "stderr").string();
    const int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::string file(const std::string& name) const {
    auto text = read_text_file((dir_ / name).string());
    return text ? *text : "";
  }
  fs::path dir_;
};

TEST_F(FormatsCli, EveryFormatHasItsFlagAndFormatPrintsWhatTheFlagWrites) {
  ASSERT_EQ(run("--help"), 0);
  const std::string help = file("stdout");
  for (const OutputFormat& f : output_formats()) {
    const std::string first_flag(f.flags.substr(0, f.flags.find(',')));
    EXPECT_NE(help.find(first_flag), std::string::npos) << first_flag;
  }
  const std::string trace = testing::fixture(testing::kCudnnTrace);
  ASSERT_EQ(run(trace + " --md " + (dir_ / "r.md").string() + " --text " + (dir_ / "r.txt").string()), 0)
      << file("stderr");
  EXPECT_EQ(file("stdout"), file("r.txt"));  // the default stdout is the text format
  ASSERT_EQ(run(trace + " --format markdown"), 0) << file("stderr");
  EXPECT_EQ(file("stdout"), file("r.md"));
  EXPECT_EQ(run(trace + " --format chrome"), 2);  // not a text: refused before anything is read
}

}  // namespace
}  // namespace attnprof
