// Benchmark of the dense MLA decode kernel (attention/cuda/mla_decode.h): validates a small case
// against the double reference, then times b = 128, s_q ∈ {1, 2}, s_k ∈ {4096, 8192, 32768},
// H ∈ {16, 128} with L2 flushed between runs (median of many), and prints TB/s and TFLOP/s next to
// ceilings measured in the same run (device-to-device copy bandwidth, cuBLAS bf16 GEMM rate).
// Usage: bench_mla_decode [--quick | --smoke]   Exit: 0 ok, 1 validation failed, 77 no usable GPU.
// --smoke: every step on tiny sizes (meaningless figures), for the SIMT emulator's CI run.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "attention/cuda/cuda_check.h"
#include "attention/cuda/device_query.h"
#include "attention/cuda/mla_decode.h"
#include "kit/compare.h"
#include "kit/cuda/timing.h"
#include "kit/mla_decode_ref.h"

namespace {

using namespace mlasim;
using namespace mlasim::kit;

constexpr int kD = kDecodeDqk, kDV = kDecodeDv;

// Problem sizes: the real ones, or tiny ones (--smoke) that run every step under the SIMT emulator.
struct Sizes {
  std::size_t min_flush_bytes = 256u << 20;  // > H200's 60 MB L2
  std::size_t copy_bytes = std::size_t{2} << 30;
  int gemm_n = 8192;
  int batch = 128;
  std::vector<int> s_ks = {4096, 8192, 32768};
};
Sizes g_sizes;

template <typename T>
T* dev_alloc(std::size_t n) {
  T* p = nullptr;
  MLASIM_CUDA_CHECK(cudaMalloc(&p, std::max<std::size_t>(n, 1) * sizeof(T)));
  return p;
}

// One decode problem on the device: inputs, schedule and workspace.
struct Problem {
  MlaDecodeParams p;
  MlaDecodeMetadataParams mp;
  std::vector<void*> owned;

  Problem(int batch, int s_q, int heads, const std::vector<int>& seqlens, int num_sms, const DecodeInputs* host,
          std::uint32_t seed) {
    const int bs = 64, q_rows = s_q * heads;
    int max_blocks = 0, used = 0;
    for (int l : seqlens) max_blocks = std::max(max_blocks, (l + bs - 1) / bs), used += (l + bs - 1) / bs;
    p.batch = batch, p.s_q = s_q, p.num_heads = heads, p.block_size = bs;
    p.softmax_scale = kV3Scale, p.causal = true;
    std::vector<int> table;
    if (host) {
      p.max_blocks_per_seq = host->max_blocks_per_seq, p.num_blocks = host->num_blocks;
      table = host->block_table;
    } else {  // random permutation of all blocks, sentinel-free (every entry used)
      p.max_blocks_per_seq = max_blocks, p.num_blocks = used;
      std::vector<int> ids(static_cast<std::size_t>(used));
      for (int i = 0; i < used; ++i) ids[static_cast<std::size_t>(i)] = i;
      Rng rng(seed);
      for (int i = used - 1; i > 0; --i) std::swap(ids[static_cast<std::size_t>(i)], ids[static_cast<std::size_t>(rng.below(i + 1))]);
      table.assign(static_cast<std::size_t>(batch) * max_blocks, kSentinelBlock);
      int next = 0;
      for (int b = 0; b < batch; ++b)
        for (int k = 0; k < (seqlens[static_cast<std::size_t>(b)] + bs - 1) / bs; ++k)
          table[static_cast<std::size_t>(b) * max_blocks + k] = ids[static_cast<std::size_t>(next++)];
    }
    const std::size_t q_elems = static_cast<std::size_t>(batch) * q_rows * kD;
    const std::size_t cache_elems = static_cast<std::size_t>(p.num_blocks) * bs * kD;
    auto* q = own(dev_alloc<std::uint16_t>(q_elems));
    auto* cache = own(dev_alloc<std::uint16_t>(cache_elems));
    if (host) {
      MLASIM_CUDA_CHECK(cudaMemcpy(q, host->q.data(), q_elems * 2, cudaMemcpyHostToDevice));
      MLASIM_CUDA_CHECK(cudaMemcpy(cache, host->cache.data(), cache_elems * 2, cudaMemcpyHostToDevice));
    } else {
      fill_uniform_bf16(q, q_elems, seed, 0.1732f);  // std ≈ 0.1, like randn/10
      fill_uniform_bf16(cache, cache_elems, seed + 1, 0.1732f);
    }
    auto* bt = own(dev_alloc<int>(table.size()));
    auto* lens = own(dev_alloc<int>(seqlens.size()));
    MLASIM_CUDA_CHECK(cudaMemcpy(bt, table.data(), table.size() * sizeof(int), cudaMemcpyHostToDevice));
    MLASIM_CUDA_CHECK(cudaMemcpy(lens, seqlens.data(), seqlens.size() * sizeof(int), cudaMemcpyHostToDevice));
    p.q = q, p.kv_cache = cache, p.block_table = bt, p.cache_seqlens = lens;
    p.out = own(dev_alloc<std::uint16_t>(static_cast<std::size_t>(batch) * q_rows * kDV));
    p.lse = own(dev_alloc<float>(static_cast<std::size_t>(batch) * q_rows));
    p.num_sm_parts = mla_decode_num_sm_parts(num_sms, q_rows);
    auto* meta = own(dev_alloc<int>(static_cast<std::size_t>(p.num_sm_parts) * kMlaDecodeMetadataInts));
    auto* splits = own(dev_alloc<int>(static_cast<std::size_t>(batch) + 1));
    p.tile_scheduler_metadata = meta, p.num_splits = splits;
    p.o_accum = own(dev_alloc<float>(mla_decode_o_accum_floats(batch, q_rows, p.num_sm_parts)));
    p.lse_accum = own(dev_alloc<float>(mla_decode_lse_accum_floats(batch, q_rows, p.num_sm_parts)));
    mp.cache_seqlens = lens, mp.batch = batch, mp.num_sm_parts = p.num_sm_parts;
    mp.tile_scheduler_metadata = meta, mp.num_splits = splits;
    mla_decode_get_metadata(mp);
    MLASIM_CUDA_CHECK(cudaDeviceSynchronize());
  }
  ~Problem() {
    for (void* x : owned) cudaFree(x);
  }
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;

