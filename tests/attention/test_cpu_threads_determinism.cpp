// The CPU reference gives bitwise the same logits for 1, 2 and 3 threads (fp64 and fp32) on a run
// long enough to cross the attention's key and query blocks (a 1,300-token prompt in two chunks,
// decodes beside it), on the engine's split and with every row forced to the prefill form; and its
// blocked prefill form equals a plain softmax in long double on that prompt.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "attention/cpu/cpu_backend.h"
#include "model/cpu_thread_pool.h"
#include "mla_test_util.h"

using namespace mlasim;
using namespace mlasim::test;

namespace {

template <typename T>
std::vector<std::vector<std::vector<double>>> long_run(bool force_prefill) {
  static const MlaWeights weights = seeded_weights(tiny_config(4));
  CpuBackendOptions o;
  o.num_blocks = 160;
  o.block_size = 16;
  CpuBackend<T> backend(weights, o);
  StepDriver d(mla_routing(1, 16, 2048, 4), 160);
  const int a = d.add_request(seeded_sequence(21, 1304, 512), 1300);
  const int b = d.add_request(seeded_sequence(22, 40, 512), 30);
  std::vector<std::vector<std::vector<double>>> out;
  out.push_back(d.run(backend, {{a, 700}, {b, 30}}, force_prefill));
  out.push_back(d.run(backend, {{b, 1}, {a, 600}}, force_prefill));
  out.push_back(d.run(backend, {{a, 1}, {b, 1}}, force_prefill));
  return out;
}

template <typename T>
void check_thread_counts() {
  const int saved = cpu_threads();
  for (bool force : {false, true}) {
    std::vector<std::vector<std::vector<std::vector<double>>>> runs;
    for (int threads : {1, 2, 3}) {
      set_cpu_threads(threads);
      runs.push_back(long_run<T>(force));
    }
    CHECK(runs[0] == runs[1]);
    CHECK(runs[0] == runs[2]);
  }
  set_cpu_threads(saved);
}

}  // namespace

TEST_CASE("cpu backend: fp64 logits are bitwise the same for 1, 2 and 3 threads", "[mla][threads]") {
  check_thread_counts<double>();
}

TEST_CASE("cpu backend: fp32 logits are bitwise the same for 1, 2 and 3 threads", "[mla][threads]") {
  check_thread_counts<float>();
}

TEST_CASE("blocked prefill form equals a plain softmax over 1,300 causal tokens", "[mla]") {
  const ModelConfig config = tiny_config(2);
  const MlaDims dims = mla_dims(config);
  StepDriver d(mla_routing(1, 16, 2048, 4), 100);
  const int a = d.add_request(seeded_sequence(23, 1300, 512), 1300);
  const StepDriver::Step step = d.plan({{a, 1300}});
  const int n = 1300, H = dims.num_heads, dqk = dims.d_qk(), L = dims.latent_dim(), dkv = dims.d_n + dims.d_v;
  std::uint64_t k = 3;
  auto rnd = [&k]() { return 2.0 * (static_cast<double>(splitmix64(k++) >> 11) * 0x1.0p-53) - 1.0; };
  std::vector<double> q(static_cast<size_t>(n) * H * dqk), latent(static_cast<size_t>(n) * L),
      kv_b(static_cast<size_t>(H) * dkv * dims.r_kv), o(static_cast<size_t>(n) * H * dims.d_v);
  for (double& v : q) v = rnd();
  for (double& v : latent) v = rnd();
  for (double& v : kv_b) v = rnd() * 0.05;
  LatentCache<double> cache(100, 16, L, 0.0);
  const MlaAttentionParams<double> p{dims, 0, H, kv_b.data(), 0.07, {}, {}};
  const std::vector<std::vector<ContextChunk>> chunks(1);
  mla_prefill_form(p, step.md, 0, 1, chunks, q.data(), latent.data(), cache, o.data());
  // The plain form for a few queries on each side of the block edges (long double throughout):
  // keys and values up-projected once per head, then one softmax per query.
  double worst = 0;
  for (int h = 0; h < H; ++h) {
    const double* w = &kv_b[static_cast<size_t>(h) * dkv * dims.r_kv];
    std::vector<long double> kv(static_cast<size_t>(n) * dkv, 0.0L);  // [j, k_nope | v]
    for (int j = 0; j < n; ++j)
      for (int e = 0; e < dkv; ++e)
        for (int r = 0; r < dims.r_kv; ++r)
          kv[static_cast<size_t>(j) * dkv + e] +=
              static_cast<long double>(w[static_cast<size_t>(e) * dims.r_kv + r]) * latent[static_cast<size_t>(j) * L + r];
    for (int i : {0, 1, 511, 512, 513, 1023, 1024, 1299}) {
      const double* qh = &q[(static_cast<size_t>(i) * H + h) * dqk];
      std::vector<long double> s(static_cast<size_t>(i) + 1), out(static_cast<size_t>(dims.d_v), 0.0L);
      long double m = -INFINITY, sum = 0;
      for (int j = 0; j <= i; ++j) {
        long double dotv = 0;
        for (int e = 0; e < dims.d_n; ++e) dotv += qh[e] * kv[static_cast<size_t>(j) * dkv + e];
        for (int e = 0; e < dims.d_r; ++e) dotv += static_cast<long double>(qh[dims.d_n + e]) * latent[static_cast<size_t>(j) * L + dims.r_kv + e];
        s[static_cast<size_t>(j)] = 0.07L * dotv;
        m = std::max(m, s[static_cast<size_t>(j)]);
      }
      for (int j = 0; j <= i; ++j) sum += std::exp(s[static_cast<size_t>(j)] - m);
      for (int j = 0; j <= i; ++j)
        for (int e = 0; e < dims.d_v; ++e)
          out[static_cast<size_t>(e)] += std::exp(s[static_cast<size_t>(j)] - m) / sum * kv[static_cast<size_t>(j) * dkv + dims.d_n + e];
      for (int e = 0; e < dims.d_v; ++e)
        worst = std::max(worst, static_cast<double>(std::fabs(o[(static_cast<size_t>(i) * H + h) * dims.d_v + e] - out[static_cast<size_t>(e)])));
    }
  }
  // Outputs are O(0.1); fp64 rounding over sums of ~1,300 x 512 terms stays below 1e-12.
  CHECK(worst < 1e-12);
}
