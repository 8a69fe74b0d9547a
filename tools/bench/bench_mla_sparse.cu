// Benchmark of DeepSeek sparse attention on the GPU: the DSA indexer's scores and top-k
// (attention/cuda/dsa_indexer.h), the sparse MLA kernel over bf16, fp8 and fp8_ds_mla caches
// (attention/cuda/mla_sparse.h), and the fp8 cache write and gather (attention/cuda/cache_quant.h).
// Validates first: the sparse kernel with every position listed against the dense decode kernel,
// and each fp8 format against the bf16 kernel on the rows that format reads back. Then times a
// DeepSeek-V3.2 decode step (64 query tokens, 128 heads, index_topk 2048, 32,768 cached positions
// each) with L2 flushed between runs, and prints achieved bandwidth next to the device's copy
// bandwidth, plus the peak device memory the benchmark allocated.
// Usage: bench_mla_sparse [--quick | --smoke]   Exit: 0 ok, 1 validation failed, 77 no usable GPU.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "attention/cuda/cache_quant.h"
#include "attention/cuda/cuda_check.h"
#include "attention/cuda/device_query.h"
#include "attention/cuda/dsa_indexer.h"
#include "attention/cuda/mla_decode.h"
#include "attention/cuda/mla_sparse.h"
#include "kit/compare.h"
#include "kit/cuda/timing.h"
#include "kit/mla_decode_ref.h"
#include "model/bf16.h"

