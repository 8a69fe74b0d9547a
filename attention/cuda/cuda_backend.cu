// CudaBackend::run_step: plan the step on the host (rows per form, RoPE angles, slots, decode
// tokens, context chunks, sampled tokens), upload it to every rank, then per layer: the ranks'
// attention partials (o_proj columns), all-reduce, residual; the ranks' MLP partials (down_proj
// columns), all-reduce, residual; finally the logits of the sampled tokens on rank 0.
//
// Precision: the residual stream h and every GEMM output that feeds a norm, RoPE or a residual are
// fp32; GEMM inputs, q, the latents, the cache and the attention inputs/outputs are bf16; GEMMs
// and kernels accumulate in fp32 (spec/mla.md §5's "bf16 storage, fp32 accumulation").
//
// Decode form, per token: query token i of a decode-path row with q tokens and seq_len s is its own
// batch entry of mla_decode with s_q = 1 and cache_seqlens = s − q + i + 1 over the row's block
// table — the bottom-right causal mask without requiring uniform query lengths.
#include "attention/cuda/cuda_backend.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "attention/attention_metadata.h"
#include "attention/cuda/cache_write.h"
#include "attention/cuda/communicator.h"
#include "attention/cuda/cublas_gemm.h"
#include "attention/cuda/cuda_check.h"
#include "attention/cuda/device_query.h"
#include "attention/cuda/device_weights.h"
#include "attention/cuda/elementwise.h"
#include "attention/cuda/merge_attn_states.h"
#include "attention/cuda/mla_decode.h"
#include "attention/cuda/mla_prefill.h"
#include "attention/mla_attention_cpu.h"
#include "attention/mla_dims.h"
#include "attention/rope.h"
#include "attention/tp_shard.h"
#include "sim/check.h"

namespace mlasim {
namespace {

using u16 = std::uint16_t;
constexpr int kRkv = 512, kDr = 64, kDn = 128, kDv = 128, kL = kRkv + kDr, kDqk = kDn + kDr, kDkv = kDn + kDv;
static_assert(kL == kMlaDecodeKDim && kRkv == kMlaDecodeVDim && kDqk == kMlaPrefillDqk && kDv == kMlaPrefillDv);

int visible_devices(const CudaBackendOptions& o) {
  const int count = cuda_usable_device_count();
  return o.max_devices > 0 ? std::min(count, o.max_devices) : count;
}

std::vector<int> devices_for(const CudaBackendOptions& o) {
  const int count = visible_devices(o);
  std::vector<int> d;
  for (int r = 0; r < o.tensor_parallel_size; ++r) d.push_back(count > 0 ? r % count : 0);
  return d;
}

// The step as the kernels need it, built on the host once and uploaded to every rank.
struct StepPlan {
  int n = 0;            // tokens
  int ndec = 0;         // rows [0, ndec) through the decode form
  int n_mqa = 0;        // their tokens [0, n_mqa)
  int n_pre = 0;        // tokens [n_mqa, n) through the prefill form
  int np_rows = 0;      // rows [ndec, num_reqs)
  int max_q = 0;        // longest prefill-form query
  int max_blocks = 1;   // decode block-table width
  int num_samples = 0;  // logit rows
  std::vector<int> ints;  // every int array below, packed
  std::size_t off_ids = 0, off_slots = 0, off_dec_seqlens = 0, off_dec_bt = 0, off_cu_q = 0, off_samples = 0;
  struct Round {  // the k-th context chunk of every prefill-form row (none: s_k = 0)
    std::size_t off_cu_k = 0, off_slots = 0;
    int total = 0, max_len = 0;
  };
  std::vector<Round> rounds;
  int max_round_total = 0;
  std::vector<float> rope;  // cos [n, d_r/2], then sin [n, d_r/2]

