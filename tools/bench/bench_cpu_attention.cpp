// CPU MLA attention benchmark (float): validates each form against a double-precision decode-form
// reference with FlashMLA's comparison rule (docs/spec/mla.md §5), then times the decode form on a
// decode-ish shape and the prefill form on a prefill-ish shape, printing GFLOP/s by the
// conventions of docs/spec/mla.md §7 next to this machine's FMA-loop float peak measured in the same
// run (one thread, the same compiler flags).
// Usage: bench_cpu_attention [heads=16] [decode_batch=8] [decode_seq=1024] [prefill_len=384]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <vector>

#include "attention/attention_metadata.h"
#include "attention/mla_attention_cpu.h"
#include "attention/route.h"
#include "attention/routing_config.h"
#include "kit/rng.h"

namespace {

using namespace mlasim;
using Clock = std::chrono::steady_clock;

// One batch of `batch` rows with q = s_q new tokens after s_k - s_q cached ones, its metadata,
// and random q, latents and kv_b_proj in double (converted to float where needed).
struct Problem {
  MlaDims dims;
  AttentionMetadata md;
  std::vector<double> q, latent, kv_b;
  LatentCache<double> cache;
};

Problem make_problem(int heads, int batch, int s_q, int s_k, int block_size) {
  Problem p;
  p.dims = {heads, 512, 128, 64, 128};
  RoutingOptions o;
  o.backend = AttentionBackendKind::kFlashMla;
  o.reorder_batch_threshold = std::max(s_q, 1);
  o.block_size = block_size;
  const RoutingConfig config = make_routing_config(o);
  const std::vector<RowInput> rows(static_cast<size_t>(batch), RowInput{s_q, s_k - s_q, s_k - s_q});
  const BatchRoute route = route_batch(rows, config);
  const int blocks_per_row = (s_k + block_size - 1) / block_size, num_blocks = batch * blocks_per_row + 1;
  std::vector<int> ids(static_cast<size_t>(num_blocks - 1));
  std::iota(ids.begin(), ids.end(), 1);
  for (size_t i = ids.size(); i > 1; --i) std::swap(ids[i - 1], ids[splitmix64(i) % i]);  // scattered pages
  std::vector<std::vector<int>> tables(static_cast<size_t>(batch));
  for (int r = 0; r < batch; ++r)
    tables[static_cast<size_t>(r)].assign(ids.begin() + r * blocks_per_row, ids.begin() + (r + 1) * blocks_per_row);
  p.md = build_attention_metadata(route, config, tables);
  kit::Rng rng(1);
  const int n = p.md.num_actual_tokens, L = p.dims.latent_dim();
  p.q.resize(static_cast<size_t>(n) * heads * p.dims.d_qk());
  for (double& v : p.q) v = (2 * rng.uniform() - 1);
  p.kv_b.resize(static_cast<size_t>(heads) * 256 * 512);
  for (double& v : p.kv_b) v = (2 * rng.uniform() - 1);  // outputs of order 0.1..1
  // randn/10 clamped to [-1, 1] in FlashMLA; uniform with the same std here. Unused rows: NaN.
  p.cache = LatentCache<double>(num_blocks, block_size, L, std::nan(""));
  for (int r = 0; r < batch; ++r)
    for (int j = 0; j < s_k; ++j) {
      double* row = p.cache.mutable_row(p.cache.slot_of(p.md.block_table[static_cast<size_t>(r)], j));
      for (int i = 0; i < L; ++i) row[i] = (2 * rng.uniform() - 1) * 0.1732;
    }
  p.latent.resize(static_cast<size_t>(n) * L);
  for (int t = 0; t < n; ++t) {
    const double* row = p.cache.row(p.md.slot_mapping[static_cast<size_t>(t)]);
    std::copy(row, row + L, &p.latent[static_cast<size_t>(t) * L]);
  }
  return p;
}

template <typename T>
struct Typed {
  std::vector<T> q, latent, kv_b, out;
  LatentCache<T> cache;
  MlaAttentionParams<T> params;
};

template <typename T>
Typed<T> typed(const Problem& p) {
  Typed<T> t;
  t.q.assign(p.q.begin(), p.q.end());
  t.latent.assign(p.latent.begin(), p.latent.end());
  t.kv_b.assign(p.kv_b.begin(), p.kv_b.end());
  const LatentCache<double>& c = p.cache;
  t.cache = LatentCache<T>(c.num_blocks(), c.block_size(), c.row_dim(), static_cast<T>(c.fill()));
  for (int slot = 0; slot < c.num_slots(); ++slot)
    if (c.block_allocated(slot / c.block_size())) std::copy_n(c.row(slot), c.row_dim(), t.cache.mutable_row(slot));
  t.out.assign(static_cast<size_t>(p.md.num_actual_tokens) * p.dims.num_heads * p.dims.d_v, T(0));
  t.params = {p.dims, 0, p.dims.num_heads, nullptr, 0.1147214, FaultSet{}};
  t.params.kv_b_proj = t.kv_b.data();
  return t;
}

template <typename T>
void run_form(Typed<T>& t, const Problem& p, bool decode) {
  if (decode) {
    mla_decode_form(t.params, p.md, 0, p.md.num_reqs, t.q.data(), t.cache, t.out.data());
  } else {
    const auto chunks = single_context_chunks(p.md, 0, p.md.num_reqs);
    mla_prefill_form(t.params, p.md, 0, p.md.num_reqs, chunks, t.q.data(), t.latent.data(), t.cache, t.out.data());
  }
}

// FlashMLA's rule: NaN positions match, each element within abs or rel, cosine difference.
bool compare(const char* what, const std::vector<float>& a, const std::vector<double>& r, double abs_tol, double rel_tol,
             double cos_tol) {
  double max_abs = 0, max_ref = 0, sum_ar = 0, sum_sq = 0;
  long bad = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) != std::isnan(r[i])) ++bad;
    if (std::isnan(r[i])) continue;
    const double e = std::abs(a[i] - r[i]);
    max_abs = std::max(max_abs, e);
    max_ref = std::max(max_ref, std::abs(r[i]));
    if (!(e < abs_tol || e / (std::abs(r[i]) + 1e-6) < rel_tol)) ++bad;
    sum_ar += a[i] * r[i];
    sum_sq += double(a[i]) * a[i] + r[i] * r[i];
  }
  const double cos_diff = 1.0 - 2.0 * sum_ar / sum_sq;
  const bool ok = bad == 0 && cos_diff <= cos_tol;
  std::printf("  %-46s max abs err %.2e (max |ref| %.2f)  cos diff %.2e  %s\n", what, max_abs, max_ref, cos_diff,
              ok ? "ok" : "FAILED");
  return ok;
}

