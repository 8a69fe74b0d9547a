// CPU MLA attention benchmark (float): validates each form against a double-precision decode-form
// reference with FlashMLA's comparison rule (docs/spec/mla.md §5); then, in the same run,
//  1. each GEMM-shaped step of the two forms as the code calls it (cpu_gemm with the code's strides)
//     against the BLAS alone at that shape (contiguous operands): the step's share of the BLAS rate;
//  2. the multi-core peak: one large sgemm per thread, all threads at once;
//  3. the decode form and the prefill form on all threads: GFLOP/s (docs/spec/mla.md §7
//     conventions) and their share of that peak (docs/spec/cpu_reference.md).
// Usage: bench_cpu_attention [heads=16] [decode_batch=8] [decode_seq=4096] [prefill_len=4096] [threads=all]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <vector>

#include "attention/attention_metadata.h"
#include "attention/cpu/cpu_gemm.h"
#include "model/cpu_thread_pool.h"
#include "attention/cpu/mla_attention_cpu.h"
#include "attention/route.h"
#include "attention/routing_config.h"
#include "kit/compare.h"
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
  t.params = {p.dims, 0, p.dims.num_heads, nullptr, 0.1147214, FaultSet{}, {}};
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

// FlashMLA's rule (kit/compare.h): NaN positions match, each element within abs or rel, cosine difference.
bool compare(const char* what, const std::vector<float>& a, const std::vector<double>& r, const mlasim::kit::CompareTol& tol) {
  mlasim::kit::Comparator rule(tol);
  double max_ref = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    rule.add(a[i], r[i], i);
    if (!std::isnan(r[i])) max_ref = std::max(max_ref, std::abs(r[i]));
  }
  const mlasim::kit::CompareResult c = rule.result();
  const bool ok = c.pass;
  std::printf("  %-46s max abs err %.2e (max |ref| %.2f)  cos diff %.2e  %s\n", what, c.max_abs, max_ref, c.cos_diff,
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

double gflops(double flop, double seconds) { return flop / seconds / 1e9; }

// One GEMM-shaped step: `step` runs it as the code does, `blas` the same shape on contiguous
// operands; prints both rates and the step's share.
template <typename Step, typename Blas>
void gemm_step(const char* what, double flop, Step&& step, Blas&& blas) {
  const double s_step = best_seconds(5, step), s_blas = best_seconds(5, blas);
  std::printf("  %-58s %7.1f GFLOP/s  BLAS alone %7.1f  %4.0f%%\n", what, gflops(flop, s_step), gflops(flop, s_blas),
              100.0 * s_blas / s_step);
}

// The GEMM-shaped steps of both forms at their block shapes (one thread each: an item's calls).
void gemm_steps(int heads) {
  constexpr int kB = 512, L = 576, dqk = 192, dv = 128, r = 512, dn = 128, dec = 8;
  auto buf = [](size_t n) { return std::vector<float>(n, 0.01f); };
  std::vector<float> q = buf(size_t(kB) * heads * dqk), k = buf(size_t(kB) * dqk), v = buf(size_t(kB) * dv),
                     lat = buf(size_t(kB) * L), w = buf(size_t(256) * r), sc = buf(size_t(kB) * kB),
                     o = buf(size_t(kB) * dv), a = buf(size_t(kB) * r), c = buf(size_t(kB) * kB);
  std::printf("GEMM-shaped steps, one thread (as called by the code vs the BLAS on contiguous operands)\n");
  gemm_step("prefill: up-projection k_nope of a key block 512x128x512", 2.0 * kB * dn * r,
            [&] { gemm_nt(kB, dn, r, lat.data(), L, w.data(), r, k.data(), dqk); },
            [&] { gemm_nt(kB, dn, r, a.data(), r, w.data(), r, c.data(), dn); });
  gemm_step("prefill: scores of a query block 512x512x192", 2.0 * kB * kB * dqk,
            [&] { gemm_nt(kB, kB, dqk, q.data(), heads * dqk, k.data(), dqk, sc.data(), kB); },
            [&] { gemm_nt(kB, kB, dqk, a.data(), dqk, k.data(), dqk, c.data(), kB); });
  gemm_step("prefill: P V 512x128x512", 2.0 * kB * dv * kB,
            [&] { gemm_nn(kB, dv, kB, sc.data(), kB, v.data(), dv, o.data(), dv, true); },
            [&] { gemm_nn(kB, dv, kB, c.data(), kB, v.data(), dv, a.data(), dv, true); });
  gemm_step(("decode: scores of a token, all heads " + std::to_string(heads) + "x512x576").c_str(), 2.0 * heads * kB * L,
            [&] { gemm_nt(heads, kB, L, q.data(), L, lat.data(), L, sc.data(), kB); },
            [&] { gemm_nt(heads, kB, L, a.data(), L, lat.data(), L, c.data(), kB); });
  gemm_step(("decode: P c_kv " + std::to_string(heads) + "x512x512").c_str(), 2.0 * heads * r * kB,
            [&] { gemm_nn(heads, r, kB, sc.data(), kB, lat.data(), L, o.data(), r, true); },
            [&] { gemm_nn(heads, r, kB, c.data(), kB, a.data(), r, k.data(), r, true); });
  gemm_step("decode: W_UK absorption of 8 tokens, one head 8x512x128", 2.0 * dec * r * dn,
            [&] { gemm_nn(dec, r, dn, q.data(), heads * dqk, w.data(), r, a.data(), heads * L); },
            [&] { gemm_nn(dec, r, dn, c.data(), dn, w.data(), r, o.data(), r); });
  gemm_step("decode: W_UV of 8 tokens, one head 8x128x512", 2.0 * dec * dv * r,
            [&] { gemm_nt(dec, dv, r, a.data(), heads * r, w.data(), r, o.data(), heads * dv); },
            [&] { gemm_nt(dec, dv, r, c.data(), r, w.data(), r, k.data(), dv); });
}

// The multi-core peak: one 1024^3 sgemm per thread, all threads at once.
double measured_peak_gflops(int threads) {
  constexpr int n = 1024;
  std::vector<std::vector<float>> a(static_cast<size_t>(threads), std::vector<float>(size_t(n) * n, 0.5f)),
      c(static_cast<size_t>(threads), std::vector<float>(size_t(n) * n));
  const double s = best_seconds(3, [&] {
    parallel_for(threads, [&](int t) {
      gemm_nt(n, n, n, a[size_t(t)].data(), n, a[size_t(t)].data(), n, c[size_t(t)].data(), n);
    });
  });
  return 2.0 * n * n * double(n) * threads / s / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  auto arg = [&](int i, int def) { return argc > i ? std::atoi(argv[i]) : def; };
  const int heads = arg(1, 16), dec_b = arg(2, 8), dec_s = arg(3, 4096), pre_l = arg(4, 4096);
  if (argc > 5) set_cpu_threads(std::atoi(argv[5]));
  const int threads = cpu_threads();
  std::printf("%s, %d thread%s\n\n", blas_name(), threads, threads == 1 ? "" : "s");

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
    ok &= compare("decode form (float) vs reference", dec.out, ref.out, mlasim::kit::kDecodeOutTol);
    ok &= compare("prefill form (float) vs reference (cross-form)", pre.out, ref.out, mlasim::kit::kPrefillOutTol);
  }
  if (!ok) {
    std::printf("validation failed: not timing\n");
    return 1;
  }

  gemm_steps(heads);
  const double peak = measured_peak_gflops(threads);
  std::printf("\nmeasured peak (one 1024^3 sgemm per thread, %d at once): %.1f GFLOP/s\n\n", threads, peak);

  {
    const Problem p = make_problem(heads, dec_b, 1, dec_s, 64);
    Typed<float> t = typed<float>(p);
    const double s = best_seconds(3, [&] { run_form(t, p, true); });
    const double flop = double(dec_b) * heads * 1 * (2.0 * 576 + 2.0 * 512) * dec_s;
    std::printf("decode form   b=%d s_q=1 s_k=%d H=%d page 64: %8.2f ms  %6.2f GFLOP/s  (%.0f%% of the peak; "
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
    std::printf("prefill form  b=1 s_q=s_k=%d H=%d causal:        %8.2f ms  %6.2f GFLOP/s  (%.0f%% of the peak; "
                "2*b*H*s_q*avg_s_k*(192+128) = %.3g FLOP; with the kv_b up-projection %.3g FLOP: %.2f GFLOP/s, "
                "%.0f%%)\n",
                pre_l, heads, s * 1e3, flop / s / 1e9, 100.0 * flop / s / 1e9 / peak, flop, flop + uproj,
                (flop + uproj) / s / 1e9, 100.0 * (flop + uproj) / s / 1e9 / peak);
  }
  return 0;
}