  std::size_t push(const std::vector<int>& v) {
    const std::size_t off = ints.size();
    ints.insert(ints.end(), v.begin(), v.end());
    ints.resize((ints.size() + 63) / 64 * 64, 0);  // keep every array 256-byte aligned
    return off;
  }
};

int slot_of(const std::vector<int>& blocks, int pos, int block_size, int num_blocks) {
  const std::size_t b = static_cast<std::size_t>(pos / block_size);
  MLASIM_CHECK(b < blocks.size(), "a context position past the row's block table");
  const int id = blocks[b];
  MLASIM_CHECK(id >= 0 && id < num_blocks, "a block id outside the cache");
  return id * block_size + pos % block_size;
}

StepPlan make_plan(const StepInputs& in, const ModelConfig& c, const std::vector<double>& inv_freq,
                   const CudaBackendOptions& o) {
  const AttentionMetadata& md = *in.metadata;
  StepPlan p;
  p.n = md.num_actual_tokens;
  const auto qsl = [&](int r) { return md.query_start_loc[static_cast<std::size_t>(r)]; };

  std::vector<std::vector<ContextChunk>> chunks;
  if (in.force_prefill_path) {
    p.ndec = 0;
    chunks = single_context_chunks(md, 0, md.num_reqs);
  } else {
    p.ndec = md.decode ? md.decode->num_rows : 0;
    if (md.prefill) {
      MLASIM_CHECK(md.prefill->row_start == p.ndec, "prefill rows must follow the decode rows");
      chunks = context_chunks_from_metadata(md);
    } else {
      MLASIM_CHECK(p.ndec == md.num_reqs, "rows on neither path");
    }
  }
  p.n_mqa = qsl(p.ndec);
  p.n_pre = p.n - p.n_mqa;
  p.np_rows = md.num_reqs - p.ndec;
  MLASIM_CHECK(static_cast<int>(chunks.size()) == p.np_rows, "one context chunk list per prefill-form row");

  // Token ids (range-checked here; the kernel traps as a last resort).
  std::vector<int> ids(in.token_ids.begin(), in.token_ids.end());
  for (int id : ids) MLASIM_CHECK(id >= 0 && id < c.vocab_size, "token id outside the vocabulary");
  p.off_ids = p.push(ids);

  // Slots; the decode_skips_cache_write_for_fresh_rows fault drops fresh decode-path rows' writes.
  std::vector<int> slots(md.slot_mapping.begin(), md.slot_mapping.end());
  if (o.faults.has(Fault::kDecodeSkipsCacheWriteForFreshRows))
    for (int r = 0; r < p.ndec; ++r)
      if (md.context_lens[static_cast<std::size_t>(r)] == 0)
        for (int t = qsl(r); t < qsl(r + 1); ++t) slots[static_cast<std::size_t>(t)] = -1;
  for (int s : slots) MLASIM_CHECK(s < o.num_blocks * o.block_size, "a slot outside the cache");
  p.off_slots = p.push(slots);

  // Decode tokens: one s_q = 1 entry each.
  std::vector<int> dec_seqlens;
  for (int r = 0; r < p.ndec; ++r) {
    const int nq = qsl(r + 1) - qsl(r), s = md.seq_lens[static_cast<std::size_t>(r)];
    for (int i = 0; i < nq; ++i) dec_seqlens.push_back(s - nq + i + 1);
    p.max_blocks = std::max(p.max_blocks, (s + o.block_size - 1) / o.block_size);
  }
  std::vector<int> dec_bt(static_cast<std::size_t>(p.n_mqa) * static_cast<std::size_t>(p.max_blocks), 0);
  for (int r = 0; r < p.ndec; ++r) {
    const std::vector<int>& blocks = md.block_table[static_cast<std::size_t>(r)];
    const int used = (md.seq_lens[static_cast<std::size_t>(r)] + o.block_size - 1) / o.block_size;
    MLASIM_CHECK(used <= static_cast<int>(blocks.size()), "a decode row's block table is shorter than its sequence");
    for (int b = 0; b < used; ++b)
      MLASIM_CHECK(blocks[static_cast<std::size_t>(b)] >= 0 && blocks[static_cast<std::size_t>(b)] < o.num_blocks,
                   "a block id outside the cache");
    for (int t = qsl(r); t < qsl(r + 1); ++t)
      std::copy_n(blocks.begin(), used, dec_bt.begin() + static_cast<long>(static_cast<std::size_t>(t) * p.max_blocks));
  }
  p.off_dec_seqlens = p.push(dec_seqlens);
  p.off_dec_bt = p.push(dec_bt);

  // Prefill-form rows: query offsets relative to n_mqa, and the context rounds.
  std::vector<int> cu_q{0};
  std::size_t num_rounds = 0;
  for (int k = 0; k < p.np_rows; ++k) {
    const int r = p.ndec + k, q = qsl(r + 1) - qsl(r);
    cu_q.push_back(cu_q.back() + q);
    p.max_q = std::max(p.max_q, q);
    num_rounds = std::max(num_rounds, chunks[static_cast<std::size_t>(k)].size());
  }
  p.off_cu_q = p.push(cu_q);
  for (std::size_t round = 0; round < num_rounds; ++round) {
    std::vector<int> cu_k{0}, ctx_slots;
    StepPlan::Round rd;
    for (int k = 0; k < p.np_rows; ++k) {
      const std::vector<ContextChunk>& list = chunks[static_cast<std::size_t>(k)];
      const ContextChunk ch = round < list.size() ? list[round] : ContextChunk{};
      const std::vector<int>& blocks = md.block_table[static_cast<std::size_t>(p.ndec + k)];
      for (int j = 0; j < ch.len; ++j) ctx_slots.push_back(slot_of(blocks, ch.start + j, o.block_size, o.num_blocks));
      cu_k.push_back(cu_k.back() + std::max(ch.len, 0));
      rd.max_len = std::max(rd.max_len, ch.len);
    }
    rd.total = cu_k.back();
    rd.off_cu_k = p.push(cu_k);
    rd.off_slots = p.push(ctx_slots);
    p.max_round_total = std::max(p.max_round_total, rd.total);
    p.rounds.push_back(rd);
  }

  // Sampled tokens: each sample row's last k tokens, in position order.
  std::vector<int> samples;
  for (std::size_t i = 0; i < in.sample_rows.size(); ++i) {
    const int r = in.sample_rows[i], k = in.num_sample_tokens[i];
    MLASIM_CHECK(r >= 0 && r < md.num_reqs, "sample row outside the batch");
    MLASIM_CHECK(k >= 1 && k <= qsl(r + 1) - qsl(r), "more sampled tokens than scheduled");
    for (int t = qsl(r + 1) - k; t < qsl(r + 1); ++t) samples.push_back(t);
  }
  p.num_samples = static_cast<int>(samples.size());
  p.off_samples = p.push(samples);

  // RoPE angles in double, stored as fp32.
  const int half = c.qk_rope_head_dim / 2;
  p.rope.assign(static_cast<std::size_t>(p.n) * half * 2, 0.f);
  for (int t = 0; t < p.n; ++t) {
    const RopeAngles a = rope_angles(inv_freq, md.positions[static_cast<std::size_t>(t)]);
    for (int i = 0; i < half; ++i) {
      p.rope[static_cast<std::size_t>(t) * half + i] = static_cast<float>(a.cos[static_cast<std::size_t>(i)]);
      p.rope[(static_cast<std::size_t>(p.n) + t) * half + i] = static_cast<float>(a.sin[static_cast<std::size_t>(i)]);
    }
  }
  return p;
}

// One tensor-parallel rank: its device, stream, cuBLAS handle, weights, caches and step buffers.
struct Rank {
  int rank = 0, device = 0, num_sms = 1;
  cudaStream_t stream = nullptr;
  std::unique_ptr<CublasGemm> gemm;
  std::unique_ptr<DeviceWeights> w;
  std::vector<DeviceBuffer> caches;  // per layer [num_blocks, block_size, 576] bf16
  // Step buffers (grown on demand between steps).
  DeviceBuffer ints, rope, h, partial, x_bf, cq, cq_bf, lat, lat_bf, q, q_bf, attn;
  DeviceBuffer qlat, olat, lse_dec, o_accum, lse_accum, tile_md, num_splits;
  DeviceBuffer kvb, kbuf, o_new, lse_new, o_ctx, lse_ctx, o_chunk, lse_chunk, ctx_lat;
  DeviceBuffer g, u, a_bf, hs, xs_bf, logits;
  int num_sm_parts = 1;

