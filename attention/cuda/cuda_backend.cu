// CudaBackend::run_step: plan the step (make_step_plan), pack it on the host (token ids, slots,
// decode tokens, context rounds, sampled tokens, RoPE tables) and upload it to every rank, then per
// layer: the ranks' attention partials (o_proj columns), all-reduce, residual; the ranks' MLP
// partials (down_proj columns), all-reduce, residual; finally the logits of the sampled tokens on
// rank 0.
//
// Precision: the residual stream h and every GEMM output that feeds a norm, RoPE or a residual are
// fp32; GEMM inputs, q, the latents, the cache and the attention inputs/outputs are bf16; GEMMs
// and kernels accumulate in fp32 (docs/spec/mla.md §5's "bf16 storage, fp32 accumulation").
//
// Decode form, per token: query token i of a decode-path row with q tokens and seq_len s is its own
// batch entry of mla_decode with s_q = 1 and cache_seqlens = s − q + i + 1 over the row's block
// table — the bottom-right causal mask without requiring uniform query lengths.
#include "attention/cuda/cuda_backend_internal.cuh"

namespace mlasim {
namespace cuda_detail {

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

}  // namespace cuda_detail

using namespace cuda_detail;

bool cuda_backend_supports_fault(Fault f) {
  return f != Fault::kChunkLseMergeWrong && f != Fault::kTopkOffByOne && f != Fault::kFp8DequantScaleWrong;
}

std::string cuda_backend_support_error(const ModelConfig& c, const CudaBackendOptions& o) {
  std::string why;
  if (cuda_usable_device_count(&why) == 0) return "no usable CUDA device (" + why + ")";
  if (c.kv_lora_rank != kRkv || c.qk_rope_head_dim != kDr || c.qk_nope_head_dim != kDn || c.v_head_dim != kDv)
    return "the CUDA kernels need kv_lora_rank 512, qk_rope_head_dim 64, qk_nope_head_dim 128 and v_head_dim 128";
  if (c.num_attn_modules != 1 || c.mla_lora_scaling)
    return "LongCat-Flash's decoder layer (two MLA modules, the shortcut MoE, the MLA LoRA scaling) runs on the CPU "
           "backend only";
  if (std::string err = tp_support_error(c, o.tensor_parallel_size); !err.empty()) return err;
  if (o.num_blocks <= 0 || o.block_size <= 0) return "the CUDA backend needs num_blocks > 0 and block_size > 0";
  for (Fault f : o.faults.list())
    if (!cuda_backend_supports_fault(f))
      return std::string("the CUDA backend does not model the fault ") + to_string(f) + " (CPU backend only)";
  if (std::string err = communicator_support_error(devices_for(o)); !err.empty()) return err;
  return "";
}

CudaBackend::CudaBackend(const MlaWeights& weights, const CudaBackendOptions& options) : impl_(std::make_unique<Impl>()) {
  const std::string err = cuda_backend_support_error(weights.config, options);
  MLASIM_CHECK(err.empty(), "CudaBackend: " + err);
  Impl& m = *impl_;
  m.config = weights.config;
  m.options = options;
  m.inv_freq = yarn_inv_freq(weights.config);
  m.scale = static_cast<float>(softmax_scale(weights.config));
  const std::vector<int> devices = devices_for(options);
  const std::size_t cache_bytes = static_cast<std::size_t>(options.num_blocks) * static_cast<std::size_t>(options.block_size) *
                                  static_cast<std::size_t>(cache_row_bytes(cache_format(options)));
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

PrecisionClass CudaBackend::precision() const {
  return impl_->options.cache_quant.quantized() ? PrecisionClass::kFp8Bf16 : PrecisionClass::kBf16;
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
void CudaBackend::Impl::prepare(Rank& rk, const DevicePlan& p) {
  const ModelConfig& c = config;
  const std::size_t n = static_cast<std::size_t>(p.num_actual_tokens), d = static_cast<std::size_t>(c.hidden_size);
  const std::size_t nh = static_cast<std::size_t>(rk.w->num_local_heads()), m = static_cast<std::size_t>(rk.w->mlp_width());
  const std::size_t rq = static_cast<std::size_t>(std::max(c.q_lora_rank, 1));
  const std::size_t n_mqa = static_cast<std::size_t>(p.forms.num_decode_tokens), n_pre = static_cast<std::size_t>(p.forms.num_prefill_tokens);
  const std::size_t n_kv = std::max(n_pre, static_cast<std::size_t>(p.max_round_total));
  const std::size_t ns = static_cast<std::size_t>(p.num_samples()), V = static_cast<std::size_t>(c.vocab_size);
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
    rk.o_accum.reserve(dev, mla_decode_o_accum_floats(p.forms.num_decode_tokens, static_cast<int>(nh), rk.num_sm_parts) * F);
    rk.lse_accum.reserve(dev, mla_decode_lse_accum_floats(p.forms.num_decode_tokens, static_cast<int>(nh), rk.num_sm_parts) * F);
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
  embedding_gather(rk.ip(p.off_ids), p.num_actual_tokens, rk.w->embed_tokens(), c.vocab_size, c.hidden_size, rk.h.as<float>(), rk.s());
  if (n_mqa > 0) {
    MlaDecodeMetadataParams mp;
    mp.cache_seqlens = rk.ip(p.off_dec_seqlens);
    mp.batch = p.forms.num_decode_tokens;
    mp.num_sm_parts = rk.num_sm_parts;
    mp.tile_scheduler_metadata = rk.tile_md.as<int>();
    mp.num_splits = rk.num_splits.as<int>();
    mp.stream = rk.stream;
    mla_decode_get_metadata(mp);
  }
}

// The rank's MLP partial: partial [n, d] = down_proj columns · SwiGLU of its gate/up rows (fp32).
void CudaBackend::Impl::mlp(Rank& rk, int layer, const DevicePlan& p) {
  const ModelConfig& c = config;
  const DeviceLayerWeights& w = rk.w->layer(layer);
  const int n = p.num_actual_tokens, d = c.hidden_size, m = rk.w->mlp_width();
  MLASIM_CUDA_CHECK(cudaSetDevice(rk.device));
  rms_norm_to_bf16(rk.h.as<const float>(), w.post_attention_layernorm, n, d, static_cast<float>(c.rms_norm_eps),
                   rk.x_bf.get(), rk.s());
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
void CudaBackend::Impl::all_reduce_and_add(const DevicePlan& p) {
  const std::size_t count = static_cast<std::size_t>(p.num_actual_tokens) * static_cast<std::size_t>(config.hidden_size);
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
  // Dense MLA is a sparse model's attention only while every position is selected
  // (sparse_past_index_topk, engine/replay.h, keeps such scenarios off this backend).
  if (has_dsa_indexer(m.config) && in.metadata)
    for (int pos : in.metadata->positions)
      MLASIM_CHECK(pos < *m.config.index_topk,
                   "CudaBackend: a sparse model's token at position " + std::to_string(pos) +
                       " attends to its DSA indexer's top-k, which the CUDA backend does not compute");
  const DevicePlan plan = pack_step_plan(make_step_plan(in, m.config.vocab_size, m.options.block_size, m.options.faults),
                                         in.token_ids, m.config, m.inv_freq, m.options);
  StepOutputs out;
  out.vocab_size = m.config.vocab_size;
  if (plan.num_actual_tokens == 0) return out;

  for (Rank& rk : m.ranks) m.prepare(rk, plan);
  for (int l = 0; l < m.config.num_hidden_layers; ++l) {
    for (Rank& rk : m.ranks) m.attention(rk, l, plan);
    m.all_reduce_and_add(plan);
    for (Rank& rk : m.ranks) m.mlp(rk, l, plan);
    m.all_reduce_and_add(plan);
  }

  Rank& r0 = m.ranks[0];
  const int ns = plan.num_samples(), d = m.config.hidden_size, V = m.config.vocab_size;
  if (ns > 0) {
    MLASIM_CUDA_CHECK(cudaSetDevice(r0.device));
    gather_rows(r0.h.get(), d, r0.ip(plan.off_samples), ns, d, 4, r0.hs.get(), d, r0.s());
    rms_norm_to_bf16(r0.hs.as<const float>(), r0.w->norm(), ns, d, static_cast<float>(m.config.rms_norm_eps),
                     r0.xs_bf.get(), r0.s());
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
