// GPU tests of the DSA indexer (attention/cuda/dsa_indexer.h), the sparse MLA kernel
// (attention/cuda/mla_sparse.h) and the fp8 cache write and read paths (attention/cuda/cache_quant.h)
// against the CPU reference: the cache bytes equal the host encoder's (attention/kv_cache_quant.h)
// bit for bit, the gathered rows its decoder's, the scores the CPU indexer's dsa_index_score and the
// top-k its dsa_topk_positions (up to near-ties at the cut), and the sparse attention a double
// reference over the same dequantized rows, within FlashMLA's decode rule (docs/spec/mla.md §5).
#include <catch2/catch.hpp>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "attention/cpu/dsa_indexer_cpu.h"
#include "attention/cuda/cache_quant.h"
#include "attention/cuda/cuda_check.h"
#include "attention/cuda/dsa_indexer.h"
#include "attention/cuda/mla_decode.h"
#include "attention/cuda/mla_sparse.h"
#include "attention/kv_cache_quant.h"
#include "kit/compare.h"
#include "kit/mla_decode_ref.h"
#include "model/bf16.h"
#include "model/fp8.h"
#include "tests/cuda/gpu_checks.h"

namespace {

using namespace mlasim;
using namespace mlasim::kit;

constexpr int kRow = kCacheRkv + kCacheDr;  // 576

template <typename T>
class Dev {
 public:
  explicit Dev(size_t n) : n_(n) { MLASIM_CUDA_CHECK(cudaMalloc(&p_, std::max<size_t>(n, 1) * sizeof(T))); }
  explicit Dev(const std::vector<T>& v) : Dev(v.size()) { upload(v); }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
  ~Dev() { cudaFree(p_); }
  T* get() const { return p_; }
  void upload(const std::vector<T>& v) {
    if (!v.empty()) MLASIM_CUDA_CHECK(cudaMemcpy(p_, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> v(n_);
    MLASIM_CUDA_CHECK(cudaDeviceSynchronize());
    if (n_ > 0) MLASIM_CUDA_CHECK(cudaMemcpy(v.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost));
    return v;
  }

 private:
  T* p_ = nullptr;
  size_t n_ = 0;
};

// The latent rows of `n` tokens as bf16 bits: c_kv ~ N(0, 1) with one large value per row (a tile
// maximum), k_pe ~ N(0, 0.1).
std::vector<std::uint16_t> random_latents(int n, Rng& rng) {
  std::vector<std::uint16_t> v(static_cast<size_t>(n) * kRow);
  for (int t = 0; t < n; ++t)
    for (int c = 0; c < kRow; ++c) v[static_cast<size_t>(t) * kRow + c] = randn_bf16(rng, c < kCacheRkv ? 1.0 : 10.0, 8.0);
  for (int t = 0; t < n; ++t) v[static_cast<size_t>(t) * kRow + static_cast<size_t>(t % kCacheRkv)] = bf16_bits(5.5f);
  return v;
}

// What the host encoder stores for one token (`latent` bf16 bits) in format f.
std::vector<std::uint8_t> host_row_bytes(CacheFormat f, const std::uint16_t* latent, float k_scale) {
  std::vector<float> x(kRow);
  for (int c = 0; c < kRow; ++c) x[static_cast<size_t>(c)] = bf16_value(latent[c]);
  std::vector<std::uint8_t> out(static_cast<size_t>(cache_row_bytes(f)));
  if (f == CacheFormat::kFp8DsMla) {
    encode_fp8_ds_mla(x, kCacheRkv, out);
  } else {
    for (int c = 0; c < kRow; ++c) out[static_cast<size_t>(c)] = fp8_e4m3_bits(round_to_fp8_e4m3(x[static_cast<size_t>(c)] / k_scale));
  }
  return out;
}

// A cache of num_slots random rows stored in format f, as the host encoder stores them.
std::vector<std::uint8_t> random_cache(CacheFormat f, int num_slots, Rng& rng) {
  const int rb = cache_row_bytes(f);
  const std::vector<std::uint16_t> lat = random_latents(num_slots, rng);
  std::vector<std::uint8_t> cache(static_cast<size_t>(num_slots) * rb);
  for (int s = 0; s < num_slots; ++s) {
    const std::uint16_t* x = &lat[static_cast<size_t>(s) * kRow];
    const std::vector<std::uint8_t> row = f == CacheFormat::kBf16
                                              ? std::vector<std::uint8_t>(reinterpret_cast<const std::uint8_t*>(x),
                                                                          reinterpret_cast<const std::uint8_t*>(x) + rb)
                                              : host_row_bytes(f, x, 1.0f);
    std::copy(row.begin(), row.end(), cache.begin() + static_cast<long>(s) * rb);
  }
  return cache;
}

// The values a reader gets for one stored row (host decoder), as floats.
std::vector<float> host_row_values(CacheFormat f, const std::uint8_t* bytes, float k_scale) {
  std::vector<float> v(kRow);
  if (f == CacheFormat::kBf16) {
    for (int c = 0; c < kRow; ++c) {
      std::uint16_t b;
      std::memcpy(&b, bytes + 2 * c, 2);
      v[static_cast<size_t>(c)] = bf16_value(b);
    }
  } else if (f == CacheFormat::kFp8DsMla) {
    decode_fp8_ds_mla(KvCacheQuant{}, std::span<const std::uint8_t>(bytes, 656), kCacheRkv, v);
  } else {
    for (int c = 0; c < kRow; ++c) v[static_cast<size_t>(c)] = fp8_e4m3_value(bytes[c]) * k_scale;
  }
  return v;
}

}  // namespace

TEST_CASE("cache_write_quantized: fp8 and fp8_ds_mla rows equal the host encoder's bytes, slot -1 writes nothing",
          "[fp8][cache]") {
  for (const CacheFormat f : {CacheFormat::kFp8PerTensor, CacheFormat::kFp8DsMla}) {
    for (const float k_scale : {1.0f, 0.37f}) {
      if (f == CacheFormat::kFp8DsMla && k_scale != 1.0f) continue;
      Rng rng(11);
      const int n = 9, num_slots = 16, rb = cache_row_bytes(f);
      const std::vector<std::uint16_t> lat = random_latents(n, rng);
      std::vector<std::uint16_t> kv_c(static_cast<size_t>(n) * kCacheRkv), k_pe(static_cast<size_t>(n) * kCacheDr);
      for (int t = 0; t < n; ++t) {
        std::copy_n(&lat[static_cast<size_t>(t) * kRow], kCacheRkv, &kv_c[static_cast<size_t>(t) * kCacheRkv]);
        std::copy_n(&lat[static_cast<size_t>(t) * kRow + kCacheRkv], kCacheDr, &k_pe[static_cast<size_t>(t) * kCacheDr]);
      }
      const std::vector<int> slots{3, 0, 15, -1, 7, 8, 2, 11, 5};
      std::vector<std::uint8_t> expect(static_cast<size_t>(num_slots) * rb, 0xa5);
      for (int t = 0; t < n; ++t)
        if (slots[static_cast<size_t>(t)] >= 0) {
          const std::vector<std::uint8_t> row = host_row_bytes(f, &lat[static_cast<size_t>(t) * kRow], k_scale);
          std::copy(row.begin(), row.end(), expect.begin() + static_cast<long>(slots[static_cast<size_t>(t)]) * rb);
        }
      Dev<std::uint16_t> d_kv_c(kv_c), d_k_pe(k_pe);
      Dev<int> d_slots(slots);
      Dev<std::uint8_t> d_cache(std::vector<std::uint8_t>(expect.size(), 0xa5));
      cache_write_quantized({.num_tokens = n, .format = f, .num_slots = num_slots, .kv_c = d_kv_c.get(), .k_pe = d_k_pe.get(),
                             .slot_mapping = d_slots.get(), .k_scale = k_scale, .kv_cache = d_cache.get()});
      const std::vector<std::uint8_t> got = d_cache.download();
      INFO("format " << static_cast<int>(f) << " k_scale " << k_scale);
      size_t first_diff = got.size();
      for (size_t i = 0; i < got.size() && first_diff == got.size(); ++i)
        if (got[i] != expect[i]) first_diff = i;
      INFO("first differing byte " << first_diff << " (slot " << first_diff / static_cast<size_t>(rb) << ")");
      CHECK(first_diff == got.size());
    }
  }
}

TEST_CASE("cache_gather_dequant: every format reads back what the host decoder reads, -1 as zeros", "[fp8][cache]") {
  for (const CacheFormat f : {CacheFormat::kBf16, CacheFormat::kFp8PerTensor, CacheFormat::kFp8DsMla}) {
    Rng rng(21);
    const int num_slots = 12, rb = cache_row_bytes(f);
    const std::vector<std::uint8_t> cache = random_cache(f, num_slots, rng);
    const std::vector<int> slots{4, -1, 0, 11, 4, 7};
    Dev<std::uint8_t> d_cache(cache);
    Dev<int> d_slots(slots);
    Dev<std::uint16_t> d_out(slots.size() * kRow);
    cache_gather_dequant({.num_rows = static_cast<int>(slots.size()), .format = f, .kv_cache = d_cache.get(),
                          .slots = d_slots.get(), .out = d_out.get()});
    const std::vector<std::uint16_t> got = d_out.download();
    int wrong = 0;
    for (size_t r = 0; r < slots.size(); ++r) {
      const std::vector<float> want = slots[r] < 0 ? std::vector<float>(kRow, 0.0f)
                                                   : host_row_values(f, &cache[static_cast<size_t>(slots[r]) * rb], 1.0f);
      for (int c = 0; c < kRow; ++c) wrong += bf16_value(got[r * kRow + static_cast<size_t>(c)]) != round_to_bf16(want[static_cast<size_t>(c)]);
    }
    INFO("format " << static_cast<int>(f));
    CHECK(wrong == 0);
  }
}

TEST_CASE("dsa_indexer_scores and dsa_topk: the CPU indexer's scores and top-k, ties to the lower position",
          "[dsa]") {
  const int nh = 4, D = 32, block_size = 16, topk = 8;
  // Positions 4, 39, 76, 29: one within topk, three past it; request 3's keys are all one key, so
  // every score ties and the top-k is positions 0..topk-1.
  const std::vector<int> lens{5, 40, 77, 30};
  Rng rng(5);
  const int max_blocks = 8, num_slots = 24 * block_size;
  std::vector<int> table(lens.size() * max_blocks, 0);
  std::vector<int> perm(num_slots / block_size);
  for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int>(i);
  for (size_t i = perm.size() - 1; i > 0; --i) std::swap(perm[i], perm[rng.below(static_cast<int>(i) + 1)]);
  int next = 0;
  for (size_t r = 0; r < lens.size(); ++r)
    for (int b = 0; b < (lens[r] + block_size - 1) / block_size; ++b) table[r * max_blocks + static_cast<size_t>(b)] = perm[static_cast<size_t>(next++)];
  std::vector<float> keys(static_cast<size_t>(num_slots) * D), q(lens.size() * nh * D), w(lens.size() * nh);
  for (auto& x : keys) x = static_cast<float>(rng.normal());
  for (auto& x : q) x = static_cast<float>(rng.normal());
  for (auto& x : w) x = static_cast<float>(std::fabs(rng.normal()) * 0.2);
  // Exact ties: request 2's positions 50 and 60 hold position 10's key, so all three score alike.
  const auto slot = [&](size_t r, int pos) { return table[r * max_blocks + static_cast<size_t>(pos / block_size)] * block_size + pos % block_size; };
  for (int dup : {50, 60}) std::copy_n(&keys[static_cast<size_t>(slot(2, 10)) * D], D, &keys[static_cast<size_t>(slot(2, dup)) * D]);
  for (int j = 1; j < lens[3]; ++j) std::copy_n(&keys[static_cast<size_t>(slot(3, 0)) * D], D, &keys[static_cast<size_t>(slot(3, j)) * D]);
  const int n = static_cast<int>(lens.size()), max_len = 80;
  std::vector<int> rows(static_cast<size_t>(n)), pos(static_cast<size_t>(n));
  for (int t = 0; t < n; ++t) rows[static_cast<size_t>(t)] = t, pos[static_cast<size_t>(t)] = lens[static_cast<size_t>(t)] - 1;

  Dev<float> d_keys(keys), d_q(q), d_w(w), d_scores(static_cast<size_t>(n) * max_len);
  Dev<int> d_table(table), d_rows(rows), d_pos(pos), d_slots(static_cast<size_t>(n) * topk), d_positions(static_cast<size_t>(n) * topk);
  dsa_indexer_scores({.num_tokens = n, .num_heads = nh, .head_dim = D, .q = d_q.get(), .weights = d_w.get(),
                      .key_cache = d_keys.get(), .block_size = block_size, .max_blocks_per_seq = max_blocks,
                      .block_table = d_table.get(), .token_row = d_rows.get(), .token_pos = d_pos.get(),
                      .max_len = max_len, .scores = d_scores.get()});
  dsa_topk({.num_tokens = n, .topk = topk, .scores = d_scores.get(), .max_len = max_len, .token_row = d_rows.get(),
            .token_pos = d_pos.get(), .block_size = block_size, .max_blocks_per_seq = max_blocks, .block_table = d_table.get(),
            .positions = d_positions.get(), .slots = d_slots.get()});
  const std::vector<float> scores = d_scores.download();
  const std::vector<int> got_pos = d_positions.download(), got_slots = d_slots.download();
  for (int t = 0; t < n; ++t) {
    const size_t r = static_cast<size_t>(t);
    std::vector<double> ref(static_cast<size_t>(lens[r]));
    for (int j = 0; j < lens[r]; ++j) {
      std::vector<double> qd(q.begin() + static_cast<long>(r * nh * D), q.begin() + static_cast<long>((r + 1) * nh * D));
      std::vector<double> wd(w.begin() + static_cast<long>(r * nh), w.begin() + static_cast<long>((r + 1) * nh));
      std::vector<double> kd(&keys[static_cast<size_t>(slot(r, j)) * D], &keys[static_cast<size_t>(slot(r, j)) * D] + D);
      ref[static_cast<size_t>(j)] = dsa_index_score(qd.data(), wd.data(), kd.data(), nh, D);
      CHECK(std::fabs(scores[r * max_len + static_cast<size_t>(j)] - ref[static_cast<size_t>(j)]) <= 1e-5 * (1 + std::fabs(ref[static_cast<size_t>(j)])));
    }
    for (int j = lens[r]; j < max_len; ++j) CHECK(scores[r * max_len + static_cast<size_t>(j)] == -INFINITY);
    // The reference's selection (the CPU rule on double scores); the GPU's, from float scores, may
    // differ only where a score sits within 1e-5 of the cut.
    const std::vector<int> want = dsa_topk_positions<double>(ref, topk);
    std::vector<int> got(got_pos.begin() + static_cast<long>(r * topk), got_pos.begin() + static_cast<long>((r + 1) * topk));
    const size_t valid = std::min<size_t>(static_cast<size_t>(lens[r]), topk);
    for (size_t i = valid; i < static_cast<size_t>(topk); ++i) CHECK(got[i] == -1);
    got.resize(valid);
    CHECK(std::is_sorted(got.begin(), got.end()));
    CHECK(std::adjacent_find(got.begin(), got.end()) == got.end());
    if (got != want) {
      const double cut = ref[static_cast<size_t>(want.back())] < ref[static_cast<size_t>(want.front())] ? ref[static_cast<size_t>(want.back())] : ref[static_cast<size_t>(want.front())];
      for (size_t i = 0; i < got.size(); ++i)
        if (!std::binary_search(want.begin(), want.end(), got[i])) CHECK(std::fabs(ref[static_cast<size_t>(got[i])] - cut) < 1e-5 * (1 + std::fabs(cut)));
    }
    for (size_t i = 0; i < got.size(); ++i) CHECK(got_slots[r * topk + i] == slot(r, got[i]));
  }
  // The tie: position 10 beats 50 and 60 whenever only some of the three make the cut.
  const std::vector<int> sel2(got_pos.begin() + 2 * topk, got_pos.begin() + 3 * topk);
  const bool has10 = std::count(sel2.begin(), sel2.end(), 10) > 0, has50 = std::count(sel2.begin(), sel2.end(), 50) > 0,
             has60 = std::count(sel2.begin(), sel2.end(), 60) > 0;
  CHECK((has10 || !has50));
  CHECK((has50 || !has60));
  const std::vector<int> all_tied(got_pos.begin() + 3 * topk, got_pos.begin() + 4 * topk);
  CHECK(all_tied == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
}

namespace {

// The sparse kernel on `tokens` query tokens of H heads over a cache of `num_slots` rows in format
// f, each token with `topk` indices (some −1); checked against a double reference over the rows
// as the host decoder reads them.
void check_sparse(CacheFormat f, bool quantize_query, int H, int tokens, int topk, std::uint64_t seed) {
  Rng rng(seed);
  const int num_slots = 96, rb = cache_row_bytes(f);
  const std::vector<std::uint8_t> cache = random_cache(f, num_slots, rng);
  std::vector<std::uint16_t> q(static_cast<size_t>(tokens) * H * kRow);
  for (auto& x : q) x = randn_bf16(rng, 3.0, 4.0);
  std::vector<int> idx(static_cast<size_t>(tokens) * topk);
  for (int t = 0; t < tokens; ++t)
    for (int k = 0; k < topk; ++k)  // distinct slots; every 7th entry and a token's tail −1 (fewer selected)
      idx[static_cast<size_t>(t) * topk + k] = (k % 7 == 6 || (t == 1 && k >= topk / 2)) ? -1 : (t * 37 + k * 5) % num_slots;
  if (tokens > 2)
    for (int k = 0; k < topk; ++k) idx[2 * static_cast<size_t>(topk) + k] = -1;  // token 2 selects nothing

  Dev<std::uint8_t> d_cache(cache);
  Dev<std::uint16_t> d_q(q), d_out(static_cast<size_t>(tokens) * H * kCacheRkv);
  Dev<int> d_idx(idx);
  Dev<float> d_lse(static_cast<size_t>(tokens) * H);
  mla_sparse_fwd({.num_tokens = tokens, .num_heads = H, .topk = topk, .softmax_scale = kV3Scale, .format = f,
                  .quantize_query = quantize_query, .q = d_q.get(), .kv_cache = d_cache.get(), .indices = d_idx.get(),
                  .out = d_out.get(), .lse = d_lse.get()});
  const std::vector<std::uint16_t> out_bits = d_out.download();
  const std::vector<float> lse = d_lse.download();

  std::vector<double> ref_out(out_bits.size()), ref_lse(lse.size());
  for (int t = 0; t < tokens; ++t)
    for (int h = 0; h < H; ++h) {
      const size_t qi = (static_cast<size_t>(t) * H + static_cast<size_t>(h)) * kRow;
      std::vector<double> qv(kRow);
      for (int c = 0; c < kRow; ++c) {
        const float v = bf16_value(q[qi + static_cast<size_t>(c)]);
        qv[static_cast<size_t>(c)] = quantize_query ? round_to_fp8_e4m3(v) : v;
      }
      std::vector<std::vector<float>> rows;
      std::vector<double> s;
      for (int k = 0; k < topk; ++k) {
        const int sl = idx[static_cast<size_t>(t) * topk + k];
        if (sl < 0) continue;
        rows.push_back(host_row_values(f, &cache[static_cast<size_t>(sl) * rb], 1.0f));
        double d = 0;
        for (int c = 0; c < kRow; ++c) d += qv[static_cast<size_t>(c)] * rows.back()[static_cast<size_t>(c)];
        s.push_back(d * kV3Scale);
      }
      const size_t oi = (static_cast<size_t>(t) * H + static_cast<size_t>(h)) * kCacheRkv;
      if (s.empty()) {
        ref_lse[static_cast<size_t>(t) * H + static_cast<size_t>(h)] = INFINITY;
        continue;
      }
      const double m = *std::max_element(s.begin(), s.end());
      double l = 0;
      for (double x : s) l += std::exp(x - m);
      for (size_t k = 0; k < rows.size(); ++k)
        for (int c = 0; c < kCacheRkv; ++c) ref_out[oi + static_cast<size_t>(c)] += std::exp(s[k] - m) / l * rows[k][static_cast<size_t>(c)];
      ref_lse[static_cast<size_t>(t) * H + static_cast<size_t>(h)] = m + std::log(l);
    }
  std::vector<float> out(out_bits.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = bf16_value(out_bits[i]);
  const CompareResult co = compare_values(out.data(), ref_out.data(), out.size(), kDecodeOutTol);
  const CompareResult cl = compare_values(lse.data(), ref_lse.data(), lse.size(), kDecodeLseTol);
  INFO("format " << static_cast<int>(f) << " quantize_query " << quantize_query << " H " << H << " topk " << topk);
  CHECK_COMPARE("out", co, kDecodeOutTol);
  CHECK_COMPARE("lse", cl, kDecodeLseTol);
}

}  // namespace

TEST_CASE("mla_sparse_fwd: each format and the fp8 query against a double reference over the same rows", "[dsa][fp8]") {
  check_sparse(CacheFormat::kBf16, false, 16, 3, 40, 1);
  check_sparse(CacheFormat::kFp8PerTensor, true, 16, 3, 40, 2);
  check_sparse(CacheFormat::kFp8PerTensor, false, 20, 2, 33, 3);  // 20 heads: a second, partial head group
  check_sparse(CacheFormat::kFp8DsMla, false, 16, 3, 64, 4);
}

TEST_CASE("mla_sparse_fwd with every position listed is the dense decode kernel (bf16 cache)", "[dsa]") {
  DecodeCase c;
  c.batch = 2, c.s_q = 1, c.num_heads = 16, c.seed = 9, c.block_size = 64;
  c.seqlens = {70, 45};
  const DecodeInputs in = make_decode_inputs(c);
  const DecodeReference ref = decode_reference(c, in);
  const int topk = 70;
  std::vector<int> idx(static_cast<size_t>(c.batch) * topk, -1);
  for (int b = 0; b < c.batch; ++b)
    for (int j = 0; j < c.seqlens[static_cast<size_t>(b)]; ++j)
      idx[static_cast<size_t>(b) * topk + static_cast<size_t>(j)] =
          in.block_table[static_cast<size_t>(b) * in.max_blocks_per_seq + static_cast<size_t>(j / c.block_size)] * c.block_size + j % c.block_size;
  std::vector<std::uint8_t> cache_bytes(in.cache.size() * 2);
  std::memcpy(cache_bytes.data(), in.cache.data(), cache_bytes.size());
  Dev<std::uint8_t> d_cache(cache_bytes);
  Dev<std::uint16_t> d_q(in.q), d_out(static_cast<size_t>(c.batch) * c.num_heads * kCacheRkv);
  Dev<int> d_idx(idx);
  Dev<float> d_lse(static_cast<size_t>(c.batch) * c.num_heads);
  mla_sparse_fwd({.num_tokens = c.batch, .num_heads = c.num_heads, .topk = topk, .softmax_scale = c.scale,
                  .format = CacheFormat::kBf16, .q = d_q.get(), .kv_cache = d_cache.get(), .indices = d_idx.get(),
                  .out = d_out.get(), .lse = d_lse.get()});
  const std::vector<std::uint16_t> out_bits = d_out.download();
  std::vector<float> out(out_bits.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = bf16_value(out_bits[i]);
  const std::vector<float> lse = d_lse.download();
  CHECK_COMPARE("out", compare_values(out.data(), ref.out.data(), out.size(), kDecodeOutTol), kDecodeOutTol);
  CHECK_COMPARE("lse", compare_values(lse.data(), ref.lse.data(), lse.size(), kDecodeLseTol), kDecodeLseTol);
}