  const int* ip(std::size_t off) const { return ints.as<const int>() + off; }
  void* s() const { return stream; }
};

}  // namespace

bool cuda_backend_supports_fault(Fault f) { return f != Fault::kChunkLseMergeWrong; }

std::string cuda_backend_support_error(const ModelConfig& c, const CudaBackendOptions& o) {
  std::string why;
  if (cuda_usable_device_count(&why) == 0) return "no usable CUDA device (" + why + ")";
  if (c.kv_lora_rank != kRkv || c.qk_rope_head_dim != kDr || c.qk_nope_head_dim != kDn || c.v_head_dim != kDv)
    return "the CUDA kernels need kv_lora_rank 512, qk_rope_head_dim 64, qk_nope_head_dim 128 and v_head_dim 128";
  if (std::string err = tp_support_error(c, o.tensor_parallel_size); !err.empty()) return err;
  if (o.num_blocks <= 0 || o.block_size <= 0) return "the CUDA backend needs num_blocks > 0 and block_size > 0";
  for (Fault f : o.faults.list())
    if (!cuda_backend_supports_fault(f))
      return std::string("the CUDA backend does not model the fault ") + to_string(f) + " (CPU backend only)";
  if (std::string err = communicator_support_error(devices_for(o)); !err.empty()) return err;
  return "";
}

struct CudaBackend::Impl {
  ModelConfig config;
  CudaBackendOptions options;
  std::vector<double> inv_freq;
  float scale = 0.f;
  std::vector<Rank> ranks;
  std::unique_ptr<Communicator> comm;
  std::vector<float> host_logits;

