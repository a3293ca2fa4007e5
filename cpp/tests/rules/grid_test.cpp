// The rules against real PyTorch 2.11 decisions on an H200 with cuDNN 9.19
// (shared/fixtures/h200-torch2.11/sdpa_grid_cuda_sample.json), through `attnprof explain --inputs`.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const char* kBackends[] = {"can_use_flash_attention", "can_use_efficient_attention", "can_use_cudnn_attention"};

json load_json(const fs::path& p) {
  std::ifstream f(p);
  return json::parse(f);
}

std::string numbers_blanked(const std::string& s) { return std::regex_replace(s, std::regex("[0-9]+"), "N"); }

struct GridRun {
  json rows;
  std::vector<json> out;
};

// Runs the whole grid once through the CLI (the acceptance is about the batch output).
const GridRun& grid_run() {
  static const GridRun run = [] {
    GridRun r;
    r.rows = load_json(fs::path(ATTNPROF_FIXTURES_DIR) / "h200-torch2.11/sdpa_grid_cuda_sample.json")["rows"];
    const fs::path dir = fs::temp_directory_path() / ("attnprof_rules_grid_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    {
      std::ofstream in(dir / "in.jsonl");
      for (const json& row : r.rows) {
        json input = row;
        for (const char* b : kBackends) input.erase(b);
        input.erase("fused_choice");
        in << input.dump() << "\n";
      }
    }
    const std::string cmd = std::string(ATTNPROF_CLI_PATH) + " explain --inputs " + (dir / "in.jsonl").string() +
                            " --torch 2.11 --arch sm90 --cudnn 9.19 --quiet --json " + (dir / "out.jsonl").string();
    if (std::system(cmd.c_str()) != 0) return r;
    std::ifstream out(dir / "out.jsonl");
    std::string line;
    while (std::getline(out, line)) r.out.push_back(json::parse(line));
    fs::remove_all(dir);
    return r;
  }();
  return run;
}

TEST(RulesGrid, BatchWritesOneLinePerGridRow) {
  const GridRun& r = grid_run();
  ASSERT_EQ(r.rows.size(), 360u);
  ASSERT_EQ(r.out.size(), r.rows.size());
}

TEST(RulesGrid, FusedChoiceMatchesPyTorch211OnEveryRow) {
  const GridRun& r = grid_run();
  ASSERT_EQ(r.out.size(), r.rows.size());
  int wrong = 0;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    if (r.out[i]["fused_choice"] != r.rows[i]["fused_choice"]) {
      ++wrong;
      ADD_FAILURE() << "row " << r.rows[i]["row"] << ": " << r.rows[i].dump() << "\n  ours: " << r.out[i].dump();
    }
  }
  EXPECT_EQ(wrong, 0);
}

TEST(RulesGrid, OkFlagsMatchPyTorch211OnEveryRow) {
  const GridRun& r = grid_run();
  ASSERT_EQ(r.out.size(), r.rows.size());
  for (size_t i = 0; i < r.rows.size(); ++i)
    for (const char* b : kBackends)
      EXPECT_EQ(r.out[i][b]["ok"], r.rows[i][b]["ok"]) << b << " row " << r.rows[i]["row"] << ": " << r.out[i][b].dump();
}

TEST(RulesGrid, EveryRecordedWhyMessageIsProduced) {
  const GridRun& r = grid_run();
  ASSERT_EQ(r.out.size(), r.rows.size());
  size_t checked = 0, exact = 0;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    for (const char* b : kBackends) {
      for (const auto& want : r.rows[i][b]["why"]) {
        ++checked;
        bool found = false;
        for (const auto& got : r.out[i][b]["why"]) {
          if (numbers_blanked(got.get<std::string>()) == numbers_blanked(want.get<std::string>())) found = true;
          if (got == want) ++exact;
        }
        EXPECT_TRUE(found) << b << " row " << r.rows[i]["row"] << " misses: " << want << "\n  ours: " << r.out[i][b].dump();
      }
    }
  }
  EXPECT_GT(checked, 600u);
  EXPECT_EQ(exact, checked) << "messages matched up to numbers but not exactly";
}

}  // namespace
