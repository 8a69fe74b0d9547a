// GPU tests of the dense MLA decode (attention/cuda/mla_decode.h) against the double reference of
// kit/mla_decode_ref.h over FlashMLA's grids (docs/spec/mla.md §8), with FlashMLA's abs/rel/cos rule (§5):
// permuted block ids, NaN in every non-live cache row, sentinel block-table entries, split-KV.
#include <catch2/catch.hpp>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "attention/cuda/cuda_check.h"
#include "attention/cuda/mla_decode.h"
#include "kit/compare.h"
#include "kit/mla_decode_ref.h"
#include "tests/cuda/gpu_checks.h"

namespace {

using namespace mlasim;
using namespace mlasim::kit;

constexpr int kDV = kDecodeDv;

template <typename T>
class DevBuf {
 public:
  DevBuf() = default;
  explicit DevBuf(size_t n) : n_(n) {
    if (n > 0) MLASIM_CUDA_CHECK(cudaMalloc(&p_, n * sizeof(T)));
  }
  explicit DevBuf(const std::vector<T>& v) : DevBuf(v.size()) {
    if (!v.empty()) MLASIM_CUDA_CHECK(cudaMemcpy(p_, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  ~DevBuf() {
    if (p_) cudaFree(p_);
  }
  T* get() const { return p_; }
  std::vector<T> download() const {
    std::vector<T> v(n_);
    if (n_ > 0) MLASIM_CUDA_CHECK(cudaMemcpy(v.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost));
    return v;
  }

 private:
  T* p_ = nullptr;
  size_t n_ = 0;
};

int device_sm_count() {
  int dev = 0, sms = 0;
  MLASIM_CUDA_CHECK(cudaGetDevice(&dev));
  MLASIM_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return sms;
}

struct DecodeOutputs {
  std::vector<std::uint16_t> out;  // [b, s_q, H, 512] bf16 bits
  std::vector<float> lse;          // [b, H, s_q]
};

// The inputs of one case on the device; run() schedules (device pass, checked against the host twin)
// and runs the decode with a given number of parts.
class DeviceCase {
 public:
  DeviceCase(const DecodeCase& c, const DecodeInputs& in)
      : c_(c), in_(in), q_(in.q), cache_(in.cache), block_table_(in.block_table), seqlens_(c.seqlens) {}

  bool run(int num_sm_parts, DecodeOutputs* result, std::string* why) const {
    const int q_rows = c_.s_q * c_.num_heads;
    DevBuf<int> meta(static_cast<size_t>(num_sm_parts) * kMlaDecodeMetadataInts);
    DevBuf<int> splits(static_cast<size_t>(c_.batch) + 1);
    MlaDecodeMetadataParams mp;
    mp.cache_seqlens = seqlens_.get();
    mp.batch = c_.batch;
    mp.num_sm_parts = num_sm_parts;
    mp.tile_scheduler_metadata = meta.get();
    mp.num_splits = splits.get();
    mla_decode_get_metadata(mp);
    std::vector<int> host_meta(static_cast<size_t>(num_sm_parts) * kMlaDecodeMetadataInts);
    std::vector<int> host_splits(static_cast<size_t>(c_.batch) + 1);
    mla_decode_get_metadata_host(c_.seqlens.data(), c_.batch, num_sm_parts, host_meta.data(), host_splits.data());
    if (meta.download() != host_meta || splits.download() != host_splits) {
      *why = "device scheduling metadata differs from the host twin";
      return false;
    }

    DevBuf<std::uint16_t> out(static_cast<size_t>(c_.batch) * q_rows * kDV);
    DevBuf<float> lse(static_cast<size_t>(c_.batch) * q_rows);
    // Poison the outputs so a row the kernels forget to write shows up.
    MLASIM_CUDA_CHECK(cudaMemset(out.get(), 0xff, static_cast<size_t>(c_.batch) * q_rows * kDV * 2));
    MLASIM_CUDA_CHECK(cudaMemset(lse.get(), 0xff, static_cast<size_t>(c_.batch) * q_rows * 4));
    DevBuf<float> o_accum(mla_decode_o_accum_floats(c_.batch, q_rows, num_sm_parts));
    DevBuf<float> lse_accum(mla_decode_lse_accum_floats(c_.batch, q_rows, num_sm_parts));

    mla_decode_fwd({.batch = c_.batch,
                    .s_q = c_.s_q,
                    .num_heads = c_.num_heads,
                    .block_size = c_.block_size,
                    .max_blocks_per_seq = in_.max_blocks_per_seq,
                    .num_blocks = in_.num_blocks,
                    .softmax_scale = c_.scale,
                    .causal = c_.causal,
                    .q = q_.get(),
                    .kv_cache = cache_.get(),
                    .block_table = block_table_.get(),
                    .cache_seqlens = seqlens_.get(),
                    .out = out.get(),
                    .lse = lse.get(),
                    .num_sm_parts = num_sm_parts,
                    .tile_scheduler_metadata = meta.get(),
                    .num_splits = splits.get(),
                    .o_accum = o_accum.get(),
                    .lse_accum = lse_accum.get()});
    MLASIM_CUDA_CHECK(cudaDeviceSynchronize());
    result->out = out.download();
    result->lse = lse.download();
    return true;
  }

 private:
  const DecodeCase& c_;
  const DecodeInputs& in_;
  DevBuf<std::uint16_t> q_, cache_;
  DevBuf<int> block_table_, seqlens_;
};

struct Stats {
  int cases = 0, runs = 0;
  double worst_cos = 0, worst_abs = 0;
};

void check_outputs(const std::string& what, const DecodeOutputs& o, const DecodeReference& ref, Stats* st) {
  std::vector<float> out(o.out.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = bf16_value(o.out[i]);
  const auto co = kit::compare_values(out.data(), ref.out.data(), out.size(), kDecodeOutTol);
  const auto cl = kit::compare_values(o.lse.data(), ref.lse.data(), o.lse.size(), kDecodeLseTol);
  st->worst_cos = std::max(st->worst_cos, co.cos_diff);
  st->worst_abs = std::max(st->worst_abs, co.max_abs);
  ++st->runs;
  CHECK_COMPARE(what + " out", co, kDecodeOutTol);
  CHECK_COMPARE(what + " lse", cl, kDecodeLseTol);
}

// Runs a case with the device's natural part count, with 1 part (no split) and with 3 parts (uneven
// chunks); each run is compared with the reference and must be bitwise repeatable.
void check_case(const DecodeCase& c, Stats* st, bool repeat = true) {
  const DecodeInputs in = make_decode_inputs(c);
  const DecodeReference ref = decode_reference(c, in);
  DeviceCase dev(c, in);
  const int natural = mla_decode_num_sm_parts(device_sm_count(), c.s_q * c.num_heads);
  ++st->cases;
  for (int parts : {natural, 1, 3}) {
    DecodeOutputs o;
    std::string why;
    const std::string what = c.name() + " parts=" + std::to_string(parts);
    INFO(what);
    const bool ran = dev.run(parts, &o, &why);
    CHECK(why == "");
    if (!ran) continue;
    check_outputs(what, o, ref, st);
    if (repeat && parts == natural) {
      DecodeOutputs o2;
      dev.run(parts, &o2, &why);
      const bool second_run_bitwise_identical =
          o2.out == o.out && std::memcmp(o2.lse.data(), o.lse.data(), o.lse.size() * 4) == 0;
      CHECK(second_run_bitwise_identical);
    }
  }
}

void print_stats(const char* name, const Stats& st, double seconds) {
  std::printf("  %s: %d cases, %d runs, worst cos_diff %.2e, worst max_abs %.2e (%.1f s)\n", name, st.cases, st.runs,
              st.worst_cos, st.worst_abs, seconds);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The host scheduling pass: every token of every request is covered exactly once, chunks of a
// request are numbered 0..n−1 in token order, empty requests get one (empty) chunk, at most
// batch + parts − 1 splits, and every part's work is within payload.
TEST_CASE("mla_decode_schedule", "[gpu][forward-only]") {
  Rng rng(7);
  for (int batch : {1, 2, 5, 64, 128, 300})
    for (int parts : {1, 2, 3, 7, 66, 132})
      for (int trial = 0; trial < 4; ++trial) {
        std::vector<int> lens(static_cast<size_t>(batch));
        for (int& l : lens) l = trial == 0 ? 0 : (rng.below(3) == 0 ? 0 : rng.below(trial == 3 ? 40000 : 3000));
        std::vector<int> meta(static_cast<size_t>(parts) * kMlaDecodeMetadataInts), splits(static_cast<size_t>(batch) + 1);
        mla_decode_get_metadata_host(lens.data(), batch, parts, meta.data(), splits.data());
        std::vector<int> next_tok(static_cast<size_t>(batch), 0), next_split(static_cast<size_t>(batch), 0);
        std::string err;
        for (int p = 0; p < parts && err.empty(); ++p) {
          const int* m = meta.data() + p * kMlaDecodeMetadataInts;
          for (int req = m[0]; req <= m[2]; ++req) {
            const size_t r = static_cast<size_t>(req);
            const int beg = req == m[0] ? m[1] : 0, end = req == m[2] ? m[3] : lens[r];
            const int split = req == m[0] ? m[4] : 0;
            if (beg != next_tok[r] || split != next_split[r] || end < beg || end > lens[r] || beg % 64 != 0) {
              err = "part " + std::to_string(p) + " request " + std::to_string(req) + " chunk [" + std::to_string(beg) + ", " +
                    std::to_string(end) + ") split " + std::to_string(split) + " out of order";
              break;
            }
            next_tok[r] = end, ++next_split[r];
          }
        }
        for (int i = 0; i < batch && err.empty(); ++i) {
          const size_t r = static_cast<size_t>(i);
          if (next_tok[r] != lens[r] || next_split[r] != splits[r + 1] - splits[r] || next_split[r] < 1)
            err = "request " + std::to_string(i) + " covered to " + std::to_string(next_tok[r]) + " of " +
                  std::to_string(lens[r]) + " in " + std::to_string(next_split[r]) + " chunks, num_splits says " +
                  std::to_string(splits[r + 1] - splits[r]);
        }
        if (err.empty() && splits[static_cast<size_t>(batch)] > batch + parts - 1) err = "too many splits";
        INFO("batch=" << batch << " parts=" << parts << " trial=" << trial);
        CHECK(err == "");
      }
}

// FlashMLA's decode grid, trimmed so the double reference stays cheap: b·s_q·H·s_k ≤ 2^22 and
// b·s_k ≤ 2^15 (drops b = 64 at s_k = 4096, kept once below). Varlen alternates, block size 64 / 16.
TEST_CASE("mla_decode_grid", "[gpu][long]") {
  const auto t0 = std::chrono::steady_clock::now();
  Stats st;
  std::uint64_t seed = 100;
  int idx = 0;
  for (int batch : {1, 2, 6, 64})
    for (int s_q : {1, 2, 4})
      for (int s_k : {20, 140, 4096})
        for (int heads : {1, 3, 9, 16, 64, 128}) {
          const long long work = 1LL * batch * s_q * heads * s_k;
          if (work > (1LL << 22) || 1LL * batch * s_k > (1LL << 15)) continue;
          DecodeCase c;
          c.batch = batch, c.s_q = s_q, c.num_heads = heads, c.seed = ++seed;
          c.block_size = idx % 3 == 2 ? 16 : 64;
          Rng rng(seed * 31);
          c.seqlens = make_seqlens(batch, s_k, s_q, idx % 2 == 1, rng);
          ++idx;
          check_case(c, &st);
        }
  {  // the long-context large batch, few heads
    DecodeCase c;
    c.batch = 64, c.s_q = 2, c.num_heads = 3, c.seed = 99;
    Rng rng(99);
    c.seqlens = make_seqlens(64, 4096, 2, true, rng);
    check_case(c, &st, false);
  }
  print_stats("grid", st, seconds_since(t0));
}

// Full (non-causal) attention over the query block, s_q > 1.
TEST_CASE("mla_decode_noncausal", "[gpu]") {
  const auto t0 = std::chrono::steady_clock::now();
  Stats st;
  std::uint64_t seed = 500;
  for (int s_q : {2, 4})
    for (int heads : {3, 16, 128})
      for (int s_k : {20, 140, 1000}) {
        DecodeCase c;
        c.batch = 3, c.s_q = s_q, c.num_heads = heads, c.causal = false, c.seed = ++seed;
        Rng rng(seed);
        c.seqlens = make_seqlens(3, s_k, s_q, true, rng);
        check_case(c, &st);
      }
  print_stats("noncausal", st, seconds_since(t0));
}

// FlashMLA's corner case: b = 128 with about half the requests of length 0 (output 0, LSE +inf).
TEST_CASE("mla_decode_half_empty", "[gpu][long-reverse]") {
  const auto t0 = std::chrono::steady_clock::now();
  Stats st;
  for (int s_q : {1, 2})
    for (int heads : {16, 128}) {
      DecodeCase c;
      c.batch = 128, c.s_q = s_q, c.num_heads = heads, c.seed = 700u + static_cast<unsigned>(s_q * heads);
      Rng rng(c.seed);
      c.seqlens.resize(128);
      for (int& l : c.seqlens) l = rng.below(2) == 0 ? 0 : 1 + rng.below(heads == 128 ? 600 : 2500);
      check_case(c, &st);
    }
  print_stats("half_empty", st, seconds_since(t0));
}

// Lengths around tile and block edges and shorter than s_q (rows with no live key under the causal
// mask), in every block size: 1, 16, 32, 48 (not a power of two), 64, 128.
TEST_CASE("mla_decode_edges_and_block_sizes", "[gpu]") {
  const auto t0 = std::chrono::steady_clock::now();
  Stats st;
  std::uint64_t seed = 900;
  const std::vector<int> lens = {0, 1, 2, 3, 4, 5, 15, 16, 17, 63, 64, 65, 127, 128, 129, 191, 257, 514, 2743};
  for (int bs : {1, 16, 32, 48, 64, 128})
    for (int s_q : {1, 4})
      for (bool causal : {true, false}) {
        DecodeCase c;
        c.batch = static_cast<int>(lens.size()), c.s_q = s_q, c.num_heads = 9, c.block_size = bs, c.causal = causal;
        c.seed = ++seed;
        c.seqlens = lens;
        check_case(c, &st);
      }
  print_stats("edges", st, seconds_since(t0));
}

// One schedule serves several layers: the same metadata with different q / cache contents, and a
// different softmax scale.
TEST_CASE("mla_decode_metadata_reused_across_layers", "[gpu]") {
  DecodeCase c;
  c.batch = 6, c.s_q = 2, c.num_heads = 16, c.seed = 1234;
  Rng rng(5);
  c.seqlens = make_seqlens(6, 700, 2, true, rng);
  const int q_rows = c.s_q * c.num_heads, parts = mla_decode_num_sm_parts(device_sm_count(), q_rows);
  DevBuf<int> seqlens(c.seqlens), meta(static_cast<size_t>(parts) * kMlaDecodeMetadataInts), splits(7);
  MlaDecodeMetadataParams mp;
  mp.cache_seqlens = seqlens.get(), mp.batch = c.batch, mp.num_sm_parts = parts;
  mp.tile_scheduler_metadata = meta.get(), mp.num_splits = splits.get();
  mla_decode_get_metadata(mp);
  DevBuf<float> o_accum(mla_decode_o_accum_floats(c.batch, q_rows, parts));
  DevBuf<float> lse_accum(mla_decode_lse_accum_floats(c.batch, q_rows, parts));
  Stats st;
  for (int layer = 0; layer < 3; ++layer) {
    DecodeCase cl = c;
    cl.seed = c.seed + static_cast<unsigned>(layer);
    cl.scale = layer == 2 ? 0.0721688f : kV3Scale;
    const DecodeInputs in = make_decode_inputs(cl, 1 + layer, 1 + layer);
    const DecodeReference ref = decode_reference(cl, in);
    DevBuf<std::uint16_t> q(in.q), cache(in.cache), out(static_cast<size_t>(c.batch) * q_rows * kDV);
    DevBuf<int> bt(in.block_table);
    DevBuf<float> lse(static_cast<size_t>(c.batch) * q_rows);
    MlaDecodeParams p;
    p.batch = c.batch, p.s_q = c.s_q, p.num_heads = c.num_heads, p.block_size = c.block_size;
    p.max_blocks_per_seq = in.max_blocks_per_seq, p.num_blocks = in.num_blocks, p.softmax_scale = cl.scale;
    p.q = q.get(), p.kv_cache = cache.get(), p.block_table = bt.get(), p.cache_seqlens = seqlens.get();
    p.out = out.get(), p.lse = lse.get(), p.num_sm_parts = parts;
    p.tile_scheduler_metadata = meta.get(), p.num_splits = splits.get();
    p.o_accum = o_accum.get(), p.lse_accum = lse_accum.get();
    mla_decode_fwd(p);
    MLASIM_CUDA_CHECK(cudaDeviceSynchronize());
    DecodeOutputs o{out.download(), lse.download()};
    check_outputs("layer " + std::to_string(layer), o, ref, &st);
  }
}

}  // namespace