  void prepare(Rank& rk, const StepPlan& p);
  void attention(Rank& rk, int layer, const StepPlan& p);
  void mlp(Rank& rk, int layer, const StepPlan& p);
  void all_reduce_and_add(const StepPlan& p);
};

CudaBackend::CudaBackend(const MlaWeights& weights, const CudaBackendOptions& options) : impl_(std::make_unique<Impl>()) {
  const std::string err = cuda_backend_support_error(weights.config, options);
  MLASIM_CHECK(err.empty(), "CudaBackend: " + err);
  Impl& m = *impl_;
  m.config = weights.config;
  m.options = options;
  m.inv_freq = yarn_inv_freq(weights.config);
  m.scale = static_cast<float>(softmax_scale(weights.config));
  const std::vector<int> devices = devices_for(options);
  const std::size_t cache_bytes =
      static_cast<std::size_t>(options.num_blocks) * static_cast<std::size_t>(options.block_size) * kL * sizeof(u16);
  m.ranks.resize(devices.size());
  std::vector<void*> streams;
  for (std::size_t r = 0; r < devices.size(); ++r) {
    Rank& rk = m.ranks[r];
    rk.rank = static_cast<int>(r);
    rk.device = devices[r];
    MLASIM_CUDA_CHECK(cudaSetDevice(rk.device));
    MLASIM_CUDA_CHECK(cudaDeviceGetAttribute(&rk.num_sms, cudaDevAttrMultiProcessorCount, rk.device));
    MLASIM_CUDA_CHECK(cudaStreamCreateWithFlags(&rk.stream, cudaStreamNonBlocking));
    rk.gemm = std::make_unique<CublasGemm>(rk.device, rk.stream);
    rk.w = std::make_unique<DeviceWeights>(weights, tp_shard(weights.config, options.tensor_parallel_size, rk.rank),
                                           rk.device, /*with_lm_head=*/r == 0);
    for (int l = 0; l < weights.config.num_hidden_layers; ++l) {
      DeviceBuffer& cache = rk.caches.emplace_back(rk.device, cache_bytes);
      cache.zero();
    }
    streams.push_back(rk.stream);
  }
  for (const Rank& rk : m.ranks) {  // uploads and memsets ran on the legacy stream: finish them
    MLASIM_CUDA_CHECK(cudaSetDevice(rk.device));
    MLASIM_CUDA_CHECK(cudaDeviceSynchronize());
  }
  m.comm = std::make_unique<Communicator>(devices, streams);
}

CudaBackend::~CudaBackend() {
  if (!impl_) return;
  for (Rank& rk : impl_->ranks) {
    cudaSetDevice(rk.device);
    cudaStreamSynchronize(rk.stream);
  }
  impl_->comm.reset();
  for (Rank& rk : impl_->ranks) {
    rk.gemm.reset();
    cudaSetDevice(rk.device);
    cudaStreamDestroy(rk.stream);
  }
}

std::string CudaBackend::name() const {
  std::string s = "cuda";
  if (impl_->options.tensor_parallel_size > 1) s += " tp=" + std::to_string(impl_->options.tensor_parallel_size);
  if (!impl_->options.faults.empty()) s += " faults=" + impl_->options.faults.to_string();
  return s;
}

const CudaBackendOptions& CudaBackend::options() const { return impl_->options; }

std::vector<int> CudaBackend::rank_devices() const {
  std::vector<int> d;
  for (const Rank& rk : impl_->ranks) d.push_back(rk.device);
  return d;
}

std::string CudaBackend::communicator_mode() const { return impl_->comm->mode(); }

// Sizes the step buffers, uploads the plan, embeds the tokens and runs the decode scheduling pass.
void CudaBackend::Impl::prepare(Rank& rk, const StepPlan& p) {
  const ModelConfig& c = config;
  const std::size_t n = static_cast<std::size_t>(p.n), d = static_cast<std::size_t>(c.hidden_size);
  const std::size_t nh = static_cast<std::size_t>(rk.w->num_local_heads()), m = static_cast<std::size_t>(rk.w->mlp_width());
  const std::size_t rq = static_cast<std::size_t>(std::max(c.q_lora_rank, 1));
  const std::size_t n_mqa = static_cast<std::size_t>(p.n_mqa), n_pre = static_cast<std::size_t>(p.n_pre);
  const std::size_t n_kv = std::max(n_pre, static_cast<std::size_t>(p.max_round_total));
  const std::size_t ns = static_cast<std::size_t>(p.num_samples), V = static_cast<std::size_t>(c.vocab_size);
  const int dev = rk.device;
  const std::size_t F = sizeof(float), B = sizeof(u16);
  rk.ints.reserve(dev, p.ints.size() * sizeof(int));
  rk.rope.reserve(dev, p.rope.size() * F);
  rk.h.reserve(dev, n * d * F);
  rk.partial.reserve(dev, n * d * F);
  rk.x_bf.reserve(dev, n * d * B);
  if (c.q_lora_rank > 0) {
    rk.cq.reserve(dev, n * rq * F);
    rk.cq_bf.reserve(dev, n * rq * B);
  }
  rk.lat.reserve(dev, n * kL * F);
  rk.lat_bf.reserve(dev, n * kL * B);
  rk.q.reserve(dev, n * nh * kDqk * F);
  rk.q_bf.reserve(dev, n * nh * kDqk * B);
  rk.attn.reserve(dev, n * nh * kDv * B);
  if (n_mqa > 0) {
    rk.num_sm_parts = mla_decode_num_sm_parts(rk.num_sms, static_cast<int>(nh));
    rk.qlat.reserve(dev, n_mqa * nh * kL * B);
    rk.olat.reserve(dev, n_mqa * nh * kRkv * B);
    rk.lse_dec.reserve(dev, n_mqa * nh * F);
    rk.o_accum.reserve(dev, mla_decode_o_accum_floats(p.n_mqa, static_cast<int>(nh), rk.num_sm_parts) * F);
    rk.lse_accum.reserve(dev, mla_decode_lse_accum_floats(p.n_mqa, static_cast<int>(nh), rk.num_sm_parts) * F);
    rk.tile_md.reserve(dev, static_cast<std::size_t>(rk.num_sm_parts) * kMlaDecodeMetadataInts * sizeof(int));
    rk.num_splits.reserve(dev, (n_mqa + 1) * sizeof(int));
  }
  if (n_pre > 0) {
    rk.kvb.reserve(dev, n_kv * nh * kDkv * B);
    rk.kbuf.reserve(dev, n_kv * nh * kDqk * B);
    rk.o_new.reserve(dev, n_pre * nh * kDv * B);
    rk.lse_new.reserve(dev, n_pre * nh * F);
    if (!p.rounds.empty()) {
      rk.o_ctx.reserve(dev, n_pre * nh * kDv * B);
      rk.lse_ctx.reserve(dev, n_pre * nh * F);
      rk.o_chunk.reserve(dev, n_pre * nh * kDv * B);
      rk.lse_chunk.reserve(dev, n_pre * nh * F);
      rk.ctx_lat.reserve(dev, static_cast<std::size_t>(p.max_round_total) * kL * B);
    }
  }
  rk.g.reserve(dev, n * m * F);
  rk.u.reserve(dev, n * m * F);
  rk.a_bf.reserve(dev, n * m * B);
  if (rk.rank == 0 && ns > 0) {
    rk.hs.reserve(dev, ns * d * F);
    rk.xs_bf.reserve(dev, ns * d * B);
    rk.logits.reserve(dev, ns * V * F);
  }

  MLASIM_CUDA_CHECK(cudaSetDevice(dev));
  MLASIM_CUDA_CHECK(cudaMemcpyAsync(rk.ints.get(), p.ints.data(), p.ints.size() * sizeof(int), cudaMemcpyHostToDevice, rk.stream));
  MLASIM_CUDA_CHECK(cudaMemcpyAsync(rk.rope.get(), p.rope.data(), p.rope.size() * F, cudaMemcpyHostToDevice, rk.stream));
  embedding_gather(rk.ip(p.off_ids), p.n, rk.w->embed_tokens(), c.vocab_size, c.hidden_size, rk.h.as<float>(), rk.s());
  if (n_mqa > 0) {
    MlaDecodeMetadataParams mp;
    mp.cache_seqlens = rk.ip(p.off_dec_seqlens);
    mp.batch = p.n_mqa;
    mp.num_sm_parts = rk.num_sm_parts;
    mp.tile_scheduler_metadata = rk.tile_md.as<int>();
    mp.num_splits = rk.num_splits.as<int>();
    mp.stream = rk.stream;
    mla_decode_get_metadata(mp);
  }
}

// The rank's attention partial: partial [n, d] = o_proj columns of its heads · o (fp32).
void CudaBackend::Impl::attention(Rank& rk, int layer, const StepPlan& p) {
  const ModelConfig& c = config;
  const DeviceLayerWeights& w = rk.w->layer(layer);
  const int n = p.n, d = c.hidden_size, nh = rk.w->num_local_heads(), rq = c.q_lora_rank;
  const float eps = static_cast<float>(c.rms_norm_eps);
  const bool neox = options.faults.has(Fault::kRopeNeoxInsteadOfInterleaved);
  const int half = kDr / 2;
  const float* cosv = rk.rope.as<const float>();
  const float* sinv = cosv + static_cast<std::size_t>(n) * half;
  MLASIM_CUDA_CHECK(cudaSetDevice(rk.device));

  // x = RMSNorm(h) (bf16), q (fp32 -> RoPE -> bf16), [c_kv | k_pe] (fp32 -> norm, RoPE -> bf16).
  RmsNormParams norm;
  norm.x = rk.h.as<const float>();
  norm.w = w.input_layernorm;
  norm.rows = n;
  norm.cols = d;
  norm.eps = eps;
  norm.y = rk.x_bf.get();
  norm.y_type = ElemType::kBf16;
  rms_norm(norm, rk.s());
  LinearParams lp;
  lp.rows = n;
  if (rq == 0) {
    lp.out = nh * kDqk, lp.in = d, lp.x = rk.x_bf.get(), lp.w = w.q_proj, lp.y = rk.q.get();
    rk.gemm->linear(lp);
  } else {
    lp.out = rq, lp.in = d, lp.x = rk.x_bf.get(), lp.w = w.q_a_proj, lp.y = rk.cq.get();
    rk.gemm->linear(lp);
    RmsNormParams qn;
    qn.x = rk.cq.as<const float>();
    qn.w = w.q_a_layernorm;
    qn.rows = n;
    qn.cols = rq;
    qn.eps = eps;
    qn.y = rk.cq_bf.get();
    qn.y_type = ElemType::kBf16;
    rms_norm(qn, rk.s());
    LinearParams qb;
    qb.rows = n, qb.out = nh * kDqk, qb.in = rq, qb.x = rk.cq_bf.get(), qb.w = w.q_b_proj, qb.y = rk.q.get();
    rk.gemm->linear(qb);
  }
  RopeParams qr;
  qr.x = rk.q.as<float>();
  qr.row_stride = static_cast<long long>(nh) * kDqk;
  qr.head_stride = kDqk;
  qr.offset = kDn;
  qr.rows = n;
  qr.heads = nh;
  qr.rope_dim = kDr;
  qr.cos = cosv;
  qr.sin = sinv;
  qr.neox = neox;
  apply_rope(qr, rk.s());
  f32_to_bf16(rk.q.as<const float>(), rk.q_bf.as<u16>(), static_cast<long long>(n) * nh * kDqk, rk.s());

  LinearParams kva;
  kva.rows = n, kva.out = kL, kva.in = d, kva.x = rk.x_bf.get(), kva.w = w.kv_a_proj_with_mqa, kva.y = rk.lat.get();
  rk.gemm->linear(kva);
  if (!options.faults.has(Fault::kKvNormDropped)) {
    RmsNormParams kn;
    kn.x = rk.lat.as<const float>();
    kn.ldx = kL;
    kn.w = w.kv_a_layernorm;
    kn.rows = n;
    kn.cols = kRkv;
    kn.eps = eps;
    kn.y = rk.lat.get();
    kn.ldy = kL;
    kn.y_type = ElemType::kF32;
    rms_norm(kn, rk.s());
  }
  RopeParams kr = qr;
  kr.x = rk.lat.as<float>();
  kr.row_stride = kL;
  kr.head_stride = 0;
  kr.offset = kRkv;
  kr.heads = 1;
  apply_rope(kr, rk.s());
  f32_to_bf16(rk.lat.as<const float>(), rk.lat_bf.as<u16>(), static_cast<long long>(n) * kL, rk.s());

  // The cache write comes first, for every token (slot -1: skipped).
  void* cache = rk.caches[static_cast<std::size_t>(layer)].get();
  CacheWriteParams cw;
  cw.num_tokens = n;
  cw.kv_lora_rank = kRkv;
  cw.rope_dim = kDr;
  cw.num_slots = options.num_blocks * options.block_size;
  cw.kv_c = rk.lat_bf.get();
  cw.kv_c_stride = kL;
  cw.k_pe = rk.lat_bf.as<u16>() + kRkv;
  cw.k_pe_stride = kL;
  cw.slot_mapping = rk.ip(p.off_slots);
  cw.kv_cache = cache;
  cw.stream = rk.stream;
  cache_write(cw);

  const std::size_t attn_row = static_cast<std::size_t>(nh) * kDv;
  // Decode form: q_lat_h = W_UK_h^T q_nope_h (batched over heads), mla_decode, o_h = W_UV_h ô_h.
  if (p.n_mqa > 0) {
    LinearParams uk;
    uk.rows = p.n_mqa, uk.out = kRkv, uk.in = kDn;
    uk.x = rk.q_bf.get(), uk.ldx = static_cast<long long>(nh) * kDqk, uk.stride_x = kDqk;
    uk.w = w.kv_b_proj, uk.stride_w = static_cast<long long>(kDkv) * kRkv;
    if (options.faults.has(Fault::kWUkTransposed)) {
      uk.w_in_out = false, uk.ldw = kDn;  // the d_n x r_kv block read as r_kv x d_n
    } else {
      uk.w_in_out = true, uk.ldw = kRkv;  // W_UK_h is [d_n, r_kv]: y = x · W_UK_h
    }
    uk.y = rk.qlat.get(), uk.ldy = static_cast<long long>(nh) * kL, uk.stride_y = kL, uk.y_type = GemmOut::kBf16;
    uk.batch = nh;
    rk.gemm->linear(uk);
    concat_q_pe_for_decode(rk.q_bf.as<const u16>(), p.n_mqa, nh, kDn, kDr, kRkv, rk.qlat.as<u16>(), rk.s());

    MlaDecodeParams dp;
    dp.batch = p.n_mqa;
    dp.s_q = 1;
    dp.num_heads = nh;
    dp.block_size = options.block_size;
    dp.max_blocks_per_seq = p.max_blocks;
    dp.num_blocks = options.num_blocks;
    dp.softmax_scale = options.faults.has(Fault::kDecodeScale1OverSqrt576) ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(kL)))
                                                                          : scale;
    dp.causal = true;
    dp.q = rk.qlat.get();
    dp.kv_cache = cache;
    dp.block_table = rk.ip(p.off_dec_bt);
    dp.cache_seqlens = rk.ip(p.off_dec_seqlens);
    dp.out = rk.olat.get();
    dp.lse = rk.lse_dec.as<float>();
    dp.num_sm_parts = rk.num_sm_parts;
    dp.tile_scheduler_metadata = rk.tile_md.as<const int>();
    dp.num_splits = rk.num_splits.as<const int>();
    dp.o_accum = rk.o_accum.as<float>();
    dp.lse_accum = rk.lse_accum.as<float>();
    dp.stream = rk.stream;
    mla_decode_fwd(dp);

