// The decode test problem's inputs and its double-precision reference.
#include "kit/mla_decode_ref.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "kit/parallel_for.h"

namespace mlasim::kit {

namespace {
constexpr int kD = kDecodeDqk, kDV = kDecodeDv;
}  // namespace

std::string DecodeCase::name() const {
  int mx = 0;
  for (int l : seqlens) mx = std::max(mx, l);
  return "b=" + std::to_string(batch) + " s_q=" + std::to_string(s_q) + " H=" + std::to_string(num_heads) +
         " max_len=" + std::to_string(mx) + " bs=" + std::to_string(block_size) + (causal ? " causal" : " full");
}

std::vector<int> make_seqlens(int batch, int s_k, int s_q, bool varlen, Rng& rng) {
  std::vector<int> v(static_cast<size_t>(batch), s_k);
  if (varlen)
    for (int& l : v) l = std::max(static_cast<int>(std::lround(s_k + rng.normal() * s_k / 2.0)), s_q);
  return v;
}

DecodeInputs make_decode_inputs(const DecodeCase& c, int extra_blocks, int extra_entries) {
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
  in.cache.assign(static_cast<size_t>(in.num_blocks) * bs * kD, kBf16NaNBits);
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

DecodeReference decode_reference(const DecodeCase& c, const DecodeInputs& in) {
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

}  // namespace mlasim::kit
