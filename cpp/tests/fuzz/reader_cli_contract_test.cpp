// The error contract of every reader end to end (docs/reliability.md): the built CLI on a bad
// input prints ONE line on stderr naming the file and the field, exits 2, writes no output file.
// One test per class of bad input; each input is small and made here, next to a good one that
// the same command reads (so a test cannot pass because the command fails for another reason).
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "cli_contract.h"

namespace {

using attnprof::testing::CliRun;

// A safetensors file: 8-byte little-endian header length, the JSON header, the data.
std::string safetensors(const std::string& header_json, const std::string& data) {
  std::string out(8, '\0');
  uint64_t n = header_json.size();
  for (int i = 0; i < 8; ++i) out[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header_json + data;
}

std::string floats(size_t n, float value = 0.5f) {
  std::string out(4 * n, '\0');
  for (size_t i = 0; i < n; ++i) std::memcpy(out.data() + 4 * i, &value, 4);
  return out;
}

// Q and K of one layer, [1, 1, 4, 2] float32 each: `q_name` and `q_shape` can be made bad.
std::string heads_file(const std::string& q_name = "layers.0.q", const std::string& q_shape = "[1, 1, 4, 2]",
                       const std::string& extra = "") {
  const std::string header = "{\"" + q_name + "\": {\"dtype\": \"F32\", \"shape\": " + q_shape +
                             ", \"data_offsets\": [0, 32]}, \"layers.0.k\": {\"dtype\": \"F32\", \"shape\": [1, 1, 4, 2], "
                             "\"data_offsets\": [32, 64]}" + extra + "}";
  return safetensors(header, floats(16));
}

// A Report as report_to_json writes it, cut down to the fields a diff needs.
std::string report(const std::string& version = "1.0", const std::string& calls = "[]") {
  return "{\"schema_version\": \"" + version + "\", \"calls\": " + calls + ", \"layers\": [], \"findings\": []}";
}

const char* kLlamaConfig = R"({"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 32,
  "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 128256})";

const char* kGridRow = R"({"device": "cuda", "hd": 64, "dtype": "fp16", "Hq": 8, "Hkv": 8, "Sq": 256, "Skv": 256})";

class ReaderCliContract : public attnprof::testing::CliContractTest {
 protected:
  std::string heads(const std::string& path) { return "heads '" + path + "' --json '" + out() + "'"; }
  std::string diff(const std::string& a, const std::string& b) {
    return "diff '" + a + "' '" + b + "' --json '" + out() + "'";
  }
  std::string predict(const std::string& config) { return "predict --config '" + config + "' --json '" + out() + "'"; }
  std::string explain(const std::string& batch) { return "explain --inputs '" + batch + "' --json '" + out() + "'"; }
  std::string whatif(const std::string& lengths) {
    return "whatif --lengths '" + lengths + "' --model llama-3-8b --window 4096 --json '" + out() + "'";
  }
};

// The case that started this: std::stoll threw out of load_heads_safetensors.
TEST_F(ReaderCliContract, LayerIndexBeyondInt64IsOneLineNamingTheTensor) {
  expect_read(heads(write("good.safetensors", heads_file())));
  const std::string name = "layers.99999999999999999999.q";
  expect_bad_input(heads(write("big_layer.safetensors", heads_file(name))), {"big_layer.safetensors", name, "out of range"});
}

TEST_F(ReaderCliContract, AbsurdShapesAreOneLineNamingTheTensor) {
  for (const char* shape : {"[1, 1, 0, 2]", "[1, 1, -4, 2]", "[1, 1, 9223372036854775808, 2]",
                            "[4294967296, 4294967296, 4294967296, 2]", "[1, 1, 8, 2]", "\"1x1x4x2\"", "[1, 1, 4.5, 2]"}) {
    expect_bad_input(heads(write("shape.safetensors", heads_file("layers.0.q", shape))),
                     {"shape.safetensors", "layers.0.q"});
  }
}

TEST_F(ReaderCliContract, NanAndInfValuesAreOneLine) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (float bad : {nan, inf}) {
    std::string file = heads_file();
    std::memcpy(file.data() + file.size() - 4, &bad, 4);  // the last value of layers.0.k
    expect_bad_input(heads(write("nan.safetensors", file)), {"nan.safetensors", "layers.0.k"});
  }
  expect_bad_input(heads(write("scale.safetensors", heads_file("layers.0.q", "[1, 1, 4, 2]",
                                                               ", \"__metadata__\": {\"scale\": \"nan\"}"))),
                   {"scale.safetensors", "scale"});
  expect_bad_input(whatif(write("inf.txt", "812\ninf\n")), {"inf.txt", "line 2"});
  expect_bad_input(whatif(write("nan.txt", "812\n812,nan\n")), {"nan.txt", "line 2"});
}

TEST_F(ReaderCliContract, OutOfRangeNumbersAreOneLineNamingTheField) {
  expect_read(predict(write("config.json", kLlamaConfig)));
  std::string huge = kLlamaConfig;
  huge.replace(huge.find("4096"), 4, "18446744073709551615");
  expect_bad_input(predict(write("huge.json", huge)), {"huge.json", "hidden_size"});
  std::string wide = kLlamaConfig;
  wide.replace(wide.find("4096"), 4, "1099511627776");
  expect_bad_input(predict(write("wide.json", wide)), {"wide.json", "hidden_size"});
  expect_bad_input(diff(write("a.json", report("1.0", R"([{"id": 1e300}])")), write("b.json", report())),
                   {"a.json", "/calls/0/id", "out of range"});
  expect_bad_input(explain(write("rows.jsonl", std::string(kGridRow).replace(1, 0, "\"hd_v\": 1e30, "))),
                   {"rows.jsonl", "line 1", "hd_v"});
  expect_bad_input(whatif(write("long.txt", "812\n1e300\n")), {"long.txt", "line 2"});
  expect_bad_input("predict --model llama-3-8b --memory-cap 1e300GB --json '" + out() + "'", {"1e300GB"});
  expect_bad_input("explain --q 1,8,99999999999999999999,64 --text '" + out() + "'", {"q '", "99999999999999999999"});
}

TEST_F(ReaderCliContract, DuplicateKeysAreOneLineNamingTheKey) {
  expect_bad_input(diff(write("a.json", report().replace(1, 0, "\"calls\": [], ")), write("b.json", report())),
                   {"a.json", "duplicate key /calls"});
  std::string twice = kLlamaConfig;
  twice.insert(1, "\"num_hidden_layers\": 2, ");
  expect_bad_input(predict(write("twice.json", twice)), {"twice.json", "duplicate key /num_hidden_layers"});
  expect_bad_input(explain(write("rows.jsonl", std::string(kGridRow).replace(1, 0, "\"hd\": 32, "))),
                   {"rows.jsonl", "line 1", "duplicate key /hd"});
  expect_bad_input(heads(write("dup.safetensors", heads_file("layers.0.q", "[1, 1, 4, 2]",
                                                             ", \"layers.0.k\": {}"))),
                   {"dup.safetensors", "duplicate key /layers.0.k"});
}

TEST_F(ReaderCliContract, WrongTypesAreOneLineNamingTheField) {
  expect_read(explain(write("good.jsonl", kGridRow)));
  expect_bad_input(explain(write("rows.jsonl", std::string(kGridRow).replace(1, 0, "\"B\": \"two\", "))),
                   {"rows.jsonl", "line 1", "/B", "string"});
  expect_bad_input(diff(write("a.json", report("1.0", R"([{"id": "seven"}])")), write("b.json", report())),
                   {"a.json", "/calls/0/id"});
  expect_bad_input(diff(write("a.json", report("1.0", R"("none")")), write("b.json", report())), {"a.json", "/calls"});
  std::string typed = kLlamaConfig;
  typed.replace(typed.find("\"llama\""), 7, "7");
  expect_bad_input(predict(write("typed.json", typed)), {"typed.json", "model_type"});
}

TEST_F(ReaderCliContract, TruncatedFilesAreOneLineNamingTheFile) {
  const std::string good = heads_file();
  for (size_t cut : {size_t{4}, size_t{20}, good.size() - 8}) {
    expect_bad_input(heads(write("cut.safetensors", good.substr(0, cut))), {"cut.safetensors"});
  }
  const std::string r = report();
  expect_bad_input(diff(write("cut.json", r.substr(0, r.size() / 2)), write("b.json", r)), {"cut.json"});
  expect_bad_input(predict(write("cut.json", std::string(kLlamaConfig).substr(0, 40))), {"cut.json"});
  expect_bad_input(explain(write("cut.jsonl", std::string(kGridRow).substr(0, 30))), {"cut.jsonl", "line 1"});
}

TEST_F(ReaderCliContract, ReportOfANewerMajorVersionIsOneLineNamingTheField) {
  const std::string good = write("good.json", report());
  expect_read(diff(good, good));
  expect_bad_input(diff(write("newer.json", report("2.0")), good), {"newer.json", "schema_version", "2.0"});
  // A JSON array of runs: the run that cannot be read is named.
  expect_bad_input(diff(write("runs.json", "[" + report() + ", " + report("2.0") + "]"), good),
                   {"runs.json", "run 1", "schema_version"});
}

// Input quoted in an error (a tensor name with a newline) cannot break the one line.
TEST_F(ReaderCliContract, ControlCharactersInQuotedInputStayOnOneLine) {
  expect_bad_input(heads(write("nl.safetensors", heads_file("layers.0.q", "[1, 1, 4, 2]",
                                                            ", \"layers.1.k\\nFAKE\": 5, \"layers.1.k\": 5"))),
                   {"nl.safetensors", "layers.1.k"});
  expect_bad_input(whatif(write("nl.txt", "812\n\x1b[2Jabc\n")), {"nl.txt", "line 2", "\\x1b"});
}

// A capture sidecar never stops an analysis: its one-line error lands in source.missing.
TEST_F(ReaderCliContract, BadSidecarBesideATraceIsReportedNotFatal) {
  const std::string trace = write("run.json", R"({"schemaVersion": 1, "traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 10.0, "dur": 5.0}]})");
  write("run.json.attnprof-capture.json",
        R"({"format": "attnprof-capture", "calls": [{"id": 1, "query": {"shape": [1, -8, 4, 2]}}]})");
  const CliRun r = run("analyze '" + trace + "' --json '" + out() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  std::ifstream in(out());
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_NE(ss.str().find("run.json.attnprof-capture.json"), std::string::npos);
  EXPECT_NE(ss.str().find("/calls/0/query/shape"), std::string::npos) << ss.str();
}

}  // namespace