    LinearParams uv;
    uv.rows = p.n_mqa, uv.out = kDv, uv.in = kRkv;
    uv.x = rk.olat.get(), uv.ldx = static_cast<long long>(nh) * kRkv, uv.stride_x = kRkv;
    uv.w = w.kv_b_proj + static_cast<std::size_t>(kDn) * kRkv, uv.ldw = kRkv, uv.stride_w = static_cast<long long>(kDkv) * kRkv;
    uv.y = rk.attn.get(), uv.ldy = static_cast<long long>(attn_row), uv.stride_y = kDv, uv.y_type = GemmOut::kBf16;
    uv.batch = nh;
    rk.gemm->linear(uv);
  }

  // Prefill form: new tokens causal, context rounds non-causal, merged by LSE.
  if (p.n_pre > 0) {
    const u16* lat_new = rk.lat_bf.as<const u16>() + static_cast<std::size_t>(p.n_mqa) * kL;
    u16* out_rows = rk.attn.as<u16>() + static_cast<std::size_t>(p.n_mqa) * attn_row;
    const bool has_ctx = !p.rounds.empty();
    // Up-projects `rows` latents (row stride 576) into kvb [rows, nh, 256] and k [rows, nh, 192].
    auto up_project = [&](const u16* latent, int rows) {
      LinearParams kb;
      kb.rows = rows, kb.out = nh * kDkv, kb.in = kRkv, kb.x = latent, kb.ldx = kL, kb.w = w.kv_b_proj;
      kb.y = rk.kvb.get(), kb.y_type = GemmOut::kBf16;
      rk.gemm->linear(kb);
      concat_k_for_prefill(rk.kvb.as<const u16>(), latent, rows, nh, kDn, kDv, kDr, kRkv, rk.kbuf.as<u16>(), rk.s());
    };
    MlaPrefillParams pp;
    pp.q = rk.q_bf.as<const u16>() + static_cast<std::size_t>(p.n_mqa) * nh * kDqk;
    pp.k = rk.kbuf.get();
    pp.v = rk.kvb.as<const u16>() + kDn;
    pp.v_row_stride = static_cast<long long>(nh) * kDkv;
    pp.v_head_stride = kDkv;
    pp.cu_seqlens_q = rk.ip(p.off_cu_q);
    pp.batch = p.np_rows;
    pp.num_heads = nh;
    pp.total_q = p.n_pre;
    pp.max_seqlen_q = p.max_q;
    pp.softmax_scale = scale;

    up_project(lat_new, p.n_pre);
    MlaPrefillParams pn = pp;
    pn.cu_seqlens_k = rk.ip(p.off_cu_q);
    pn.max_seqlen_k = p.max_q;
    pn.causal = true;
    pn.out = has_ctx ? rk.o_new.get() : static_cast<void*>(out_rows);
    pn.out_row_stride = static_cast<long long>(attn_row);
    pn.lse = rk.lse_new.as<float>();
    mla_prefill_launch(pn, rk.s());

    for (std::size_t k = 0; k < p.rounds.size(); ++k) {
      const StepPlan::Round& rd = p.rounds[k];
      gather_rows(cache, kL, rk.ip(rd.off_slots), rd.total, kL, 2, rk.ctx_lat.get(), kL, rk.s());
      up_project(rk.ctx_lat.as<const u16>(), rd.total);
      MlaPrefillParams pc = pp;
      pc.cu_seqlens_k = rk.ip(rd.off_cu_k);
      pc.max_seqlen_k = rd.max_len;
      pc.causal = false;
      pc.out = k == 0 ? rk.o_ctx.get() : rk.o_chunk.get();
      pc.lse = k == 0 ? rk.lse_ctx.as<float>() : rk.lse_chunk.as<float>();
      mla_prefill_launch(pc, rk.s());
      if (k > 0) {  // o_ctx <- merge(o_ctx, o_chunk), in place
        MergeAttnStatesParams mp;
        mp.out = rk.o_ctx.get();
        mp.out_lse = rk.lse_ctx.as<float>();
        mp.prefix_out = rk.o_ctx.get();
        mp.prefix_lse = rk.lse_ctx.as<const float>();
        mp.suffix_out = rk.o_chunk.get();
        mp.suffix_lse = rk.lse_chunk.as<const float>();
        mp.num_tokens = p.n_pre;
        mp.num_heads = nh;
        mp.head_size = kDv;
        merge_attn_states_launch(mp, rk.s());
      }
    }
    if (has_ctx) {  // o = merge(context, new tokens)
      MergeAttnStatesParams mp;
      mp.out = out_rows;
      mp.out_row_stride = static_cast<long long>(attn_row);
      mp.prefix_out = rk.o_ctx.get();
      mp.prefix_lse = rk.lse_ctx.as<const float>();
      mp.suffix_out = rk.o_new.get();
      mp.suffix_lse = rk.lse_new.as<const float>();
      mp.num_tokens = p.n_pre;
      mp.num_heads = nh;
      mp.head_size = kDv;
      merge_attn_states_launch(mp, rk.s());
    }
  }

  LinearParams op;
  op.rows = n, op.out = d, op.in = nh * kDv, op.x = rk.attn.get(), op.w = w.o_proj, op.y = rk.partial.get();
  rk.gemm->linear(op);
}

