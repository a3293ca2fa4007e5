// Every trace under ../shared/fixtures against the ground truth of its README, one row per
// trace in fixture_expectations.json: number of calls, calls per backend / library /
// direction with their shapes, and the device. A new fixture without a row fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "fixture_util.h"

namespace attnprof::test {
namespace {

using nlohmann::json;

const json& expectations() {
  static const json doc = [] {
    std::ifstream in(std::string(ATTNPROF_SOURCE_DIR) + "/cpp/tests/attention/fixture_expectations.json");
    return json::parse(in);
  }();
  return doc;
}

std::vector<json> fixture_rows() {
  const json& rows = expectations().at("fixtures");
  return {rows.begin(), rows.end()};
}

// A trace file: compressed JSON, or JSON whose name says trace (ground_truth.json and the
// SDPA grid sample are data, not traces).
bool is_trace_file(const std::filesystem::path& p) {
  const std::string name = p.filename().string();
  return name.ends_with(".json.gz") || (name.ends_with(".json") && name.find("trace") != std::string::npos);
}

bool pending(const std::string& file, const std::string& check) {
  for (const json& p : expectations().at("pending"))
    if (p.at("file") == file && p.at("check") == check) return true;
  return false;
}

bool shape_matches(const Shape& s, const json& want) {
  for (const auto& [key, value] : want.items()) {
    if (key == "dtype") {
      if (s.dtype != value.get<std::string>()) return false;
      continue;
    }
    const int64_t v = value.get<int64_t>();
    const int64_t have = key == "B" ? s.B : key == "Hq" ? s.Hq : key == "Hkv" ? s.Hkv : key == "Sq" ? s.Sq
                       : key == "Skv" ? s.Skv : key == "D" ? s.D : key == "tokens" ? s.tokens : -1;
    if (have != v) return false;
  }
  return true;
}

bool in_group(const Call& c, const json& g) {
  if (c.backend != g.at("backend").get<std::string>()) return false;
  if (g.contains("library") && c.library != g.at("library").get<std::string>()) return false;
  if (g.contains("direction") && c.direction != g.at("direction").get<std::string>()) return false;
  return !g.contains("shape") || shape_matches(c.shape, g.at("shape"));
}

// What the calls of a report look like, for the failure message.
std::string describe_calls(const Report& r) {
  std::map<std::string, int> seen;
  for (const Call& c : r.calls)
    ++seen[c.backend + "/" + c.library + "/" + c.direction + " B" + std::to_string(c.shape.B) + " T" +
           std::to_string(c.shape.tokens) + " H" + std::to_string(c.shape.Hq) + "/" + std::to_string(c.shape.Hkv) +
           " S" + std::to_string(c.shape.Sq) + "x" + std::to_string(c.shape.Skv) + " D" + std::to_string(c.shape.D) +
           " " + c.shape.dtype];
  std::string out;
  for (const auto& [k, n] : seen) out += "\n  " + std::to_string(n) + " x " + k;
  return out;
}

void check_device(const Report& r, const json& want) {
  if (want.contains("arch")) {
    EXPECT_EQ(r.source.arch, want.at("arch").get<std::string>());
  }
  if (want.contains("name_contains")) {
    EXPECT_NE(r.source.device_name.find(want.at("name_contains").get<std::string>()), std::string::npos)
        << r.source.device_name;
  }
  if (want.contains("has_gpu")) {
    EXPECT_EQ(r.summary.has_gpu, want.at("has_gpu").get<bool>());
  }
}

// Steps, their phases and the number of layers (one per position in a step).
void check_story(const Report& r, const json& want) {
  if (want.contains("layers")) {
    EXPECT_EQ(r.layers.size(), want.at("layers").get<size_t>());
  }
  if (!want.contains("steps")) return;
  const json& steps = want.at("steps");
  ASSERT_EQ(r.steps.size(), steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = r.steps[i];
    const json& w = steps[i];
    SCOPED_TRACE("step " + std::to_string(i));
    if (w.contains("calls")) {
      EXPECT_EQ(s.call_count, w.at("calls").get<int64_t>());
    }
    if (w.contains("marker_kind")) {
      EXPECT_EQ(s.marker_kind, w.at("marker_kind").get<std::string>());
    }
    if (w.contains("phase")) {
      EXPECT_EQ(s.phase, w.at("phase").get<std::string>());
    }
    if (w.contains("phase_inferred")) {
      EXPECT_EQ(s.phase_inferred, w.at("phase_inferred").get<bool>());
    }
    for (const auto& [key, field] : {std::pair{"prefill_tokens", &Step::prefill_tokens},
                                     std::pair{"prefill_requests", &Step::prefill_requests},
                                     std::pair{"decode_tokens", &Step::decode_tokens},
                                     std::pair{"decode_requests", &Step::decode_requests}})
      if (w.contains(key)) {
        EXPECT_EQ(s.*field, w.at(key).get<int64_t>()) << key;
      }
    if (w.contains("tokens_from")) {
      EXPECT_EQ(s.tokens_from, w.at("tokens_from").get<std::string>());
    }
  }
}

class FixtureTable : public ::testing::TestWithParam<json> {};

TEST_P(FixtureTable, AnalyzeGivesTheReadmeGroundTruth) {
  const json& row = GetParam();
  const std::string file = row.at("file");
  SCOPED_TRACE(file + " (" + row.at("truth").get<std::string>() + ")");
  const Report& r = analyzed(fixture(file));
  std::vector<std::string> skipped;
  if (pending(file, "calls")) {
    skipped.push_back("calls");
  } else {
    EXPECT_EQ(r.calls.size(), row.at("calls").get<size_t>()) << describe_calls(r);
  }
  const json groups = row.value("groups", json::array());
  for (size_t i = 0; i < groups.size(); ++i) {
    const std::string check = "group " + std::to_string(i);
    if (pending(file, check)) {
      skipped.push_back(check);
      continue;
    }
    const auto n = std::count_if(r.calls.begin(), r.calls.end(), [&](const Call& c) { return in_group(c, groups[i]); });
    EXPECT_EQ(n, groups[i].at("count").get<int64_t>()) << check << ": " << groups[i].dump() << describe_calls(r);
  }
  if (row.contains("story")) check_story(r, row.at("story"));
  if (row.contains("device")) {
    if (pending(file, "device")) {
      skipped.push_back("device");
    } else {
      check_device(r, row.at("device"));
    }
  }
  std::string skipped_text;
  for (const std::string& s : skipped) skipped_text += (skipped_text.empty() ? "" : ", ") + s;
  if (!skipped_text.empty()) RecordProperty("pending", skipped_text);
}

std::string row_name(const ::testing::TestParamInfo<json>& info) {
  std::string name = std::filesystem::path(info.param.at("file").get<std::string>()).filename().string();
  name = name.substr(0, name.find('.'));
  for (char& ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(EveryTrace, FixtureTable, ::testing::ValuesIn(fixture_rows()), row_name);

TEST(FixtureTableCoverage, EveryTraceUnderTheFixturesHasARow) {
  std::set<std::string> rows;
  for (const json& row : fixture_rows()) rows.insert(row.at("file").get<std::string>());
  const std::filesystem::path root(ATTNPROF_FIXTURES_DIR);
  size_t traces = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file() || !is_trace_file(entry.path())) continue;
    ++traces;
    const std::string relative = std::filesystem::relative(entry.path(), root).generic_string();
    EXPECT_TRUE(rows.count(relative)) << relative << " has no row in fixture_expectations.json";
  }
  EXPECT_EQ(traces, rows.size()) << "rows naming files that are not there";
}

TEST(FixtureTableCoverage, EveryPendingCheckNamesARowAndAReason) {
  std::set<std::string> rows;
  for (const json& row : fixture_rows()) rows.insert(row.at("file").get<std::string>());
  for (const json& p : expectations().at("pending")) {
    EXPECT_TRUE(rows.count(p.at("file").get<std::string>())) << p.dump();
    EXPECT_FALSE(p.at("why").get<std::string>().empty()) << p.dump();
  }
}

}  // namespace
}  // namespace attnprof::test