namespace {

using namespace mlasim;
using namespace mlasim::kit;

struct Sizes {
  std::size_t min_flush_bytes = 256u << 20;
  std::size_t copy_bytes = std::size_t{2} << 30;
  int tokens = 64, heads = 128, topk = 2048, len = 32768, index_heads = 64, index_dim = 128, block_size = 64;
};
Sizes g;
std::size_t g_allocated = 0, g_peak = 0;

struct DevMem {
  std::vector<void*> owned;
  template <typename T>
  T* alloc(std::size_t n) {
    void* p = nullptr;
    MLASIM_CUDA_CHECK(cudaMalloc(&p, std::max<std::size_t>(n, 1) * sizeof(T)));
    owned.push_back(p);
    g_allocated += n * sizeof(T);
    g_peak = std::max(g_peak, g_allocated);
    return static_cast<T*>(p);
  }
  ~DevMem() {
    for (void* p : owned) cudaFree(p);
  }
};

template <typename T>
std::vector<T> download(const T* d, std::size_t n) {
  std::vector<T> v(n);
  MLASIM_CUDA_CHECK(cudaDeviceSynchronize());
  MLASIM_CUDA_CHECK(cudaMemcpy(v.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost));
  return v;
}

std::vector<float> as_floats(const std::vector<std::uint16_t>& bits) {
  std::vector<float> v(bits.size());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = bf16_value(bits[i]);
  return v;
}

// The sparse kernel with every position of each request listed equals the dense decode kernel;
// each fp8 format equals the bf16 kernel run on the rows that format reads back (cache_gather_dequant).
bool validate(int num_sms) {
  DecodeCase c;
  c.batch = 3, c.s_q = 1, c.num_heads = 16, c.seed = 3, c.block_size = 64;
  c.seqlens = {300, 77, 190};
  const DecodeInputs in = make_decode_inputs(c);
  const int topk = 300, rows = c.batch * c.num_heads;
  std::vector<int> idx(static_cast<std::size_t>(c.batch) * topk, -1);
  for (int b = 0; b < c.batch; ++b)
    for (int j = 0; j < c.seqlens[static_cast<std::size_t>(b)]; ++j)
      idx[static_cast<std::size_t>(b) * topk + static_cast<std::size_t>(j)] =
          in.block_table[static_cast<std::size_t>(b) * in.max_blocks_per_seq + static_cast<std::size_t>(j / 64)] * 64 + j % 64;
  DevMem m;
  const std::size_t slots = static_cast<std::size_t>(in.num_blocks) * 64;
  auto* cache = m.alloc<std::uint16_t>(in.cache.size());
  auto* q = m.alloc<std::uint16_t>(in.q.size());
  auto* d_idx = m.alloc<int>(idx.size());
  auto* bt = m.alloc<int>(in.block_table.size());
  auto* lens = m.alloc<int>(c.seqlens.size());
  MLASIM_CUDA_CHECK(cudaMemcpy(cache, in.cache.data(), in.cache.size() * 2, cudaMemcpyHostToDevice));
  MLASIM_CUDA_CHECK(cudaMemcpy(q, in.q.data(), in.q.size() * 2, cudaMemcpyHostToDevice));
  MLASIM_CUDA_CHECK(cudaMemcpy(d_idx, idx.data(), idx.size() * 4, cudaMemcpyHostToDevice));
  MLASIM_CUDA_CHECK(cudaMemcpy(bt, in.block_table.data(), in.block_table.size() * 4, cudaMemcpyHostToDevice));
  MLASIM_CUDA_CHECK(cudaMemcpy(lens, c.seqlens.data(), c.seqlens.size() * 4, cudaMemcpyHostToDevice));
  auto* out_dense = m.alloc<std::uint16_t>(static_cast<std::size_t>(rows) * 512);
  auto* lse_dense = m.alloc<float>(static_cast<std::size_t>(rows));
  MlaDecodeParams dp;
  dp.batch = c.batch, dp.num_heads = c.num_heads, dp.block_size = 64, dp.max_blocks_per_seq = in.max_blocks_per_seq;
  dp.num_blocks = in.num_blocks, dp.softmax_scale = c.scale, dp.q = q, dp.kv_cache = cache, dp.block_table = bt;
  dp.cache_seqlens = lens, dp.out = out_dense, dp.lse = lse_dense;
  dp.num_sm_parts = mla_decode_num_sm_parts(num_sms, c.num_heads);
  int* meta = m.alloc<int>(static_cast<std::size_t>(dp.num_sm_parts) * kMlaDecodeMetadataInts);
  int* splits = m.alloc<int>(static_cast<std::size_t>(c.batch) + 1);
  dp.tile_scheduler_metadata = meta, dp.num_splits = splits;
  dp.o_accum = m.alloc<float>(mla_decode_o_accum_floats(c.batch, c.num_heads, dp.num_sm_parts));
  dp.lse_accum = m.alloc<float>(mla_decode_lse_accum_floats(c.batch, c.num_heads, dp.num_sm_parts));
  mla_decode_get_metadata({lens, c.batch, dp.num_sm_parts, meta, splits, nullptr});
  mla_decode_fwd(dp);
  const std::vector<float> dense = as_floats(download(out_dense, static_cast<std::size_t>(rows) * 512));
  std::vector<double> dense_d(dense.begin(), dense.end());

  auto* out = m.alloc<std::uint16_t>(static_cast<std::size_t>(rows) * 512);
  auto* lse = m.alloc<float>(static_cast<std::size_t>(rows));
  MlaSparseParams sp;
  sp.num_tokens = c.batch, sp.num_heads = c.num_heads, sp.topk = topk, sp.softmax_scale = c.scale, sp.q = q;
  sp.kv_cache = reinterpret_cast<const std::uint8_t*>(cache), sp.indices = d_idx, sp.out = out, sp.lse = lse;
  mla_sparse_fwd(sp);
  bool ok = true;
  const CompareResult cb = compare_values(as_floats(download(out, static_cast<std::size_t>(rows) * 512)).data(),
                                          dense_d.data(), dense_d.size(), kDecodeOutTol);
  std::printf("  validate sparse (every position) vs dense decode: %s\n", cb.describe(kDecodeOutTol).c_str());
  ok = ok && cb.pass;

  // fp8 formats: write the live rows quantized, read them back in bf16, run bf16 on those.
  std::vector<int> live;
  for (int v : idx)
    if (v >= 0) live.push_back(v);
  auto* d_live = m.alloc<int>(live.size());
  MLASIM_CUDA_CHECK(cudaMemcpy(d_live, live.data(), live.size() * 4, cudaMemcpyHostToDevice));
  auto* rows_bf16 = m.alloc<std::uint16_t>(live.size() * 576);  // [c_kv | k_pe] per live row
  cache_gather_dequant({static_cast<int>(live.size()), CacheFormat::kBf16, reinterpret_cast<const std::uint8_t*>(cache), d_live,
                        1.0f, 1.0f, rows_bf16, nullptr});
  const std::uint16_t *kv_c = rows_bf16, *k_pe = rows_bf16 + 512;
  for (const CacheFormat f : {CacheFormat::kFp8PerTensor, CacheFormat::kFp8DsMla}) {
    auto* qcache = m.alloc<std::uint8_t>(slots * static_cast<std::size_t>(cache_row_bytes(f)));
    cache_write_quantized({static_cast<int>(live.size()), f, static_cast<int>(slots), kv_c, 576, k_pe, 576, d_live, 1.0f, qcache,
                           nullptr});
    auto* back = m.alloc<std::uint16_t>(slots * 576);
    std::vector<int> all(slots);
    for (std::size_t i = 0; i < slots; ++i) all[i] = std::count(live.begin(), live.end(), static_cast<int>(i)) ? static_cast<int>(i) : -1;
    auto* d_all = m.alloc<int>(slots);
    MLASIM_CUDA_CHECK(cudaMemcpy(d_all, all.data(), slots * 4, cudaMemcpyHostToDevice));
    cache_gather_dequant({static_cast<int>(slots), f, qcache, d_all, 1.0f, 1.0f, back, nullptr});
    sp.format = CacheFormat::kBf16, sp.kv_cache = reinterpret_cast<const std::uint8_t*>(back);
    mla_sparse_fwd(sp);
    const std::vector<float> ref = as_floats(download(out, static_cast<std::size_t>(rows) * 512));
    sp.format = f, sp.kv_cache = qcache;
    mla_sparse_fwd(sp);
    const std::vector<float> got = as_floats(download(out, static_cast<std::size_t>(rows) * 512));
    const CompareResult cf = compare_values(got.data(), ref.data(), got.size(), kDecodeOutTol);
    std::printf("  validate %s vs bf16 on its rows: %s\n", f == CacheFormat::kFp8DsMla ? "fp8_ds_mla" : "fp8", cf.describe(kDecodeOutTol).c_str());
    ok = ok && cf.pass;
  }
  sp.kv_cache = reinterpret_cast<const std::uint8_t*>(cache);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const bool smoke = argc > 1 && std::strcmp(argv[1], "--smoke") == 0;
  if (smoke) g = Sizes{std::size_t{1} << 20, std::size_t{16} << 20, 2, 16, 64, 256, 4, 32, 64};
  std::string why;
  if (cuda_usable_device_count(&why) == 0) {
    std::printf("bench_mla_sparse: no usable CUDA device (%s); nothing to measure\n", why.c_str());
    return 77;
  }
  cudaDeviceProp prop{};
  MLASIM_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, %d SMs, L2 %d MB\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20);
  if (!validate(prop.multiProcessorCount)) {
    std::printf("bench_mla_sparse: validation FAILED, not timing\n");
    return 1;
  }
  const L2Flush flush(g.min_flush_bytes);
  const double copy_tbs = copy_bandwidth_tbs(g.copy_bytes, 10, flush);
  std::printf("ceiling: device-to-device copy %.2f TB/s (read + write)\n", copy_tbs);
  const int reps = smoke ? 1 : quick ? 5 : 20;
  const int T = g.tokens, H = g.heads, K = g.topk, L = g.len, B = g.block_size;
  const int blocks_per_seq = L / B, num_blocks = T * blocks_per_seq;
  const std::size_t slots = static_cast<std::size_t>(num_blocks) * B;
  DevMem m;
  // Each query token is its own request of L positions; its top-k: K distinct positions spread over them.
  std::vector<int> table(static_cast<std::size_t>(num_blocks)), rows(static_cast<std::size_t>(T)), pos(static_cast<std::size_t>(T));
  for (int i = 0; i < num_blocks; ++i) table[static_cast<std::size_t>(i)] = static_cast<int>((static_cast<long long>(i) * 7919) % num_blocks);
  std::vector<int> idx(static_cast<std::size_t>(T) * K);
  for (int t = 0; t < T; ++t) {
    rows[static_cast<std::size_t>(t)] = t, pos[static_cast<std::size_t>(t)] = L - 1;
    for (int k = 0; k < K; ++k) {
      const int p = static_cast<int>((static_cast<long long>(k) * L) / K);
      idx[static_cast<std::size_t>(t) * K + k] = table[static_cast<std::size_t>(t) * blocks_per_seq + p / B] * B + p % B;
    }
  }
  auto* d_idx = m.alloc<int>(idx.size());
  auto* d_table = m.alloc<int>(table.size());
  auto* d_rows = m.alloc<int>(rows.size());
  auto* d_pos = m.alloc<int>(pos.size());
  MLASIM_CUDA_CHECK(cudaMemcpy(d_idx, idx.data(), idx.size() * 4, cudaMemcpyHostToDevice));
  MLASIM_CUDA_CHECK(cudaMemcpy(d_table, table.data(), table.size() * 4, cudaMemcpyHostToDevice));
  MLASIM_CUDA_CHECK(cudaMemcpy(d_rows, rows.data(), rows.size() * 4, cudaMemcpyHostToDevice));
  MLASIM_CUDA_CHECK(cudaMemcpy(d_pos, pos.data(), pos.size() * 4, cudaMemcpyHostToDevice));
  auto* q = m.alloc<std::uint16_t>(static_cast<std::size_t>(T) * H * 576);
  fill_uniform_bf16(q, static_cast<std::size_t>(T) * H * 576, 1, 0.1732f);
  auto* out = m.alloc<std::uint16_t>(static_cast<std::size_t>(T) * H * 512);
  auto* lse = m.alloc<float>(static_cast<std::size_t>(T) * H);
  auto* lat = m.alloc<std::uint16_t>(slots * 576);
  fill_uniform_bf16(lat, slots * 576, 2, 1.0f);
  std::vector<int> identity(slots);
  for (std::size_t i = 0; i < slots; ++i) identity[i] = static_cast<int>(i);
  auto* d_identity = m.alloc<int>(slots);
  MLASIM_CUDA_CHECK(cudaMemcpy(d_identity, identity.data(), slots * 4, cudaMemcpyHostToDevice));