// The rank's MLP partial: partial [n, d] = down_proj columns · SwiGLU of its gate/up rows (fp32).
void CudaBackend::Impl::mlp(Rank& rk, int layer, const StepPlan& p) {
  const ModelConfig& c = config;
  const DeviceLayerWeights& w = rk.w->layer(layer);
  const int n = p.n, d = c.hidden_size, m = rk.w->mlp_width();
  MLASIM_CUDA_CHECK(cudaSetDevice(rk.device));
  RmsNormParams norm;
  norm.x = rk.h.as<const float>();
  norm.w = w.post_attention_layernorm;
  norm.rows = n;
  norm.cols = d;
  norm.eps = static_cast<float>(c.rms_norm_eps);
  norm.y = rk.x_bf.get();
  norm.y_type = ElemType::kBf16;
  rms_norm(norm, rk.s());
  LinearParams gp;
  gp.rows = n, gp.out = m, gp.in = d, gp.x = rk.x_bf.get(), gp.w = w.gate_proj, gp.y = rk.g.get();
  rk.gemm->linear(gp);
  LinearParams up = gp;
  up.w = w.up_proj, up.y = rk.u.get();
  rk.gemm->linear(up);
  swiglu_to_bf16(rk.g.as<const float>(), 0, rk.u.as<const float>(), 0, n, m, rk.a_bf.as<u16>(), 0, rk.s());
  LinearParams dp;
  dp.rows = n, dp.out = d, dp.in = m, dp.x = rk.a_bf.get(), dp.w = w.down_proj, dp.y = rk.partial.get();
  rk.gemm->linear(dp);
}

