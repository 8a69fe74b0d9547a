// Host-side pieces shared by the MLA decode GPU test and benchmark (no CUDA): seeded bf16 inputs
// (randn/10 clamped to [−1, 1]), a paged latent cache with randomly permuted block ids, NaN in every
// row that is not live and sentinel block-table entries, and the double-precision reference.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "attention/bf16.h"

namespace mlasim::mla_decode_ref {

inline constexpr int kD = 576, kDV = 512;
inline constexpr std::uint16_t kBf16NaN = 0x7fc0;
inline constexpr int kSentinelBlock = 2147480000;  // FlashMLA's unused block-table entry
inline constexpr float kV3Scale = 0.1352338f;      // DeepSeek-V3 softmax scale (YaRN mscale²/√192)

inline std::uint16_t bf16_bits(float x) {
  return static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(round_to_bf16(x)) >> 16);
}
inline float bf16_value(std::uint16_t b) { return std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16); }

// splitmix64 stream with Box–Muller normals.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1.0p-53; }  // (0, 1)
  double normal() {
    if (have_spare_) return have_spare_ = false, spare_;
    const double r = std::sqrt(-2.0 * std::log(uniform())), t = 6.283185307179586 * uniform();
    spare_ = r * std::sin(t), have_spare_ = true;
    return r * std::cos(t);
  }
  int below(int n) { return static_cast<int>(next() % static_cast<std::uint64_t>(n)); }

 private:
  std::uint64_t s_;
  double spare_ = 0;
  bool have_spare_ = false;
};

// FlashMLA's test data: randn / 10 clamped to [−1, 1], here rounded to bf16.
inline std::uint16_t randn_bf16(Rng& rng) {
  return bf16_bits(static_cast<float>(std::clamp(rng.normal() / 10.0, -1.0, 1.0)));
}

// Runs fn(i) for i in [0, n) on all hardware threads.
template <typename Fn>
void parallel_for(long n, Fn fn) {
  const unsigned nt = std::max(1u, std::min(std::thread::hardware_concurrency(), 64u));
  std::atomic<long> next{0};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < nt; ++t)
    pool.emplace_back([&] {
      for (long i; (i = next.fetch_add(1)) < n;) fn(i);
    });
  for (auto& th : pool) th.join();
}

struct DecodeCase {
  int batch = 1, s_q = 1, num_heads = 1, block_size = 64;
  std::vector<int> seqlens;  // [batch]
  bool causal = true;
  float scale = kV3Scale;
  std::uint64_t seed = 1;

  std::string name() const {
    int mx = 0;
    for (int l : seqlens) mx = std::max(mx, l);
    return "b=" + std::to_string(batch) + " s_q=" + std::to_string(s_q) + " H=" + std::to_string(num_heads) +
           " max_len=" + std::to_string(mx) + " bs=" + std::to_string(block_size) + (causal ? " causal" : " full");
  }
};

// Equal lengths s_k, or (varlen) FlashMLA's max(N(s_k, s_k/2), s_q).
inline std::vector<int> make_seqlens(int batch, int s_k, int s_q, bool varlen, Rng& rng) {
  std::vector<int> v(static_cast<size_t>(batch), s_k);
  if (varlen)
    for (int& l : v) l = std::max(static_cast<int>(std::lround(s_k + rng.normal() * s_k / 2.0)), s_q);
  return v;
}

struct DecodeInputs {
  int max_blocks_per_seq = 0;
  int num_blocks = 0;
  std::vector<std::uint16_t> q;      // [b, s_q, H, 576] bf16 bits
  std::vector<std::uint16_t> cache;  // [num_blocks, block_size, 576] bf16 bits; NaN in every non-live row
  std::vector<int> block_table;      // [b, max_blocks_per_seq]; kSentinelBlock past each request's blocks
};

