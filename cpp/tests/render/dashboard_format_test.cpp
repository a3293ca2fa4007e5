// The dashboard spells numbers as the text outputs do: node runs the page's formatters
// (dashboard/format.js) with the spelling table a rendered page carries, over the edge cases
// of text_format_test.cpp and a sweep of magnitudes around every unit boundary, and each text
// must equal text_format.h's for the same value.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/dashboard.h"
#include "attnprof/text_format.h"

namespace attnprof {
namespace {

using nlohmann::json;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

struct Case {
  Quantity quantity;
  double value;
};

// The values text_format_test.cpp pins, exact ties, a negative zero and values far beyond the
// largest unit (which toFixed would write in exponent form).
std::vector<Case> edge_cases() {
  std::vector<Case> cases;
  for (double v : {0.0, -0.0, 1.0, 1023.0, 1023.6, 1024.0, 1280.0, 1536.0, 1792.0, 1048575.0, 1048576.0,
                   1048576.0 * 1023.96, 1073741824.0, 141.0 * 1073741824, 1099511627776.0, 2048.0 * 1099511627776,
                   -1024.0, -1280.0, -3.0 * 1073741824, 1e30, 1e300, kNaN, kInf, -kInf})
    cases.push_back({Quantity::kBytes, v});
  for (double v : {0.0, -0.0, 0.25, 0.001, 0.0005, 0.9996, 12.34, 999.9, 999.95, 999.96, 1000.0, 1500.0, 2125.0,
                   -2125.0, 999996.0, 2e6, 3599e6, 3600e6, 5400e6, 90000e6, -1500.0, -0.5, 1e25, 1e300, kNaN, kInf})
    cases.push_back({Quantity::kTime, v});
  for (double v : {0.0, 312.46, 1.0, 2.25, 4500.0, 0.0523, 0.000004, 0.99996, 0.25, 1e25, kNaN, kInf})
    cases.push_back({Quantity::kFlops, v});
  for (double v : {0.0, 999999.0, 999999.6, 5.23e10, 999.996e9, 1.25e15, 2e18, 1e40, kNaN})
    cases.push_back({Quantity::kFlopCount, v});
  for (double v : {0.0, 0.123, 1.0, 2.5, 0.0004, -0.05, -0.0004, 0.00125, 0.99995, 1e20, kNaN, -kInf})
    cases.push_back({Quantity::kPercent, v});
  return cases;
}

// Every quantity over mantissas just below, at and above where a unit ends or a decimal ties,
// from 1e-12 to 1e24, both signs.
std::vector<Case> sweep_cases() {
  std::vector<Case> cases;
  const double mantissas[] = {1.0, 1.05, 1.125, 1.5, 2.5, 3.6, 9.995, 99.95, 999.5, 999.95, 999.96, 999.999,
                              1.0235, 1.02395, 1.02396, 1.024, 3.599999};
  for (const QuantitySpelling& q : quantity_spellings())
    for (int e = -12; e <= 24; ++e)
      for (double m : mantissas)
        for (double sign : {1.0, -1.0}) cases.push_back({q.quantity, sign * m * std::pow(10.0, e)});
  return cases;
}

// The spelling table as a rendered page carries it (DATA.format).
json page_format() {
  const std::string page = render_html(std::vector<Report>{});
  const std::string open = "<script type=\"application/json\" id=\"attnprof-data\">";
  const size_t begin = page.find(open) + open.size();
  return json::parse(page.substr(begin, page.find("</script>", begin) - begin))["format"];
}

std::string_view name_of(Quantity quantity) { return quantity_spellings()[static_cast<size_t>(quantity)].name; }

// A value as format_agreement.js reads it: JSON has no NaN (the page gets null) or infinity.
json value_json(double v) {
  if (std::isnan(v)) return nullptr;
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

// The texts format.js gives for `cases`, or an empty list when node fails (its error on stderr).
std::vector<std::string> page_texts(const std::vector<Case>& cases) {
  json input = {{"format", page_format()}, {"cases", json::array()}};
  for (const Case& c : cases)
    input["cases"].push_back({name_of(c.quantity), value_json(c.value)});
  const auto dir = std::filesystem::temp_directory_path() / ("attnprof_format_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "cases.json") << input.dump();
  const std::string tests = std::string(ATTNPROF_SOURCE_DIR) + "/cpp/tests/render/format_agreement.js";
  const std::string format_js = std::string(ATTNPROF_SOURCE_DIR) + "/cpp/src/render/dashboard/format.js";
  const std::string cmd = std::string(ATTNPROF_NODE) + " '" + tests + "' '" + format_js + "' '" +
                          (dir / "cases.json").string() + "' > '" + (dir / "texts.json").string() + "'";
  const int status = std::system(cmd.c_str());
  std::stringstream out;
  out << std::ifstream(dir / "texts.json").rdbuf();
  std::filesystem::remove_all(dir);
  if (status != 0) return {};
  return json::parse(out.str()).get<std::vector<std::string>>();
}

void expect_page_spells_as_cpp(const std::vector<Case>& cases) {
  const std::vector<std::string> texts = page_texts(cases);
  ASSERT_EQ(texts.size(), cases.size()) << "node " ATTNPROF_NODE " did not run format.js";
  for (size_t i = 0; i < cases.size(); ++i)
    EXPECT_EQ(texts[i], quantity_text(cases[i].quantity, cases[i].value))
        << name_of(cases[i].quantity) << fmt::format(" of {:.17g}", cases[i].value);
}

TEST(DashboardFormat, PageSpellsTheFormatterTestsEdgeCasesAsTheTextOutputs) {
  expect_page_spells_as_cpp(edge_cases());
}

TEST(DashboardFormat, PageSpellsEveryMagnitudeAroundTheUnitBoundariesAsTheTextOutputs) {
  expect_page_spells_as_cpp(sweep_cases());
}

TEST(DashboardFormat, PageSpellsTiesAndHugeValuesAsPrintfNotAsToFixed) {
  // toFixed would give "1.3 KiB", "-2.13 ms" and "1e+30 TiB"; printf (and so the text) does not.
  const std::vector<std::string> texts = page_texts({{Quantity::kBytes, 1280},
                                                     {Quantity::kTime, -2125},
                                                     {Quantity::kBytes, 1e30 * 1099511627776.0},
                                                     {Quantity::kPercent, kNaN}});
  ASSERT_EQ(texts.size(), 4u);
  EXPECT_EQ(texts[0], "1.2 KiB");
  EXPECT_EQ(texts[1], "-2.12 ms");
  EXPECT_EQ(texts[2], "1000000000000000019884624838656.00 TiB");  // the double nearest 1e30, in full
  EXPECT_EQ(texts[3], "unknown");
}

}  // namespace
}  // namespace attnprof