// Sum the ranks' partials (every rank gets the sum), then h += sum on every rank.
void CudaBackend::Impl::all_reduce_and_add(const StepPlan& p) {
  const std::size_t count = static_cast<std::size_t>(p.n) * static_cast<std::size_t>(config.hidden_size);
  std::vector<float*> bufs;
  for (Rank& rk : ranks) bufs.push_back(rk.partial.as<float>());
  comm->all_reduce_sum(bufs, count);
  for (Rank& rk : ranks) {
    MLASIM_CUDA_CHECK(cudaSetDevice(rk.device));
    add_inplace(rk.h.as<float>(), rk.partial.as<const float>(), static_cast<long long>(count), rk.s());
  }
}

StepOutputs CudaBackend::run_step(const StepInputs& in) {
  Impl& m = *impl_;
  MLASIM_CHECK(in.metadata != nullptr, "StepInputs without metadata");
  const AttentionMetadata& md = *in.metadata;
  MLASIM_CHECK(static_cast<int>(in.token_ids.size()) == md.num_actual_tokens, "one token id per scheduled token");
  MLASIM_CHECK(md.block_size == m.options.block_size, "metadata block size differs from the cache's");
  MLASIM_CHECK(in.sample_rows.size() == in.num_sample_tokens.size(), "num_sample_tokens per sample row");
  const StepPlan plan = make_plan(in, m.config, m.inv_freq, m.options);
  StepOutputs out;
  out.vocab_size = m.config.vocab_size;
  if (plan.n == 0) return out;

  for (Rank& rk : m.ranks) m.prepare(rk, plan);
  for (int l = 0; l < m.config.num_hidden_layers; ++l) {
    for (Rank& rk : m.ranks) m.attention(rk, l, plan);
    m.all_reduce_and_add(plan);
    for (Rank& rk : m.ranks) m.mlp(rk, l, plan);
    m.all_reduce_and_add(plan);
  }

  Rank& r0 = m.ranks[0];
  const int ns = plan.num_samples, d = m.config.hidden_size, V = m.config.vocab_size;
  if (ns > 0) {
    MLASIM_CUDA_CHECK(cudaSetDevice(r0.device));
    gather_rows(r0.h.get(), d, r0.ip(plan.off_samples), ns, d, 4, r0.hs.get(), d, r0.s());
    RmsNormParams norm;
    norm.x = r0.hs.as<const float>();
    norm.w = r0.w->norm();
    norm.rows = ns;
    norm.cols = d;
    norm.eps = static_cast<float>(m.config.rms_norm_eps);
    norm.y = r0.xs_bf.get();
    norm.y_type = ElemType::kBf16;
    rms_norm(norm, r0.s());
    LinearParams lm;
    lm.rows = ns, lm.out = V, lm.in = d, lm.x = r0.xs_bf.get(), lm.w = r0.w->lm_head(), lm.y = r0.logits.get();
    r0.gemm->linear(lm);
    out.logits.resize(static_cast<std::size_t>(ns) * static_cast<std::size_t>(V));
    MLASIM_CUDA_CHECK(cudaMemcpyAsync(out.logits.data(), r0.logits.get(), out.logits.size() * sizeof(float),
                                      cudaMemcpyDeviceToHost, r0.stream));
  }
  for (Rank& rk : m.ranks) {  // the step is complete before the host reads or reuses anything
    MLASIM_CUDA_CHECK(cudaSetDevice(rk.device));
    MLASIM_CUDA_CHECK(cudaStreamSynchronize(rk.stream));
  }
  return out;
}

std::unique_ptr<Backend> make_cuda_backend(const MlaWeights& weights, const CudaBackendOptions& options) {
  return std::make_unique<CudaBackend>(weights, options);
}

}  // namespace mlasim