  std::printf("%-44s %10s %10s %8s\n", "case", "us", "GB/s", "%copy");
  const auto row = [&](const char* name, double ms, double bytes) {
    const double gbs = bytes / (ms * 1e-3) / 1e9;
    std::printf("%-44s %10.1f %10.1f %7.0f%%\n", name, ms * 1e3, gbs, 100.0 * gbs / (copy_tbs * 1e3));
  };
  for (const CacheFormat f : {CacheFormat::kBf16, CacheFormat::kFp8PerTensor, CacheFormat::kFp8DsMla}) {
    const int rb = cache_row_bytes(f);
    auto* cache = m.alloc<std::uint8_t>(slots * static_cast<std::size_t>(rb));
    if (f == CacheFormat::kBf16) {
      MLASIM_CUDA_CHECK(cudaMemcpy(cache, lat, slots * 1152, cudaMemcpyDeviceToDevice));
    } else {
      const auto write = [&] {
        cache_write_quantized({static_cast<int>(slots), f, static_cast<int>(slots), lat, 576, lat + 512, 576, d_identity, 1.0f,
                               cache, nullptr});
      };
      char name[64];
      std::snprintf(name, sizeof name, "cache write %s, %zu tokens", f == CacheFormat::kFp8DsMla ? "fp8_ds_mla" : "fp8", slots);
      row(name, median_ms(reps, &flush, write), static_cast<double>(slots) * (1152.0 + rb));
      auto* back = m.alloc<std::uint16_t>(static_cast<std::size_t>(T) * K * 576);
      const auto gather = [&] { cache_gather_dequant({T * K, f, cache, d_idx, 1.0f, 1.0f, back, nullptr}); };
      std::snprintf(name, sizeof name, "gather to bf16 %s, %d rows", f == CacheFormat::kFp8DsMla ? "fp8_ds_mla" : "fp8", T * K);
      row(name, median_ms(reps, &flush, gather), static_cast<double>(T) * K * (rb + 1152.0));
    }
    MlaSparseParams sp;
    sp.num_tokens = T, sp.num_heads = H, sp.topk = K, sp.softmax_scale = kV3Scale, sp.format = f, sp.q = q;
    sp.kv_cache = cache, sp.indices = d_idx, sp.out = out, sp.lse = lse;
    sp.quantize_query = f == CacheFormat::kFp8PerTensor;
    const double ms = median_ms(reps, &flush, [&] { mla_sparse_fwd(sp); });
    char name[80];
    std::snprintf(name, sizeof name, "sparse decode %s, %d tok, H=%d, topk %d",
                  f == CacheFormat::kBf16 ? "bf16" : f == CacheFormat::kFp8DsMla ? "fp8_ds_mla" : "fp8", T, H, K);
    // Bytes a step must move: each token's selected rows once, its queries and outputs.
    row(name, ms, static_cast<double>(T) * K * rb + static_cast<double>(T) * H * (576 + 512) * 2.0);
  }
  // The indexer: index keys in fp32, scores then top-k.
  const int nh = g.index_heads, D = g.index_dim;
  auto* keys = m.alloc<float>(slots * static_cast<std::size_t>(D));
  auto* iq = m.alloc<float>(static_cast<std::size_t>(T) * nh * D);
  auto* iw = m.alloc<float>(static_cast<std::size_t>(T) * nh);
  auto* scores = m.alloc<float>(static_cast<std::size_t>(T) * L);
  auto* topk_slots = m.alloc<int>(static_cast<std::size_t>(T) * K);
  MLASIM_CUDA_CHECK(cudaMemset(keys, 0x3c, slots * D * 4));  // a constant key: every score ties (the slowest top-k)
  MLASIM_CUDA_CHECK(cudaMemset(iq, 0x3c, static_cast<std::size_t>(T) * nh * D * 4));
  MLASIM_CUDA_CHECK(cudaMemset(iw, 0x3c, static_cast<std::size_t>(T) * nh * 4));
  const DsaIndexerScoresParams ip{T, nh, D, iq, iw, keys, B, blocks_per_seq, d_table, d_rows, d_pos, L, scores, nullptr};
  char name[80];
  std::snprintf(name, sizeof name, "indexer scores, %d tok, %d heads, %d keys", T, nh, L);
  row(name, median_ms(reps, &flush, [&] { dsa_indexer_scores(ip); }), static_cast<double>(T) * L * (D * 4.0 + 4.0));
  const DsaTopkParams tp{T, K, scores, L, d_rows, d_pos, B, blocks_per_seq, d_table, nullptr, topk_slots, nullptr};
  std::snprintf(name, sizeof name, "indexer top-%d of %d (all scores tied)", K, L);
  row(name, median_ms(reps, &flush, [&] { dsa_topk(tp); }), static_cast<double>(T) * L * 4.0);
  std::printf("peak device memory allocated by the benchmark: %.1f MB (plus the %.0f MB L2 flush buffer)\n", g_peak / 1e6,
              flush.bytes() / 1e6);
  return 0;
}
