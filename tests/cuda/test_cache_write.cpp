// GPU tests of cache_write (attention/cuda/cache_write.h): every token's [c_kv | k_pe] row lands
// bit-exactly in its slot, slot −1 writes nothing, untouched rows keep their NaN poison; both the
// 16-byte path (packed, aligned) and the 2-byte path (odd strides).
#include <catch2/catch.hpp>
#include <cuda_runtime.h>

#include <cstdio>
#include <string>
#include <cstring>
#include <vector>

#include "attention/cuda/cache_write.h"
#include "attention/cuda/cuda_check.h"
#include "kit/mla_decode_ref.h"

namespace {

using namespace mlasim;
using namespace mlasim::kit;

constexpr int kD = kDecodeDqk, kDV = kDecodeDv;

// num_tokens tokens with c_kv / k_pe rows of the given strides, slots a random subset of the cache
// (distinct) with every 5th token −1; returns "" when the cache matches the host expectation, else
// the first wrong element.
std::string cache_write_mismatch(int num_tokens, int num_blocks, int block_size, long long kv_c_stride, long long k_pe_stride,
                       std::uint64_t seed) {
  Rng rng(seed);
  const int num_slots = num_blocks * block_size;
  std::vector<std::uint16_t> kv_c(static_cast<size_t>(num_tokens) * kv_c_stride + 8);
  std::vector<std::uint16_t> k_pe(static_cast<size_t>(num_tokens) * k_pe_stride + 8);
  for (auto& x : kv_c) x = randn_bf16(rng);
  for (auto& x : k_pe) x = randn_bf16(rng);
  std::vector<int> slots(static_cast<size_t>(num_slots));
  for (int i = 0; i < num_slots; ++i) slots[static_cast<size_t>(i)] = i;
  for (int i = num_slots - 1; i > 0; --i) std::swap(slots[static_cast<size_t>(i)], slots[static_cast<size_t>(rng.below(i + 1))]);
  std::vector<int> slot_mapping(static_cast<size_t>(num_tokens));
  for (int t = 0; t < num_tokens; ++t) slot_mapping[static_cast<size_t>(t)] = t % 5 == 4 ? -1 : slots[static_cast<size_t>(t)];

  std::vector<std::uint16_t> expect(static_cast<size_t>(num_slots) * kD, kBf16NaNBits);
  for (int t = 0; t < num_tokens; ++t) {
    const int s = slot_mapping[static_cast<size_t>(t)];
    if (s < 0) continue;
    std::memcpy(&expect[static_cast<size_t>(s) * kD], &kv_c[static_cast<size_t>(t) * kv_c_stride], kDV * 2);
    std::memcpy(&expect[static_cast<size_t>(s) * kD + kDV], &k_pe[static_cast<size_t>(t) * k_pe_stride], (kD - kDV) * 2);
  }

  std::uint16_t *d_kv_c = nullptr, *d_k_pe = nullptr, *d_cache = nullptr;
  int* d_slots = nullptr;
  MLASIM_CUDA_CHECK(cudaMalloc(&d_kv_c, kv_c.size() * 2));
  MLASIM_CUDA_CHECK(cudaMalloc(&d_k_pe, k_pe.size() * 2));
  MLASIM_CUDA_CHECK(cudaMalloc(&d_cache, expect.size() * 2));
  MLASIM_CUDA_CHECK(cudaMalloc(&d_slots, slot_mapping.size() * sizeof(int) + 4));
  MLASIM_CUDA_CHECK(cudaMemcpy(d_kv_c, kv_c.data(), kv_c.size() * 2, cudaMemcpyHostToDevice));
  MLASIM_CUDA_CHECK(cudaMemcpy(d_k_pe, k_pe.data(), k_pe.size() * 2, cudaMemcpyHostToDevice));
  MLASIM_CUDA_CHECK(cudaMemcpy(d_slots, slot_mapping.data(), slot_mapping.size() * sizeof(int), cudaMemcpyHostToDevice));
  const std::vector<std::uint16_t> poison(expect.size(), kBf16NaNBits);
  MLASIM_CUDA_CHECK(cudaMemcpy(d_cache, poison.data(), poison.size() * 2, cudaMemcpyHostToDevice));

  cache_write({.num_tokens = num_tokens,
               .num_slots = num_slots,
               .kv_c = d_kv_c,
               .kv_c_stride = kv_c_stride,
               .k_pe = d_k_pe,
               .k_pe_stride = k_pe_stride,
               .slot_mapping = d_slots,
               .kv_cache = d_cache});
  MLASIM_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<std::uint16_t> got(expect.size());
  MLASIM_CUDA_CHECK(cudaMemcpy(got.data(), d_cache, got.size() * 2, cudaMemcpyDeviceToHost));
  MLASIM_CUDA_CHECK(cudaFree(d_kv_c));
  MLASIM_CUDA_CHECK(cudaFree(d_k_pe));
  MLASIM_CUDA_CHECK(cudaFree(d_cache));
  MLASIM_CUDA_CHECK(cudaFree(d_slots));
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != expect[i]) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "slot %zu column %zu is 0x%04x, expected 0x%04x", i / kD, i % kD, got[i], expect[i]);
      return buf;
    }
  return "";
}

}  // namespace

TEST_CASE("cache_write_rows_and_skips", "[gpu]") {
  CHECK(cache_write_mismatch(1, 1, 64, 512, 64, 1) == "");        // one token
  CHECK(cache_write_mismatch(37, 4, 16, 512, 64, 2) == "");       // packed, 16-byte path
  CHECK(cache_write_mismatch(1000, 20, 64, 576, 576, 3) == "");   // views into one [T, 576] buffer
  CHECK(cache_write_mismatch(300, 10, 64, 513, 67, 4) == "");     // odd strides: 2-byte path
  CHECK(cache_write_mismatch(5000, 100, 64, 512, 64, 5) == "");   // many tokens
}