template <typename F>
double best_seconds(int reps, F&& f) {
  double best = 1e300;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

// An FMA-bound float loop: 12 independent 4-wide multiply-add chains held in registers (GCC/Clang
// vector extension, so it compiles to the baseline SSE of an unflagged x86-64 build, like the
// attention code). 2 FLOP per lane per iteration.
double measured_peak_gflops(float m, float c) {
  typedef float v4 __attribute__((vector_size(16)));
  constexpr int kChains = 12;
  v4 acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = v4{0.001f, 0.002f, 0.003f, 0.004f} * static_cast<float>(k);
  const v4 mv = {m, m, m, m}, cv = {c, c, c, c};
  const long iters = 20'000'000;
  const double s = best_seconds(3, [&] {
    for (long i = 0; i < iters; ++i)
      for (int k = 0; k < kChains; ++k) acc[k] = acc[k] * mv + cv;
  });
  float sum = 0;
  for (int k = 0; k < kChains; ++k) sum += acc[k][0] + acc[k][1] + acc[k][2] + acc[k][3];
  if (sum == 12345.f) std::puts("");  // keeps the loop observable
  return 2.0 * 4 * kChains * static_cast<double>(iters) / s / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  auto arg = [&](int i, int def) { return argc > i ? std::atoi(argv[i]) : def; };
  const int heads = arg(1, 16), dec_b = arg(2, 8), dec_s = arg(3, 1024), pre_l = arg(4, 384);

  std::printf("validation (float vs a double decode-form reference; FlashMLA tolerances)\n");
  bool ok = true;
  {
    // b = 3 rows with s_q = 2 (bottom-right causal), s_k = 140, 9 heads.
    const Problem v = make_problem(9, 3, 2, 140, 64);
    Typed<double> ref = typed<double>(v);
    run_form(ref, v, true);
    Typed<float> dec = typed<float>(v), pre = typed<float>(v);
    run_form(dec, v, true);
    run_form(pre, v, false);
    ok &= compare("decode form (float) vs reference", dec.out, ref.out, 8e-4, 2.01 / 128, 5e-6);
    ok &= compare("prefill form (float) vs reference (cross-form)", pre.out, ref.out, 1e-3, 8.01 / 128, 7e-6);
  }
  if (!ok) {
    std::printf("validation failed: not timing\n");
    return 1;
  }

  volatile float m = 0.9999f, c = 1e-4f;  // unknown to the compiler
  const double peak = measured_peak_gflops(m, c);
  std::printf("\nmeasured float peak (4-wide multiply-add loop, 1 thread, same flags): %.1f GFLOP/s\n\n", peak);

  {
    const Problem p = make_problem(heads, dec_b, 1, dec_s, 64);
    Typed<float> t = typed<float>(p);
    const double s = best_seconds(3, [&] { run_form(t, p, true); });
    const double flop = double(dec_b) * heads * 1 * (2.0 * 576 + 2.0 * 512) * dec_s;
    std::printf("decode form   b=%d s_q=1 s_k=%d H=%d page 64: %8.2f ms  %6.2f GFLOP/s  (%.0f%% of peak; "
                "b*H*s_q*(2*576+2*512)*mean_len = %.3g FLOP, W_UK/W_UV absorption not counted)\n",
                dec_b, dec_s, heads, s * 1e3, flop / s / 1e9, 100.0 * flop / s / 1e9 / peak, flop);
  }
  {
    const Problem p = make_problem(heads, 1, pre_l, pre_l, 64);
    Typed<float> t = typed<float>(p);
    const double s = best_seconds(2, [&] { run_form(t, p, false); });
    const double avg_sk = (0.0 + pre_l) / 2.0;
    const double flop = 2.0 * 1 * heads * pre_l * avg_sk * (192 + 128);
    const double uproj = 2.0 * pre_l * heads * 256.0 * 512.0;
    std::printf("prefill form  b=1 s_q=s_k=%d H=%d causal:        %8.2f ms  %6.2f GFLOP/s  (%.0f%% of peak; "
                "2*b*H*s_q*avg_s_k*(192+128) = %.3g FLOP; with the kv_b up-projection %.3g FLOP: %.2f GFLOP/s)\n",
                pre_l, heads, s * 1e3, flop / s / 1e9, 100.0 * flop / s / 1e9 / peak, flop, flop + uproj,
                (flop + uproj) / s / 1e9);
  }
  return 0;
}