// Block ids are a random permutation over all blocks (extra_blocks are never used: NaN throughout);
// each row of the block table gets `extra_entries` sentinel entries beyond the longest request.
inline DecodeInputs make_inputs(const DecodeCase& c, int extra_blocks = 3, int extra_entries = 2) {
  Rng rng(c.seed);
  DecodeInputs in;
  const int bs = c.block_size;
  int used = 0, longest = 0;
  for (int l : c.seqlens) used += (l + bs - 1) / bs, longest = std::max(longest, (l + bs - 1) / bs);
  in.max_blocks_per_seq = longest + extra_entries;
  in.num_blocks = used + extra_blocks;
  std::vector<int> ids(static_cast<size_t>(in.num_blocks));
  for (int i = 0; i < in.num_blocks; ++i) ids[static_cast<size_t>(i)] = i;
  for (int i = in.num_blocks - 1; i > 0; --i) std::swap(ids[static_cast<size_t>(i)], ids[static_cast<size_t>(rng.below(i + 1))]);

  in.q.resize(static_cast<size_t>(c.batch) * c.s_q * c.num_heads * kD);
  in.cache.assign(static_cast<size_t>(in.num_blocks) * bs * kD, kBf16NaN);
  in.block_table.assign(static_cast<size_t>(c.batch) * in.max_blocks_per_seq, kSentinelBlock);
  int next = 0;
  for (int b = 0; b < c.batch; ++b)
    for (int k = 0; k < (c.seqlens[static_cast<size_t>(b)] + bs - 1) / bs; ++k)
      in.block_table[static_cast<size_t>(b) * in.max_blocks_per_seq + k] = ids[static_cast<size_t>(next++)];
  // Values: one stream per (request, 64-token chunk) and one per request's q, so generation runs in
  // parallel and its result does not depend on the thread count.
  const size_t q_per_req = static_cast<size_t>(c.s_q) * c.num_heads * kD;
  std::vector<std::pair<int, int>> items;  // (request, first token) ; first token −1: the q rows
  for (int b = 0; b < c.batch; ++b) {
    items.emplace_back(b, -1);
    for (int j = 0; j < c.seqlens[static_cast<size_t>(b)]; j += 64) items.emplace_back(b, j);
  }
  parallel_for(static_cast<long>(items.size()), [&](long i) {
    const auto [b, j0] = items[static_cast<size_t>(i)];
    Rng r((c.seed * 0x9e3779b97f4a7c15ull) ^ (static_cast<std::uint64_t>(b) << 32) ^ static_cast<std::uint64_t>(j0 + 1));
    if (j0 < 0) {
      for (size_t k = 0; k < q_per_req; ++k) in.q[static_cast<size_t>(b) * q_per_req + k] = randn_bf16(r);
      return;
    }
    for (int j = j0; j < std::min(j0 + 64, c.seqlens[static_cast<size_t>(b)]); ++j) {
      const size_t slot = static_cast<size_t>(in.block_table[static_cast<size_t>(b) * in.max_blocks_per_seq + j / bs]) * bs + j % bs;
      for (int d = 0; d < kD; ++d) in.cache[slot * kD + d] = randn_bf16(r);
    }
  });
  return in;
}

struct DecodeReference {
  std::vector<double> out;  // [b, s_q, H, 512]
  std::vector<double> lse;  // [b, H, s_q], natural log; +inf for rows with no live key
};

// out = softmax(scale · q·K) V in double over the live keys j < len − s_q + i + 1 (causal) or j < len.
inline DecodeReference reference(const DecodeCase& c, const DecodeInputs& in) {
  const int H = c.num_heads, q_rows = c.s_q * H, bs = c.block_size;
  DecodeReference ref;
  ref.out.assign(static_cast<size_t>(c.batch) * q_rows * kDV, 0.0);
  ref.lse.assign(static_cast<size_t>(c.batch) * q_rows, 0.0);
  parallel_for(static_cast<long>(c.batch) * q_rows, [&](long item) {
    const int b = static_cast<int>(item / q_rows), r = static_cast<int>(item % q_rows);
    const int qi = r / H, h = r % H, len = c.seqlens[static_cast<size_t>(b)];
    const int lim = std::clamp(c.causal ? len - c.s_q + qi + 1 : len, 0, len);
    double* out = ref.out.data() + static_cast<size_t>(item) * kDV;
    double& lse = ref.lse[(static_cast<size_t>(b) * H + h) * c.s_q + qi];
    if (lim == 0) {
      lse = std::numeric_limits<double>::infinity();
      return;
    }
    double q[kD];
    for (int d = 0; d < kD; ++d) q[d] = bf16_value(in.q[static_cast<size_t>(item) * kD + d]);
    std::vector<const std::uint16_t*> rows(static_cast<size_t>(lim));
    std::vector<double> s(static_cast<size_t>(lim));
    double mx = -std::numeric_limits<double>::infinity();
    for (int j = 0; j < lim; ++j) {
      const size_t slot = static_cast<size_t>(in.block_table[static_cast<size_t>(b) * in.max_blocks_per_seq + j / bs]) * bs + j % bs;
      const std::uint16_t* k = in.cache.data() + slot * kD;
      double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
      for (int d = 0; d < kD; d += 4) {
        a0 += q[d] * bf16_value(k[d]), a1 += q[d + 1] * bf16_value(k[d + 1]);
        a2 += q[d + 2] * bf16_value(k[d + 2]), a3 += q[d + 3] * bf16_value(k[d + 3]);
      }
      rows[static_cast<size_t>(j)] = k;
      s[static_cast<size_t>(j)] = static_cast<double>(c.scale) * ((a0 + a1) + (a2 + a3));
      mx = std::max(mx, s[static_cast<size_t>(j)]);
    }
    double l = 0;
    for (int j = 0; j < lim; ++j) {
      const double p = std::exp(s[static_cast<size_t>(j)] - mx);
      l += p;
      const std::uint16_t* v = rows[static_cast<size_t>(j)];
      for (int d = 0; d < kDV; ++d) out[d] += p * bf16_value(v[d]);
    }
    for (int d = 0; d < kDV; ++d) out[d] /= l;
    lse = mx + std::log(l);
  });
  return ref;
}

}  // namespace mlasim::mla_decode_ref
