// MLA prefill kernel benchmark (attention/cuda/mla_prefill.cu; d_qk 192, d_v 128, causal, b = 1):
// validates a small varlen case against the kit's double host reference with FlashMLA's dense prefill
// rule, then times L ∈ {1024, 4096, 8192} × H ∈ {16, 128} with CUDA events (L2 flushed before
// every run, median of the runs) and prints TFLOP/s by docs/spec/mla.md §7 next to a cuBLAS bf16 GEMM
// rate and a device-to-device copy bandwidth measured in the same run. Exits 77 without a GPU.
// Usage: bench_mla_prefill [runs=20 | --smoke]   (--smoke: every step on tiny sizes, for the SIMT emulator)
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "model/bf16.h"
#include "attention/cuda/cuda_check.h"
#include "attention/cuda/device_query.h"
#include "attention/cuda/mla_prefill.h"
#include "kit/compare.h"
#include "kit/cuda/timing.h"
#include "kit/mla_prefill_ref.h"

namespace {

constexpr int kDqk = mlasim::kMlaPrefillDqk, kDv = mlasim::kMlaPrefillDv;
constexpr float kScale = 0.1352338f;  // DeepSeek-V3

// Problem sizes: the real ones, or tiny ones (--smoke) that run every step under the SIMT emulator.
struct Sizes {
  std::size_t min_flush_bytes = 64u << 20;
  std::size_t copy_bytes = std::size_t{1} << 30;
  int gemm_n = 8192;
  std::vector<int> heads = {16, 128};
  std::vector<int> lengths = {1024, 4096, 8192};
};
Sizes g_sizes;

// Small varlen causal case (s_q ≠ s_k in one sequence) against the kit's double reference, all rows and heads.
bool validate() {
  const mlasim::kit::PrefillProblem pr = mlasim::kit::make_prefill_problem({300, 517, 64}, {300, 900, 64}, 4, true, 7);
  const int H = pr.H, tq = pr.total_q();
  const auto upload = [](const std::vector<float>& src) {
    std::vector<std::uint16_t> bits(src.size());
    for (size_t i = 0; i < src.size(); ++i) bits[i] = mlasim::bf16_bits(src[i]);
    void* d = nullptr;
    MLASIM_CUDA_CHECK(cudaMalloc(&d, bits.size() * 2));
    MLASIM_CUDA_CHECK(cudaMemcpy(d, bits.data(), bits.size() * 2, cudaMemcpyHostToDevice));
    return d;
  };
  void *dq = upload(pr.q), *dk = upload(pr.k), *dv = upload(pr.v), *dout = nullptr;
  float* dlse = nullptr;
  int *dcq = nullptr, *dck = nullptr;
  MLASIM_CUDA_CHECK(cudaMalloc(&dout, static_cast<size_t>(tq) * H * kDv * 2));
  MLASIM_CUDA_CHECK(cudaMalloc(&dlse, static_cast<size_t>(H) * tq * 4));
  MLASIM_CUDA_CHECK(cudaMalloc(&dcq, pr.cu_q.size() * 4));
  MLASIM_CUDA_CHECK(cudaMalloc(&dck, pr.cu_k.size() * 4));
  MLASIM_CUDA_CHECK(cudaMemcpy(dcq, pr.cu_q.data(), pr.cu_q.size() * 4, cudaMemcpyHostToDevice));
  MLASIM_CUDA_CHECK(cudaMemcpy(dck, pr.cu_k.data(), pr.cu_k.size() * 4, cudaMemcpyHostToDevice));
  mlasim::MlaPrefillParams p;
  p.q = dq, p.k = dk, p.v = dv, p.out = dout, p.lse = dlse, p.cu_seqlens_q = dcq, p.cu_seqlens_k = dck;
  p.batch = pr.batch(), p.num_heads = H, p.total_q = tq, p.max_seqlen_q = pr.max_q(), p.max_seqlen_k = pr.max_k();
  p.causal = true, p.softmax_scale = pr.scale;
  mlasim::mla_prefill_launch(p, nullptr);
  MLASIM_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<std::uint16_t> out(static_cast<size_t>(tq) * H * kDv);
  std::vector<float> lse(static_cast<size_t>(H) * tq);
  MLASIM_CUDA_CHECK(cudaMemcpy(out.data(), dout, out.size() * 2, cudaMemcpyDeviceToHost));
  MLASIM_CUDA_CHECK(cudaMemcpy(lse.data(), dlse, lse.size() * 4, cudaMemcpyDeviceToHost));
  for (void* ptr : {dq, dk, dv, dout, static_cast<void*>(dlse), static_cast<void*>(dcq), static_cast<void*>(dck)})
    MLASIM_CUDA_CHECK(cudaFree(ptr));

  // The reference's layouts (out [rows][heads][128], lse [heads][rows]) are the kernel's.
  const mlasim::kit::PrefillReference ref =
      mlasim::kit::prefill_reference(pr, mlasim::kit::iota_vec(tq), mlasim::kit::iota_vec(H));
  std::vector<float> got(out.size());
  for (size_t i = 0; i < out.size(); ++i) got[i] = mlasim::bf16_value(out[i]);
  using mlasim::kit::kDecodeLseTol;
  using mlasim::kit::kPrefillOutTol;
  const auto co = mlasim::kit::compare_values(got.data(), ref.out.data(), got.size(), kPrefillOutTol);
  const auto cl = mlasim::kit::compare_values(lse.data(), ref.lse.data(), lse.size(), kDecodeLseTol);
  std::printf("validate (b=3 varlen causal, s_q 300/517/64, s_k 300/900/64, H=4) vs double reference:\n  out %s\n  lse %s\n",
              co.describe(kPrefillOutTol).c_str(), cl.describe(kDecodeLseTol).c_str());
  return co.pass && cl.pass;
}

}  // namespace