  template <typename T>
  T* own(T* x) {
    owned.push_back(x);
    return x;
  }
};

bool validate(int num_sms) {
  DecodeCase c;
  c.batch = 4, c.s_q = 2, c.num_heads = 16, c.seed = 42;
  Rng rng(42);
  c.seqlens = make_seqlens(4, 1000, 2, true, rng);
  const DecodeInputs in = make_decode_inputs(c);
  const DecodeReference ref = decode_reference(c, in);
  Problem pr(c.batch, c.s_q, c.num_heads, c.seqlens, num_sms, &in, 0);
  mla_decode_fwd(pr.p);
  MLASIM_CUDA_CHECK(cudaDeviceSynchronize());
  const int q_rows = c.s_q * c.num_heads;
  std::vector<std::uint16_t> out_bits(static_cast<std::size_t>(c.batch) * q_rows * kDV);
  std::vector<float> lse(static_cast<std::size_t>(c.batch) * q_rows), out(out_bits.size());
  MLASIM_CUDA_CHECK(cudaMemcpy(out_bits.data(), pr.p.out, out_bits.size() * 2, cudaMemcpyDeviceToHost));
  MLASIM_CUDA_CHECK(cudaMemcpy(lse.data(), pr.p.lse, lse.size() * 4, cudaMemcpyDeviceToHost));
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = bf16_value(out_bits[i]);
  const CompareResult co = compare_values(out.data(), ref.out.data(), out.size(), kDecodeOutTol);
  const CompareResult cl = compare_values(lse.data(), ref.lse.data(), lse.size(), kDecodeLseTol);
  std::printf("  validate out: %s\n  validate lse: %s\n", co.describe(kDecodeOutTol).c_str(), cl.describe(kDecodeLseTol).c_str());
  return co.pass && cl.pass;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const bool smoke = argc > 1 && std::strcmp(argv[1], "--smoke") == 0;
  if (smoke) g_sizes = Sizes{std::size_t{1} << 20, std::size_t{16} << 20, 128, 2, {256}};
  std::string why;
  if (mlasim::cuda_usable_device_count(&why) == 0) {
    std::printf("bench_mla_decode: no usable CUDA device (%s); nothing to measure\n", why.c_str());
    return 77;
  }
  cudaDeviceProp prop{};
  MLASIM_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  const int num_sms = prop.multiProcessorCount;
  std::printf("device: %s, %d SMs, L2 %d MB\n", prop.name, num_sms, prop.l2CacheSize >> 20);

  if (!validate(num_sms)) {
    std::printf("bench_mla_decode: validation FAILED, not timing\n");
    return 1;
  }
  const L2Flush flush(g_sizes.min_flush_bytes);
  const double copy_tbs = copy_bandwidth_tbs(g_sizes.copy_bytes, 10, flush);
  const double gemm_tf = gemm_bf16_tflops(g_sizes.gemm_n, 10, flush);
  std::printf("ceilings: device-to-device copy %.2f TB/s (read + write), cuBLAS bf16 GEMM %d^3 %.0f TFLOP/s\n", copy_tbs,
              g_sizes.gemm_n, gemm_tf);
  const int batch = g_sizes.batch, reps = smoke ? 1 : quick ? 5 : 30;
  char head[64];
  std::snprintf(head, sizeof head, "case (b=%d, page 64, causal)", batch);
  std::printf("%-34s %10s %10s %8s %9s %8s %10s %10s\n", head, "decode us", "meta us", "TB/s", "%copy", "TFLOP/s", "%gemm",
              "ideal us");

  for (int s_k : g_sizes.s_ks)
    for (int heads : {16, 128})
      for (int s_q : {1, 2}) {
        if (quick && s_k != g_sizes.s_ks.front()) continue;
        const std::vector<int> lens(static_cast<std::size_t>(batch), s_k);
        Problem pr(batch, s_q, heads, lens, num_sms, nullptr, static_cast<std::uint32_t>(s_k + heads + s_q));
        const double ms = median_ms(reps, &flush, [&] { mla_decode_fwd(pr.p); });
        const double meta_ms = median_ms(reps, nullptr, [&] { mla_decode_get_metadata(pr.mp); });
        const double mean_len = s_k;
        const double bytes = batch * mean_len * 1152.0 + batch * s_q * heads * (kD + kDV) * 2.0;
        const double flops = static_cast<double>(batch) * heads * s_q * (2.0 * 576 + 2.0 * 512) * mean_len;
        const double tbs = bytes / (ms * 1e-3) / 1e12, tf = flops / (ms * 1e-3) / 1e12;
        const double ideal_us = std::max(bytes / (copy_tbs * 1e12), flops / (gemm_tf * 1e12)) * 1e6;
        char name[64];
        std::snprintf(name, sizeof name, "s_k=%d H=%d s_q=%d", s_k, heads, s_q);
        std::printf("%-34s %10.1f %10.1f %8.2f %8.0f%% %8.0f %9.0f%% %10.1f\n", name, ms * 1e3, meta_ms * 1e3, tbs,
                    100.0 * tbs / copy_tbs, tf, 100.0 * tf / gemm_tf, ideal_us);
      }
  return 0;
}
