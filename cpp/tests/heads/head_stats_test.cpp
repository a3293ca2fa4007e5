// Head statistics on planted patterns with exact answers, and against a dense float64
// computation on random inputs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <random>
#include <vector>

#include "attnprof/heads.h"

namespace attnprof {
namespace {

// One head, keys one-hot (k_j = e_j, D = S): query i scores `alpha` on the keys chosen by
// `attends(i, j)` and 0 elsewhere, so with alpha = 1000 the softmax is exactly uniform over
// the chosen keys (exp(-1000) is 0 in float).
struct Planted {
  int64_t S;
  std::vector<float> q, k;
  HeadInputs inputs;
  Planted(int64_t s, bool causal, const std::function<bool(int64_t, int64_t)>& attends) : S(s) {
    q.assign(static_cast<size_t>(S * S), 0.0f);
    k.assign(static_cast<size_t>(S * S), 0.0f);
    for (int64_t j = 0; j < S; ++j) k[static_cast<size_t>(j * S + j)] = 1.0f;
    for (int64_t i = 0; i < S; ++i)
      for (int64_t j = 0; j < S; ++j)
        if (attends(i, j)) q[static_cast<size_t>(i * S + j)] = 1000.0f;
    inputs.q = q.data();
    inputs.k = k.data();
    inputs.B = inputs.Hq = inputs.Hkv = 1;
    inputs.Sq = inputs.Skv = inputs.D = S;
    inputs.scale = 1.0;
    inputs.causal = causal;
  }
  HeadStats run(HeadOptions opt = {}) const {
    auto r = compute_head_stats(inputs, opt);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.value().at(0);
  }
};

double window(const HeadStats& h, int64_t w) {
  for (const auto& [ww, m] : h.window_mass)
    if (ww == w) return m;
  ADD_FAILURE() << "window " << w << " not computed";
  return -1;
}

TEST(HeadStats, HeadOnTokenZeroHasSinkMassOneAndEntropyZero) {
  Planted p(128, /*causal=*/true, [](int64_t, int64_t j) { return j == 0; });
  const HeadStats h = p.run();
  EXPECT_DOUBLE_EQ(h.sink_mass, 1.0);
  EXPECT_NEAR(h.entropy, 0.0, 1e-12);
  EXPECT_DOUBLE_EQ(h.max_weight, 1.0);
  EXPECT_DOUBLE_EQ(h.sink_window_recall, 1.0);
  EXPECT_EQ(h.query_rows, 128);
}

TEST(HeadStats, UniformHeadHasEntropyOne) {
  for (bool causal : {false, true}) {
    Planted p(192, causal, [](int64_t, int64_t) { return false; });  // all logits 0
    const HeadStats h = p.run();
    EXPECT_NEAR(h.entropy, 1.0, 1e-12) << "causal=" << causal;
    // Mean max weight = mean over rows of 1/n_i: 1/192 non-causal, H_192/192 causal.
    double expected = 1.0 / 192;
    if (causal) {
      expected = 0;
      for (int i = 1; i <= 192; ++i) expected += 1.0 / i;
      expected /= 192;
    }
    EXPECT_NEAR(h.max_weight, expected, 1e-9);
  }
}

TEST(HeadStats, LocalHeadHasWindowMassOneFromItsWidth) {
  // Causal head attending uniformly to its last 8 tokens (itself included): |i - j| < 8.
  Planted p(128, true, [](int64_t i, int64_t j) { return j <= i && i - j < 8; });
  HeadOptions opt;
  opt.windows = {4, 8, 16, 64};
  const HeadStats h = p.run(opt);
  EXPECT_NEAR(window(h, 8), 1.0, 1e-12);
  EXPECT_NEAR(window(h, 16), 1.0, 1e-12);
  EXPECT_NEAR(window(h, 64), 1.0, 1e-12);
  // w = 4: row i >= 7 keeps 4 of its 8 keys; rows i < 7 see i+1 keys, min(i+1, 4) inside.
  double w4 = 0;
  for (int64_t i = 0; i < 128; ++i) w4 += i >= 7 ? 0.5 : std::min<double>(i + 1, 4) / (i + 1);
  EXPECT_NEAR(window(h, 4), w4 / 128, 1e-9);
  // Normalised entropy of row i >= 7: log 8 / log(i + 1).
  double ent = 0;
  for (int64_t i = 1; i < 128; ++i) ent += std::log(std::min<double>(i + 1, 8)) / std::log(i + 1.0);
  EXPECT_NEAR(h.entropy, ent / 127, 1e-9);
}

TEST(HeadStats, BlockDiagonalHeadNeedsOneBlockPerQueryBlock) {
  // S = 256, blocks of 64: every query attends uniformly to its own 64-key block.
  auto same_block = [](int64_t i, int64_t j) { return i / 64 == j / 64; };
  {
    Planted p(256, false, same_block);
    const HeadStats h = p.run();
    EXPECT_DOUBLE_EQ(h.block_coverage_90, 1.0 / 4);  // 4 query blocks x 1 of 4 blocks
    EXPECT_DOUBLE_EQ(h.block_coverage_95, 1.0 / 4);
  }
  {
    Planted p(256, true, [&](int64_t i, int64_t j) { return j <= i && same_block(i, j); });
    const HeadStats h = p.run();
    EXPECT_DOUBLE_EQ(h.block_coverage_95, 4.0 / (1 + 2 + 3 + 4));  // visible: 1, 2, 3, 4 blocks
  }
  {
    // 128-blocks: two query blocks, each needs 1 of the 2 key blocks.
    Planted p(256, false, [](int64_t i, int64_t j) { return i / 128 == j / 128; });
    HeadOptions opt;
    opt.block_size = 128;
    EXPECT_DOUBLE_EQ(p.run(opt).block_coverage_90, 0.5);
  }
}

// ---- dense float64 reference --------------------------------------------------------------

struct Random {
  int64_t B = 2, Hq = 4, Hkv = 2, Sq = 200, Skv = 200, D = 40, Dv = 24, hidden = 48;
  std::vector<float> q, k, v, w_o;
  explicit Random(uint32_t seed, float logit_scale = 2.0f) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> n(0.0f, 1.0f);
    auto fill = [&](std::vector<float>& x, int64_t count, float s) {
      x.resize(static_cast<size_t>(count));
      for (auto& e : x) e = n(rng) * s;
    };
    fill(q, B * Hq * Sq * D, logit_scale);
    fill(k, B * Hkv * Skv * D, 1.0f);
    fill(v, B * Hkv * Skv * Dv, 1.0f);
    fill(w_o, hidden * Hq * Dv, 0.2f);
  }
  HeadInputs inputs(bool causal) const {
    HeadInputs in;
    in.q = q.data(); in.k = k.data(); in.v = v.data(); in.w_o = w_o.data();
    in.B = B; in.Hq = Hq; in.Hkv = Hkv; in.Sq = Sq; in.Skv = Skv; in.D = D; in.Dv = Dv;
    in.hidden = hidden; in.causal = causal;
    return in;
  }
};

std::vector<HeadStats> dense_reference(const HeadInputs& in, const HeadOptions& opt) {
  const int64_t G = in.Hq / in.Hkv, off = in.Skv - in.Sq, bs = opt.block_size;
  const double scale = 1.0 / std::sqrt(static_cast<double>(in.D));
  std::vector<HeadStats> out(static_cast<size_t>(in.Hq));
  std::vector<double> norm(static_cast<size_t>(in.Hq), 0.0);
  std::vector<int64_t> rows(static_cast<size_t>(in.Hq), 0), ent_rows(rows), need90(rows), need95(rows), vis(rows);
  for (int64_t b = 0; b < in.B; ++b) {
    const int64_t klen = in.key_lengths.empty() ? in.Skv : in.key_lengths[static_cast<size_t>(b)];
    for (int64_t h = 0; h < in.Hq; ++h) {
      HeadStats& hs = out[static_cast<size_t>(h)];
      hs.window_mass.resize(opt.windows.size());
      const int64_t kv = h / G;
      std::vector<std::vector<double>> A(static_cast<size_t>(in.Sq));
      for (int64_t i = 0; i < in.Sq; ++i) {
        int64_t hi = in.causal ? std::min(klen, i + off + 1) : klen;
        if (!in.key_lengths.empty() && in.Sq == in.Skv && i >= klen) hi = 0;
        std::vector<double> z(static_cast<size_t>(hi));
        for (int64_t j = 0; j < hi; ++j) {
          double s = 0;
          for (int64_t d = 0; d < in.D; ++d)
            s += static_cast<double>(in.q[((b * in.Hq + h) * in.Sq + i) * in.D + d]) *
                 in.k[((b * in.Hkv + kv) * in.Skv + j) * in.D + d];
          z[static_cast<size_t>(j)] = s * scale;
        }
        if (hi == 0) continue;
        const double m = *std::max_element(z.begin(), z.end());
        double l = 0;
        for (auto& x : z) l += (x = std::exp(x - m));
        for (auto& x : z) x /= l;
        A[static_cast<size_t>(i)] = z;
        ++rows[static_cast<size_t>(h)];
        hs.mean_keys += static_cast<double>(hi);
        double H = 0, mx = 0, sink = 0, recall = 0;
        for (int64_t j = 0; j < hi; ++j) {
          const double p = z[static_cast<size_t>(j)];
          if (p > 0) H -= p * std::log(p);
          mx = std::max(mx, p);
          if (j < opt.sink_tokens) sink += p;
          const int64_t dist = std::abs(i + off - j);
          for (size_t w = 0; w < opt.windows.size(); ++w)
            if (dist < opt.windows[w]) hs.window_mass[w].second += p;
          if (j < opt.sink_tokens || dist < opt.recall_window) recall += p;
        }
        if (hi > 1) {
          hs.entropy += H / std::log(static_cast<double>(hi));
          ++ent_rows[static_cast<size_t>(h)];
        }
        hs.max_weight += mx;
        hs.sink_mass += sink;
        hs.special_mass += sink;
        hs.sink_window_recall += recall;
        // output row: f = W_O^h (sum_j p_j v_j)
        std::vector<double> o(static_cast<size_t>(in.Dv), 0.0);
        for (int64_t j = 0; j < hi; ++j)
          for (int64_t c = 0; c < in.Dv; ++c)
            o[static_cast<size_t>(c)] += z[static_cast<size_t>(j)] * in.v[((b * in.Hkv + kv) * in.Skv + j) * in.Dv + c];
        double sq = 0;
        for (int64_t r = 0; r < in.hidden; ++r) {
          double f = 0;
          for (int64_t c = 0; c < in.Dv; ++c) f += in.w_o[r * in.Hq * in.Dv + h * in.Dv + c] * o[static_cast<size_t>(c)];
          sq += f * f;
        }
        norm[static_cast<size_t>(h)] += std::sqrt(sq);
      }
      // Block coverage per query block.
      for (int64_t q0 = 0; q0 < in.Sq; q0 += bs) {
        int64_t hi_max = 0, nr = 0;
        for (int64_t i = q0; i < std::min(in.Sq, q0 + bs); ++i) {
          hi_max = std::max<int64_t>(hi_max, static_cast<int64_t>(A[static_cast<size_t>(i)].size()));
          nr += A[static_cast<size_t>(i)].empty() ? 0 : 1;
        }
        if (nr == 0) continue;
        const int64_t nb = (hi_max + bs - 1) / bs;
        std::vector<double> M(static_cast<size_t>(nb), 0.0);
        for (int64_t i = q0; i < std::min(in.Sq, q0 + bs); ++i)
          for (size_t j = 0; j < A[static_cast<size_t>(i)].size(); ++j)
            M[j / static_cast<size_t>(bs)] += A[static_cast<size_t>(i)][j] / static_cast<double>(nr);
        std::sort(M.begin(), M.end(), std::greater<>());
        auto need = [&](double tau) {
          double acc = 0;
          for (size_t t = 0; t < M.size(); ++t)
            if ((acc += M[t]) >= tau - 1e-12) return static_cast<int64_t>(t + 1);
          return nb;
        };
        need90[static_cast<size_t>(h)] += need(0.9);
        need95[static_cast<size_t>(h)] += need(0.95);
        vis[static_cast<size_t>(h)] += nb;
      }
    }
  }
  double total = 0;
  for (int64_t h = 0; h < in.Hq; ++h) total += norm[static_cast<size_t>(h)] / static_cast<double>(rows[static_cast<size_t>(h)]);
  for (int64_t h = 0; h < in.Hq; ++h) {
    HeadStats& hs = out[static_cast<size_t>(h)];
    const double n = static_cast<double>(rows[static_cast<size_t>(h)]);
    hs.mean_keys /= n;
    hs.entropy /= static_cast<double>(ent_rows[static_cast<size_t>(h)]);
    hs.max_weight /= n;
    hs.sink_mass /= n;
    hs.special_mass /= n;
    hs.sink_window_recall /= n;
    for (size_t w = 0; w < opt.windows.size(); ++w) {
      hs.window_mass[w].first = opt.windows[w];
      hs.window_mass[w].second /= n;
    }
    hs.block_coverage_90 = static_cast<double>(need90[static_cast<size_t>(h)]) / static_cast<double>(vis[static_cast<size_t>(h)]);
    hs.block_coverage_95 = static_cast<double>(need95[static_cast<size_t>(h)]) / static_cast<double>(vis[static_cast<size_t>(h)]);
    hs.output_share = norm[static_cast<size_t>(h)] / n / total;
  }
  return out;
}

void expect_same(const std::vector<HeadStats>& got, const std::vector<HeadStats>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t h = 0; h < got.size(); ++h) {
    SCOPED_TRACE("head " + std::to_string(h));
    EXPECT_NEAR(got[h].mean_keys, want[h].mean_keys, tol);
    EXPECT_NEAR(got[h].entropy, want[h].entropy, tol);
    EXPECT_NEAR(got[h].max_weight, want[h].max_weight, tol);
    EXPECT_NEAR(got[h].sink_mass, want[h].sink_mass, tol);
    EXPECT_NEAR(got[h].special_mass, want[h].special_mass, tol);
    EXPECT_NEAR(got[h].sink_window_recall, want[h].sink_window_recall, tol);
    EXPECT_NEAR(got[h].block_coverage_90, want[h].block_coverage_90, tol);
    EXPECT_NEAR(got[h].block_coverage_95, want[h].block_coverage_95, tol);
    EXPECT_NEAR(got[h].output_share, want[h].output_share, tol);
    ASSERT_EQ(got[h].window_mass.size(), want[h].window_mass.size());
    for (size_t w = 0; w < got[h].window_mass.size(); ++w)
      EXPECT_NEAR(got[h].window_mass[w].second, want[h].window_mass[w].second, tol) << "w=" << want[h].window_mass[w].first;
  }
}

