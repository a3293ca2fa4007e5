// Every rule, both sides of its condition: a failing input that trips exactly the rule under
// test, and the nearest passing input that does not.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>

#include "attnprof/rules.h"

namespace {

using namespace attnprof::rules;

struct Case {
  const char* rule;
  std::function<void(SdpaInput&, Env&)> common;  // setup shared by both sides
  std::function<void(SdpaInput&, Env&)> failing;  // the change that trips the rule
};

SdpaInput base_input() {
  SdpaInput in;
  in.B = 2, in.Hq = 8, in.Hkv = 8, in.Sq = 256, in.Skv = 256, in.D = 64, in.Dv = 64, in.dtype = "bf16";
  return in;
}

Env env_of(const char* torch, const char* arch, const char* cudnn = "9.19") {
  Env e;
  e.torch = *parse_version(torch);
  e.device = *parse_arch(arch);
  e.cudnn = *parse_version(cudnn);
  return e;
}

auto on(const char* torch, const char* arch, const char* cudnn = "9.19") {
  return [=](SdpaInput&, Env& e) { e = env_of(torch, arch, cudnn); };
}
auto none = [](SdpaInput&, Env&) {};

bool trips(const char* rule, const SdpaInput& in, const Env& env) {
  const Decision d = decide(in, env);
  const Rule* r = find_rule(rule);
  const Verdict* v = d.verdict(r->backend);
  if (!v) return false;
  return std::any_of(v->failed.begin(), v->failed.end(), [&](const auto& c) { return c.rule == rule; });
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      // flash
      {"flash.runtime_disabled", none, [](SdpaInput&, Env& e) { e.enabled.flash = false; }},
      {"flash.attn_mask", none, [](SdpaInput& i, Env&) { i.mask = MaskKind::kBool; }},
      {"flash.head_dim_max", none, [](SdpaInput& i, Env&) { i.D = i.Dv = 264; }},
      {"flash.arch", none, [](SdpaInput&, Env& e) { e.device.sm = 75; }},
      {"flash.rocm_arch", on("2.11", "gfx942"), [](SdpaInput&, Env& e) { e.device.gfx = "gfx1030"; }},
      {"flash.train_head_dim_sm86_89", [](SdpaInput& i, Env& e) { e = env_of("2.11", "sm89"); i.D = i.Dv = 200; },
       [](SdpaInput& i, Env&) { i.requires_grad = true; }},
      {"flash.causal_non_square", [](SdpaInput& i, Env&) { i.causal = true; }, [](SdpaInput& i, Env&) { i.Sq = 128; }},
      {"flash.dtype", none, [](SdpaInput& i, Env&) { i.dtype = "fp32"; }},
      {"flash.same_num_heads", [](SdpaInput& i, Env&) { i.Hkv = 2; i.enable_gqa = true; },
       [](SdpaInput& i, Env&) { i.enable_gqa = false; }},
      {"flash.gqa_divisible", [](SdpaInput& i, Env&) { i.enable_gqa = true; i.Hkv = 2; },
       [](SdpaInput& i, Env&) { i.Hkv = 3; }},
      {"flash.zero_seq_len", none, [](SdpaInput& i, Env&) { i.Skv = 0; }},
      {"flash.last_dim_stride", none, [](SdpaInput& i, Env&) { i.k_stride_last = 256; }},
      // efficient
      {"efficient.runtime_disabled", none, [](SdpaInput&, Env& e) { e.enabled.efficient = false; }},
      {"efficient.arch", on("2.6", "sm90"), [](SdpaInput&, Env& e) { e.device.sm = 100; }},
      {"efficient.rocm_arch", on("2.11", "gfx90a"), [](SdpaInput&, Env& e) { e.device.gfx = "gfx1030"; }},
      {"efficient.head_dim_alignment", none, [](SdpaInput& i, Env&) { i.D = i.Dv = 100; }},
      {"efficient.nested_training", [](SdpaInput& i, Env&) { i.nested = true; },
       [](SdpaInput& i, Env&) { i.requires_grad = true; }},
      {"efficient.zero_seq_len", none, [](SdpaInput& i, Env&) { i.Sq = 0; }},
      {"efficient.last_dim_stride", [](SdpaInput& i, Env&) { i.D = 8; }, [](SdpaInput& i, Env&) { i.q_stride_last = 2; }},
      {"efficient.same_num_heads", [](SdpaInput& i, Env&) { i.enable_gqa = true; }, [](SdpaInput& i, Env&) { i.Hkv = 2; }},
      {"efficient.gqa_divisible", [](SdpaInput& i, Env& e) { e = env_of("2.14", "sm90"); i.enable_gqa = true; i.Hkv = 2; },
       [](SdpaInput& i, Env&) { i.Hkv = 3; }},
      {"efficient.dtype", none, [](SdpaInput& i, Env&) { i.dtype = "fp64"; }},
      // cuDNN
      {"cudnn.not_compiled", none, [](SdpaInput&, Env& e) { e.cudnn = {}; }},
      {"cudnn.version_too_old", none, [](SdpaInput&, Env& e) { e.cudnn = *parse_version("8.9.7"); }},
      {"cudnn.dropout_version", [](SdpaInput& i, Env&) { i.dropout = 0.25; },
       [](SdpaInput&, Env& e) { e.cudnn = *parse_version("9.12"); }},
      {"cudnn.env_enabled", [](SdpaInput&, Env& e) { e = env_of("2.4", "sm90"); e.cudnn_env_enabled = true; },
       [](SdpaInput&, Env& e) { e.cudnn_env_enabled = false; }},
      {"cudnn.requires_grad", on("2.4", "sm90"), [](SdpaInput& i, Env&) { i.requires_grad = true; }},
      {"cudnn.runtime_disabled", none, [](SdpaInput&, Env& e) { e.enabled.cudnn = false; }},
      {"cudnn.nested_unsupported", on("2.6", "sm90"), [](SdpaInput& i, Env&) { i.nested = true; }},
      {"cudnn.nested_experimental", none, [](SdpaInput& i, Env&) { i.nested = true; }},
      {"cudnn.deterministic", none, [](SdpaInput&, Env& e) { e.deterministic = true; }},
      {"cudnn.dtype", none, [](SdpaInput& i, Env&) { i.dtype = "fp32"; }},
      {"cudnn.mask_shape", [](SdpaInput& i, Env&) { i.mask = MaskKind::kFloat; i.mask_dims = {2, 1, 256, 256}; },
       [](SdpaInput& i, Env&) { i.mask_dims = {2, 256, 256}; }},
      {"cudnn.arch", on("2.11", "sm90"), [](SdpaInput&, Env& e) { e.device.sm = 75; }},
      {"cudnn.dropout_resolution", [](SdpaInput& i, Env& e) { e = env_of("2.14", "sm90"); i.dropout = 0.125; },
       [](SdpaInput& i, Env&) { i.dropout = 0.1; }},
      {"cudnn.zero_seq_len", none, [](SdpaInput& i, Env&) { i.Sq = 0; }},
      {"cudnn.last_dim_stride", none, [](SdpaInput& i, Env&) { i.v_stride_last = 64; }},
      {"cudnn.same_num_heads", [](SdpaInput& i, Env&) { i.Hkv = 2; i.enable_gqa = true; },
       [](SdpaInput& i, Env&) { i.enable_gqa = false; }},
      {"cudnn.gqa_divisible", [](SdpaInput& i, Env&) { i.enable_gqa = true; i.Hkv = 4; },
       [](SdpaInput& i, Env&) { i.Hkv = 3; }},
      {"cudnn.batch_heads_max", on("2.14", "sm90"), [](SdpaInput& i, Env&) { i.B = 70000; }},
      {"cudnn.head_dim_max", none, [](SdpaInput& i, Env&) { i.D = i.Dv = 288; }},
      {"cudnn.head_dim_multiple_8", none, [](SdpaInput& i, Env&) { i.D = i.Dv = 100; }},
      {"cudnn.seq_len_1", on("2.6", "sm90"), [](SdpaInput& i, Env&) { i.Sq = 1; }},
      {"cudnn.seq_kv_1", none, [](SdpaInput& i, Env&) { i.Skv = 1; }},
      {"cudnn.seq_q_1_dropout", [](SdpaInput& i, Env&) { i.Sq = 1; }, [](SdpaInput& i, Env&) { i.dropout = 0.1; }},
      {"cudnn.d256_backward",
       [](SdpaInput& i, Env& e) { e = env_of("2.14", "sm90", "9.23"); i.requires_grad = true; i.D = i.Dv = 256; },
       [](SdpaInput& i, Env&) { i.D = i.Dv = 224; }},
      // math
      {"math.runtime_disabled", none, [](SdpaInput&, Env& e) { e.enabled.math = false; }},
      // CPU flash
      {"cpu_flash.runtime_disabled", on("2.13", "cpu"), [](SdpaInput&, Env& e) { e.enabled.flash = false; }},
      {"cpu_flash.nested", on("2.13", "cpu"), [](SdpaInput& i, Env&) { i.nested = true; }},
      {"cpu_flash.dropout", on("2.13", "cpu"), [](SdpaInput& i, Env&) { i.dropout = 0.1; }},
      {"cpu_flash.same_num_heads", [](SdpaInput& i, Env& e) { e = env_of("2.13", "cpu"); i.Hkv = 1; i.enable_gqa = true; },
       [](SdpaInput& i, Env&) { i.enable_gqa = false; }},
      {"cpu_flash.gqa_divisible", [](SdpaInput& i, Env& e) { e = env_of("2.13", "cpu"); i.enable_gqa = true; i.Hkv = 2; },
       [](SdpaInput& i, Env&) { i.Hkv = 5; }},
      {"cpu_flash.mask_shape", [](SdpaInput& i, Env& e) { e = env_of("2.13", "cpu"); i.mask = MaskKind::kBool; i.mask_dims = {256, 256}; },
       [](SdpaInput& i, Env&) { i.mask_dims = {1, 256, 256}; }},
      {"cpu_flash.head_dim", on("2.13", "cpu"), [](SdpaInput& i, Env&) { i.Dv = 32; }},
      {"cpu_flash.zero_seq_len", on("2.13", "cpu"), [](SdpaInput& i, Env&) { i.Sq = 0; }},
      {"cpu_flash.last_dim_stride", on("2.13", "cpu"), [](SdpaInput& i, Env&) { i.q_stride_last = 256; }},
      {"cpu_flash.dtype", on("2.13", "cpu"), [](SdpaInput& i, Env&) { i.dtype = "fp8_e4m3"; }},
      // FA2 / FA3 / xFormers / Flex
      {"fa2.arch", none, [](SdpaInput&, Env& e) { e.device.sm = 75; }},
      {"fa2.dtype", none, [](SdpaInput& i, Env&) { i.dtype = "fp32"; }},
      {"fa2.head_dim_max", none, [](SdpaInput& i, Env&) { i.D = i.Dv = 320; }},
      {"fa2.gqa_divisible", [](SdpaInput& i, Env&) { i.Hkv = 2; }, [](SdpaInput& i, Env&) { i.Hkv = 3; }},
      {"fa2.attn_mask", none, [](SdpaInput& i, Env&) { i.mask = MaskKind::kFloat; }},
      {"fa3.arch", none, [](SdpaInput&, Env& e) { e.device.sm = 100; }},
      {"fa3.dtype", none, [](SdpaInput& i, Env&) { i.dtype = "fp32"; }},
      {"fa3.fp8_backward", [](SdpaInput& i, Env&) { i.dtype = "fp8_e4m3"; }, [](SdpaInput& i, Env&) { i.requires_grad = true; }},
      {"fa3.head_dim", none, [](SdpaInput& i, Env&) { i.D = i.Dv = 100; }},
      {"fa3.head_dim_v", [](SdpaInput& i, Env&) { i.D = 192; i.Dv = 128; }, [](SdpaInput&, Env& e) { e.device.sm = 80; }},
      {"fa3.dropout", none, [](SdpaInput& i, Env&) { i.dropout = 0.1; }},
      {"fa3.attn_mask", none, [](SdpaInput& i, Env&) { i.mask = MaskKind::kBool; }},
      {"fa3.gqa_divisible", [](SdpaInput& i, Env&) { i.Hkv = 4; }, [](SdpaInput& i, Env&) { i.Hkv = 3; }},
      {"xformers.device", none, [](SdpaInput&, Env& e) { e = env_of("2.11", "cpu"); }},
      {"xformers.dtype", none, [](SdpaInput& i, Env&) { i.dtype = "fp64"; }},
      {"xformers.newer_than_sm90", on("2.11", "sm100"), [](SdpaInput& i, Env&) { i.mask = MaskKind::kFloat; }},
      {"flex.torch_version", none, [](SdpaInput&, Env& e) { e.torch = *parse_version("2.4"); }},
      {"flex.dropout", none, [](SdpaInput& i, Env&) { i.dropout = 0.1; }},
  };
  return all;
}