int main(int argc, char** argv) {
  std::string why;
  if (mlasim::cuda_usable_device_count(&why) == 0) {
    std::printf("bench_mla_prefill: no usable CUDA device (%s)\n", why.c_str());
    return 77;
  }
  const bool smoke = argc > 1 && std::string(argv[1]) == "--smoke";
  if (smoke) g_sizes = Sizes{std::size_t{1} << 20, std::size_t{16} << 20, 128, {2}, {128}};
  const int runs = smoke ? 1 : argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  cudaDeviceProp prop{};
  MLASIM_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device: %s, sm_%d%d, %d SMs, L2 %d MiB\n", prop.name, prop.major, prop.minor, prop.multiProcessorCount,
              prop.l2CacheSize >> 20);
  if (!validate()) {
    std::printf("validation FAILED: not timing\n");
    return 1;
  }
  const mlasim::kit::L2Flush flush(g_sizes.min_flush_bytes);
  const double gemm = mlasim::kit::gemm_bf16_tflops(g_sizes.gemm_n, std::min(runs, 10), flush);
  const double copy = mlasim::kit::copy_bandwidth_tbs(g_sizes.copy_bytes, std::min(runs, 10), flush);
  std::printf("ceilings measured now: cuBLAS bf16 GEMM %d^3 (fp32 compute) %.1f TFLOP/s; D2D copy %.2f TB/s (read+write)\n",
              g_sizes.gemm_n, gemm, copy);
  std::printf("%6s %5s %10s %10s %8s %8s %12s\n", "L", "H", "median ms", "TFLOP/s", "/GEMM", "GB/s", "of copy");

  const bool have_torch = !smoke && std::system("python3 -c 'import torch' >/dev/null 2>&1") == 0;
  for (int H : g_sizes.heads)
    for (int L : g_sizes.lengths) {
      const size_t qk = static_cast<size_t>(L) * H * kDqk, vo = static_cast<size_t>(L) * H * kDv;
      void *q = nullptr, *k = nullptr, *v = nullptr, *out = nullptr;
      float* lse = nullptr;
      int* cu = nullptr;
      MLASIM_CUDA_CHECK(cudaMalloc(&q, qk * 2));
      MLASIM_CUDA_CHECK(cudaMalloc(&k, qk * 2));
      MLASIM_CUDA_CHECK(cudaMalloc(&v, vo * 2));
      MLASIM_CUDA_CHECK(cudaMalloc(&out, vo * 2));
      MLASIM_CUDA_CHECK(cudaMalloc(&lse, static_cast<size_t>(H) * L * 4));
      MLASIM_CUDA_CHECK(cudaMalloc(&cu, 2 * sizeof(int)));
      const int cu_host[2] = {0, L};
      MLASIM_CUDA_CHECK(cudaMemcpy(cu, cu_host, sizeof cu_host, cudaMemcpyHostToDevice));
      mlasim::kit::fill_uniform_bf16(q, qk, 11, 0.17f);
      mlasim::kit::fill_uniform_bf16(k, qk, 12, 0.17f);
      mlasim::kit::fill_uniform_bf16(v, vo, 13, 0.17f);
      mlasim::MlaPrefillParams p;
      p.q = q, p.k = k, p.v = v, p.out = out, p.lse = lse, p.cu_seqlens_q = cu, p.cu_seqlens_k = cu;
      p.batch = 1, p.num_heads = H, p.total_q = L, p.max_seqlen_q = L, p.max_seqlen_k = L;
      p.causal = true, p.softmax_scale = kScale;
      const double ms = mlasim::kit::median_ms(runs, &flush, [&] { mlasim::mla_prefill_launch(p, nullptr); });
      // docs/spec/mla.md §7: 2·b·H·s_q·avg_s_k·(d_qk + d_v), causal avg_s_k = (max(0, s_k − s_q) + s_k)/2.
      const int s_q = L, s_k = L;
      const double avg_sk = (std::max(0, s_k - s_q) + s_k) / 2.0;
      const double flops = 2.0 * H * s_q * avg_sk * (kDqk + kDv);
      const double bytes = 1280.0 * L * H;  // q, k (384 B) + v, out (256 B) per token and head
      const double tflops = flops / (ms * 1e-3) / 1e12, gbps = bytes / (ms * 1e-3) / 1e9;
      std::printf("%6d %5d %10.3f %10.1f %7.1f%% %8.0f %11.1f%%\n", L, H, ms, tflops, 100 * tflops / gemm, gbps,
                  100 * gbps / (copy * 1e3));
      for (void* ptr : {q, k, v, out, static_cast<void*>(lse), static_cast<void*>(cu)})
        MLASIM_CUDA_CHECK(cudaFree(ptr));
    }
  std::printf("anchors (docs/spec/mla.md §7): FA3 fwd hdim128 causal on H100 292/423/521/579 TFLOP/s at 0.5k/1k/2k/4k\n");
  if (have_torch)
    std::printf(
        "hint: torch SDPA on the same shape: python3 -c \"import torch,torch.nn.functional as F;L,H=4096,128;"
        "q=torch.randn(1,H,L,192,device='cuda',dtype=torch.bfloat16);k=torch.randn_like(q);"
        "v=torch.randn(1,H,L,128,device='cuda',dtype=torch.bfloat16);f=lambda:F.scaled_dot_product_attention(q,k,v,"
        "is_causal=True,scale=%.7f);f();s,e=torch.cuda.Event(True),torch.cuda.Event(True);s.record();[f() for _ in "
        "range(20)];e.record();torch.cuda.synchronize();t=s.elapsed_time(e)/20;print(t,'ms',H*L*L*320/t/1e9,'TFLOP/s')\"\n",
        kScale);
  return 0;
}