TEST(HeadStats, StreamingEqualsDenseFloat64OnRandomInputs) {
  HeadOptions opt;
  opt.windows = {8, 32, 100};
  opt.recall_window = 16;
  for (bool causal : {false, true}) {
    SCOPED_TRACE(causal ? "causal" : "full");
    Random r(causal ? 7 : 11);
    const HeadInputs in = r.inputs(causal);
    auto got = compute_head_stats(in, opt);
    ASSERT_TRUE(got.ok()) << got.error().message;
    expect_same(got.value(), dense_reference(in, opt), 1e-6);
  }
}

TEST(HeadStats, PaddedKeysAndCrossLengthsMatchDenseFloat64) {
  HeadOptions opt;
  opt.windows = {8, 64};
  opt.recall_window = 16;
  opt.block_size = 128;
  {
    Random r(3);
    HeadInputs in = r.inputs(false);
    in.key_lengths = {200, 137};  // batch row 1 padded after 137 tokens
    auto got = compute_head_stats(in, opt);
    ASSERT_TRUE(got.ok());
    expect_same(got.value(), dense_reference(in, opt), 1e-6);
  }
  {
    Random r(5);
    r.Sq = 70;  // causal with a KV prefix: queries are the last 70 positions
    r.q.resize(static_cast<size_t>(r.B * r.Hq * r.Sq * r.D));
    const HeadInputs in = r.inputs(true);
    auto got = compute_head_stats(in, opt);
    ASSERT_TRUE(got.ok());
    expect_same(got.value(), dense_reference(in, opt), 1e-6);
  }
}