TEST(RuleConditions, EveryRuleHasABothSidesCase) {
  std::set<std::string> covered;
  for (const Case& c : cases()) covered.insert(c.rule);
  for (const Rule& r : all_rules()) EXPECT_TRUE(covered.count(r.id)) << "no test case for rule " << r.id;
}

TEST(RuleConditions, EachRuleTripsOnItsFailingSideOnly) {
  for (const Case& c : cases()) {
    ASSERT_NE(find_rule(c.rule), nullptr) << c.rule;
    SdpaInput pass_in = base_input();
    Env pass_env = env_of("2.11", "sm90");
    c.common(pass_in, pass_env);
    SdpaInput fail_in = pass_in;
    Env fail_env = pass_env;
    c.failing(fail_in, fail_env);
    EXPECT_FALSE(trips(c.rule, pass_in, pass_env)) << c.rule << " trips on its passing side";
    EXPECT_TRUE(trips(c.rule, fail_in, fail_env)) << c.rule << " does not trip on its failing side";
  }
}

TEST(RuleConditions, RuleIdsAreUniqueAndPrefixedByTheirBackend) {
  std::set<std::string> ids;
  for (const Rule& r : all_rules()) {
    EXPECT_TRUE(ids.insert(r.id).second) << "duplicate rule id " << r.id;
    const std::string id = r.id;
    EXPECT_EQ(id.substr(0, id.find('.')), backend_name(r.backend)) << id;
    EXPECT_NE(std::string(r.fix), "") << id;
  }
}

}  // namespace
