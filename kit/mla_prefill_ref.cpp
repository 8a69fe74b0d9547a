// The prefill test problem's inputs and its double-precision reference.
#include "kit/mla_prefill_ref.h"

#include <cmath>
#include <limits>
#include <utility>

#include "kit/parallel_for.h"

namespace mlasim::kit {

namespace {

constexpr int kDqk = kPrefillDqk, kDv = kPrefillDv;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

void set_cu(PrefillProblem& p) {
  p.cu_q.assign(1, 0);
  p.cu_k.assign(1, 0);
  for (size_t b = 0; b < p.s_q.size(); ++b) {
    p.cu_q.push_back(p.cu_q.back() + p.s_q[b]);
    p.cu_k.push_back(p.cu_k.back() + p.s_k[b]);
  }
}

double dot_d(const float* a, const float* b, int n) {
  double acc[4] = {0, 0, 0, 0};
  for (int d = 0; d < n; d += 4)
    for (int u = 0; u < 4; ++u) acc[u] += static_cast<double>(a[d + u]) * b[d + u];
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

}  // namespace

std::vector<int> varlen_lengths(int n, int mean, Rng& rng) {
  std::vector<int> v(static_cast<size_t>(n));
  for (int& x : v) {
    const double d = std::round(mean + 0.5 * mean * rng.normal());
    x = static_cast<int>(std::clamp(d, 1.0, 3.0 * mean));
  }
  return v;
}

std::vector<float> randn_bf16_values(std::size_t n, std::uint64_t seed, double divisor, double clip) {
  std::vector<float> v(n);
  constexpr std::size_t kBlock = std::size_t{1} << 16;
  parallel_for(static_cast<long>((n + kBlock - 1) / kBlock), [&](long blk) {
    Rng rng(splitmix64(seed) ^ (static_cast<std::uint64_t>(blk) << 40));
    const std::size_t end = std::min(n, (static_cast<std::size_t>(blk) + 1) * kBlock);
    for (std::size_t i = static_cast<std::size_t>(blk) * kBlock; i < end; ++i)
      v[i] = bf16_value(randn_bf16(rng, divisor, clip));
  });
  return v;
}

PrefillProblem make_prefill_problem(std::vector<int> s_q, std::vector<int> s_k, int H, bool causal, std::uint64_t seed,
                                    double qk_divisor, double qk_clip) {
  PrefillProblem p;
  p.s_q = std::move(s_q);
  p.s_k = std::move(s_k);
  p.H = H;
  p.causal = causal;
  set_cu(p);
  p.q = randn_bf16_values(static_cast<size_t>(p.total_q()) * H * kDqk, 3 * seed, qk_divisor, qk_clip);
  p.k = randn_bf16_values(static_cast<size_t>(p.total_k()) * H * kDqk, 3 * seed + 1, qk_divisor, qk_clip);
  p.v = randn_bf16_values(static_cast<size_t>(p.total_k()) * H * kDv, 3 * seed + 2);
  return p;
}

PrefillProblem slice_keys(const PrefillProblem& full, const std::vector<int>& begin, const std::vector<int>& len,
                          bool causal) {
  PrefillProblem p;
  p.s_q = full.s_q;
  p.s_k = len;
  p.H = full.H;
  p.causal = causal;
  p.scale = full.scale;
  set_cu(p);
  p.q = full.q;
  const size_t kr = static_cast<size_t>(full.H) * kDqk, vr = static_cast<size_t>(full.H) * kDv;
  for (int b = 0; b < full.batch(); ++b) {
    const size_t src = static_cast<size_t>(full.cu_k[b] + begin[b]);
    p.k.insert(p.k.end(), full.k.begin() + src * kr, full.k.begin() + (src + len[b]) * kr);
    p.v.insert(p.v.end(), full.v.begin() + src * vr, full.v.begin() + (src + len[b]) * vr);
  }
  return p;
}

PrefillReference prefill_reference(const PrefillProblem& p, std::vector<int> rows, std::vector<int> heads) {
  PrefillReference r;
  r.rows = std::move(rows);
  r.heads = std::move(heads);
  const int nr = static_cast<int>(r.rows.size()), nh = static_cast<int>(r.heads.size());
  r.out.assign(static_cast<size_t>(nr) * nh * kDv, 0.0);
  r.lse.assign(static_cast<size_t>(nh) * nr, kNegInf);
  constexpr int kRowsPerItem = 16;
  const int row_items = (nr + kRowsPerItem - 1) / kRowsPerItem;
  parallel_for(static_cast<long>(row_items) * nh, [&](long it) {
    const int item = static_cast<int>(it);
    const int hi = item / row_items, h = r.heads[static_cast<size_t>(hi)];
    std::vector<double> s;
    for (int ri = (item % row_items) * kRowsPerItem; ri < std::min(nr, (item % row_items + 1) * kRowsPerItem); ++ri) {
      const int tok = r.rows[static_cast<size_t>(ri)];
      const int b = static_cast<int>(std::upper_bound(p.cu_q.begin(), p.cu_q.end(), tok) - p.cu_q.begin()) - 1;
      const int i = tok - p.cu_q[b], s_q = p.s_q[b], s_k = p.s_k[b];
      const int n = visible_keys(i, s_q, s_k, p.causal);
      if (n == 0) continue;
      const float* qr = &p.q[(static_cast<size_t>(tok) * p.H + h) * kDqk];
      s.resize(static_cast<size_t>(n));
      double m = kNegInf;
      for (int j = 0; j < n; ++j) {
        const float* kr = &p.k[(static_cast<size_t>(p.cu_k[b] + j) * p.H + h) * kDqk];
        s[j] = static_cast<double>(p.scale) * dot_d(qr, kr, kDqk);
        m = std::max(m, s[j]);
      }
      double sum = 0;
      double* o = &r.out[(static_cast<size_t>(ri) * nh + hi) * kDv];
      for (int j = 0; j < n; ++j) {
        const double e = std::exp(s[j] - m);
        sum += e;
        const float* vr = &p.v[(static_cast<size_t>(p.cu_k[b] + j) * p.H + h) * kDv];
        for (int d = 0; d < kDv; ++d) o[d] += e * vr[d];
      }
      for (int d = 0; d < kDv; ++d) o[d] /= sum;
      r.lse[static_cast<size_t>(hi) * nr + ri] = m + std::log(sum);
    }
  });
  return r;
}

std::vector<int> iota_vec(int n) {
  std::vector<int> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[i] = i;
  return v;
}

std::vector<int> sampled_rows(const PrefillProblem& p, int every, int tail) {
  std::vector<int> rows;
  for (int b = 0; b < p.batch(); ++b)
    for (int i = 0; i < p.s_q[b]; ++i)
      if (i % every == 0 || i >= p.s_q[b] - tail) rows.push_back(p.cu_q[b] + i);
  return rows;
}

}  // namespace mlasim::kit