TEST(HeadStats, SampledQueryBlocksReportTheirStandardError) {
  Random r(9);
  r.Sq = r.Skv = 1024;
  r.D = 32;
  Random big = r;
  std::mt19937 rng(1);
  std::normal_distribution<float> n(0.0f, 1.0f);
  big.q.resize(static_cast<size_t>(r.B * r.Hq * r.Sq * r.D));
  big.k.resize(static_cast<size_t>(r.B * r.Hkv * r.Skv * r.D));
  for (auto& x : big.q) x = 2.0f * n(rng);
  for (auto& x : big.k) x = n(rng);
  HeadInputs in = big.inputs(true);
  in.v = nullptr;
  in.w_o = nullptr;
  HeadOptions exact_opt;
  auto exact = compute_head_stats(in, exact_opt);
  HeadOptions sampled_opt;
  sampled_opt.max_query_blocks = 6;  // of 16 query blocks per row and head
  auto sampled = compute_head_stats(in, sampled_opt);
  ASSERT_TRUE(exact.ok() && sampled.ok());
  for (size_t h = 0; h < exact.value().size(); ++h) {
    const auto& e = exact.value()[h];
    const auto& s = sampled.value()[h];
    EXPECT_EQ(e.sampling_stderr, 0.0);
    EXPECT_GT(s.sampling_stderr, 0.0);
    EXPECT_LT(s.query_rows, e.query_rows);
    EXPECT_NEAR(s.entropy, e.entropy, 5 * s.sampling_stderr + 1e-3);
  }
}

TEST(HeadStats, RejectsInconsistentShapes) {
  Random r(1);
  HeadInputs in = r.inputs(false);
  in.Hkv = 3;  // 4 query heads cannot share 3 KV heads
  auto bad = compute_head_stats(in);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kInvalidArgument);
  in = r.inputs(false);
  HeadOptions opt;
  opt.block_size = 96;
  EXPECT_FALSE(compute_head_stats(in, opt).ok());
}

TEST(MaskedScoreFraction, SlidingWindowOnTheMistralShape) {
  // S = 4096, W = 1024, causal: kept = sum_i min(i + 1, 1024) = 524800 + 3072 * 1024.
  const double kept = 524800.0 + 3072.0 * 1024.0;
  EXPECT_NEAR(masked_score_fraction(4096, 4096, true, 1024), 1.0 - kept / (4096.0 * 4096.0), 1e-12);
  EXPECT_NEAR(masked_score_fraction(4096, 4096, true, 0), 4095.0 / 8192.0, 1e-12);
  EXPECT_EQ(masked_score_fraction(64, 64, false, 0), 0.0);
}

}  // namespace
}  // namespace attnprof
