// CudaBackend::Impl::attention: one rank's MLA attention for one layer, stage by stage as the CPU
// backend runs it: project q and the latent, write the cache, the decode form, the prefill form
// (new tokens, context rounds, merges), the o_proj partial.
#include "attention/cuda/cuda_backend_internal.cuh"

namespace mlasim {
using namespace cuda_detail;
namespace {

// RoPE of every token at its position (the plan's cos/sin tables); the caller sets x and its layout.
RopeParams rope_params(const Rank& rk, const DevicePlan& p, bool neox) {
  RopeParams r;
  r.rows = p.num_actual_tokens;
  r.rope_dim = kDr;
  r.cos = rk.rope.as<const float>();
  r.sin = r.cos + static_cast<std::size_t>(p.num_actual_tokens) * (kDr / 2);
  r.neox = neox;
  return r;
}

// q [n, nh, d_n + d_r] = x · W_q, or W_UQ · RMSNorm(x · W_DQ) with q_lora_rank > 0 (fp32); RoPE on
// each head's rope part; then q_bf.
void project_q(Rank& rk, const DeviceLayerWeights& w, const ModelConfig& c, int n, RopeParams rope) {
  const int d = c.hidden_size, nh = rk.w->num_local_heads(), rq = c.q_lora_rank;
  LinearParams lp;
  lp.rows = n;
  if (rq == 0) {
    lp.out = nh * kDqk, lp.in = d, lp.x = rk.x_bf.get(), lp.w = w.q_proj, lp.y = rk.q.get();
    rk.gemm->linear(lp);
  } else {
    lp.out = rq, lp.in = d, lp.x = rk.x_bf.get(), lp.w = w.q_a_proj, lp.y = rk.cq.get();
    rk.gemm->linear(lp);
    rms_norm_to_bf16(rk.cq.as<const float>(), w.q_a_layernorm, n, rq, static_cast<float>(c.rms_norm_eps), rk.cq_bf.get(),
                     rk.s());
    LinearParams qb;
    qb.rows = n, qb.out = nh * kDqk, qb.in = rq, qb.x = rk.cq_bf.get(), qb.w = w.q_b_proj, qb.y = rk.q.get();
    rk.gemm->linear(qb);
  }
  rope.x = rk.q.as<float>();
  rope.row_stride = static_cast<long long>(nh) * kDqk;
  rope.head_stride = kDqk;
  rope.offset = kDn;
  rope.heads = nh;
  apply_rope(rope, rk.s());
  f32_to_bf16(rk.q.as<const float>(), rk.q_bf.as<u16>(), static_cast<long long>(n) * nh * kDqk, rk.s());
}

// [c_kv | k_pe] [n, r_kv + d_r] = x · W_DKV (fp32); kv_a_layernorm on c_kv (kv_norm_dropped: none);
// RoPE on k_pe; then lat_bf.
void project_latent(Rank& rk, const DeviceLayerWeights& w, const ModelConfig& c, int n, bool kv_norm, RopeParams rope) {
  LinearParams kva;
  kva.rows = n, kva.out = kL, kva.in = c.hidden_size, kva.x = rk.x_bf.get(), kva.w = w.kv_a_proj_with_mqa, kva.y = rk.lat.get();
  rk.gemm->linear(kva);
  if (kv_norm) {
    RmsNormParams kn;
    kn.x = rk.lat.as<const float>();
    kn.ldx = kL;
    kn.w = w.kv_a_layernorm;
    kn.rows = n;
    kn.cols = kRkv;
    kn.eps = static_cast<float>(c.rms_norm_eps);
    kn.y = rk.lat.get();
    kn.ldy = kL;
    kn.y_type = ElemType::kF32;
    rms_norm(kn, rk.s());
  }
  rope.x = rk.lat.as<float>();
  rope.row_stride = kL;
  rope.head_stride = 0;
  rope.offset = kRkv;
  rope.heads = 1;
  apply_rope(rope, rk.s());
  f32_to_bf16(rk.lat.as<const float>(), rk.lat_bf.as<u16>(), static_cast<long long>(n) * kL, rk.s());
}

// Decode form, step 1: q_lat_h = W_UK_h^T q_nope_h (batched over heads) beside q_pe_h, in qlat.
void absorb_w_uk(Rank& rk, const DeviceLayerWeights& w, int rows, bool w_uk_transposed) {
  const int nh = rk.w->num_local_heads();
  LinearParams uk;
  uk.rows = rows, uk.out = kRkv, uk.in = kDn;
  uk.x = rk.q_bf.get(), uk.ldx = static_cast<long long>(nh) * kDqk, uk.stride_x = kDqk;
  uk.w = w.kv_b_proj, uk.stride_w = static_cast<long long>(kDkv) * kRkv;
  if (w_uk_transposed) {
    uk.w_in_out = false, uk.ldw = kDn;  // the d_n x r_kv block read as r_kv x d_n
  } else {
    uk.w_in_out = true, uk.ldw = kRkv;  // W_UK_h is [d_n, r_kv]: y = x · W_UK_h
  }
  uk.y = rk.qlat.get(), uk.ldy = static_cast<long long>(nh) * kL, uk.stride_y = kL, uk.y_type = GemmOut::kBf16;
  uk.batch = nh;
  rk.gemm->linear(uk);
  concat_q_pe_for_decode(rk.q_bf.as<const u16>(), rows, nh, kDn, kDr, kRkv, rk.qlat.as<u16>(), rk.s());
}

// Decode form, step 3: o_h = W_UV_h ô_h (batched over heads) into the attention rows.
void apply_w_uv(Rank& rk, const DeviceLayerWeights& w, int rows) {
  const int nh = rk.w->num_local_heads();
  LinearParams uv;
  uv.rows = rows, uv.out = kDv, uv.in = kRkv;
  uv.x = rk.olat.get(), uv.ldx = static_cast<long long>(nh) * kRkv, uv.stride_x = kRkv;
  uv.w = w.kv_b_proj + static_cast<std::size_t>(kDn) * kRkv, uv.ldw = kRkv, uv.stride_w = static_cast<long long>(kDkv) * kRkv;
  uv.y = rk.attn.get(), uv.ldy = static_cast<long long>(nh) * kDv, uv.stride_y = kDv, uv.y_type = GemmOut::kBf16;
  uv.batch = nh;
  rk.gemm->linear(uv);
}

// Up-projects `rows` latents (row stride 576) into kvb [rows, nh, 256] and k [rows, nh, 192].
void up_project(Rank& rk, const DeviceLayerWeights& w, const u16* latent, int rows) {
  const int nh = rk.w->num_local_heads();
  LinearParams kb;
  kb.rows = rows, kb.out = nh * kDkv, kb.in = kRkv, kb.x = latent, kb.ldx = kL, kb.w = w.kv_b_proj;
  kb.y = rk.kvb.get(), kb.y_type = GemmOut::kBf16;
  rk.gemm->linear(kb);
  concat_k_for_prefill(rk.kvb.as<const u16>(), latent, rows, nh, kDn, kDv, kDr, kRkv, rk.kbuf.as<u16>(), rk.s());
}

// merge_attn_states over the prefill-form tokens: out = merge(prefix, suffix) per head.
MergeAttnStatesParams merge_params(const DevicePlan& p, int nh, void* out, const void* prefix_out, const float* prefix_lse,
                                   const void* suffix_out, const float* suffix_lse) {
  return {.out = out, .prefix_out = prefix_out, .prefix_lse = prefix_lse, .suffix_out = suffix_out, .suffix_lse = suffix_lse,
          .num_tokens = p.forms.num_prefill_tokens, .num_heads = nh, .head_size = kDv};
}

// Context round k: every prefill-form row's k-th chunk gathered from the cache, up-projected and
// attended non-causally into o_ctx (k == 0) or o_chunk, which is then merged into o_ctx in place.
void context_round(Rank& rk, const DeviceLayerWeights& w, const void* cache, const CudaBackendOptions& o,
                   const DevicePlan& p, const MlaPrefillParams& pp, std::size_t k) {
  const DevicePlan::Round& rd = p.rounds[k];
  if (o.cache_quant.quantized()) {  // an fp8 cache: the rows upconverted to bf16, as vLLM's gather does
    cache_gather_dequant({.num_rows = rd.total, .format = cache_format(o), .kv_cache = static_cast<const std::uint8_t*>(cache),
                          .slots = rk.ip(rd.off_slots), .k_scale = o.cache_quant.k_scale, .out = rk.ctx_lat.get(),
                          .stream = rk.stream});
  } else {
    gather_rows(cache, kL, rk.ip(rd.off_slots), rd.total, kL, 2, rk.ctx_lat.get(), kL, rk.s());
  }
  up_project(rk, w, rk.ctx_lat.as<const u16>(), rd.total);
  MlaPrefillParams pc = pp;
  pc.cu_seqlens_k = rk.ip(rd.off_cu_k);
  pc.max_seqlen_k = rd.max_len;
  pc.causal = false;
  pc.out = k == 0 ? rk.o_ctx.get() : rk.o_chunk.get();
  pc.lse = k == 0 ? rk.lse_ctx.as<float>() : rk.lse_chunk.as<float>();
  mla_prefill_launch(pc, rk.s());
  if (k == 0) return;
  MergeAttnStatesParams mp = merge_params(p, pp.num_heads, rk.o_ctx.get(), rk.o_ctx.get(), rk.lse_ctx.as<const float>(),
                                          rk.o_chunk.get(), rk.lse_chunk.as<const float>());
  mp.out_lse = rk.lse_ctx.as<float>();
  merge_attn_states_launch(mp, rk.s());
}

}  // namespace

// The rank's attention partial: partial [n, d] = o_proj columns of its heads · o (fp32).
void CudaBackend::Impl::attention(Rank& rk, int layer, const DevicePlan& p) {
  const DeviceLayerWeights& w = rk.w->layer(layer);
  MLASIM_CUDA_CHECK(cudaSetDevice(rk.device));
  project_q_and_latent(rk, w, p);
  write_cache(rk, layer, p);
  if (p.forms.num_decode_tokens > 0) decode_form(rk, w, layer, p);
  if (p.forms.num_prefill_tokens > 0) prefill_form(rk, w, layer, p);
  o_proj(rk, w, p);
}

// x = RMSNorm(h) (bf16), q (fp32 -> RoPE -> bf16), [c_kv | k_pe] (fp32 -> norm, RoPE -> bf16).
void CudaBackend::Impl::project_q_and_latent(Rank& rk, const DeviceLayerWeights& w, const DevicePlan& p) {
  const int n = p.num_actual_tokens;
  rms_norm_to_bf16(rk.h.as<const float>(), w.input_layernorm, n, config.hidden_size, static_cast<float>(config.rms_norm_eps),
                   rk.x_bf.get(), rk.s());
  const RopeParams rope = rope_params(rk, p, options.faults.has(Fault::kRopeNeoxInsteadOfInterleaved));
  project_q(rk, w, config, n, rope);
  project_latent(rk, w, config, n, !options.faults.has(Fault::kKvNormDropped), rope);
}

// The cache write comes first, for every token (slot -1: not written).
void CudaBackend::Impl::write_cache(Rank& rk, int layer, const DevicePlan& p) {
  CacheWriteParams cw;
  cw.num_tokens = p.num_actual_tokens;
  cw.kv_lora_rank = kRkv;
  cw.rope_dim = kDr;
  cw.num_slots = options.num_blocks * options.block_size;
  cw.kv_c = rk.lat_bf.get();
  cw.kv_c_stride = kL;
  cw.k_pe = rk.lat_bf.as<u16>() + kRkv;
  cw.k_pe_stride = kL;
  cw.slot_mapping = rk.ip(p.off_slots);
  cw.kv_cache = rk.caches[static_cast<std::size_t>(layer)].get();
  cw.stream = rk.stream;
  if (!options.cache_quant.quantized()) return cache_write(cw);
  cache_write_quantized({.num_tokens = cw.num_tokens, .format = cache_format(options), .num_slots = cw.num_slots, .kv_c = cw.kv_c,
                         .kv_c_stride = cw.kv_c_stride, .k_pe = cw.k_pe, .k_pe_stride = cw.k_pe_stride,
                         .slot_mapping = cw.slot_mapping, .k_scale = options.cache_quant.k_scale,
                         .kv_cache = static_cast<std::uint8_t*>(cw.kv_cache), .stream = rk.stream});
}

// Decode form over tokens [0, num_decode_tokens): absorb W_UK into q, mla_decode over the cache (an
// fp8 cache: mla_sparse over every cached position, the query quantized where the backend does),
// o_h = W_UV_h ô_h.
void CudaBackend::Impl::decode_form(Rank& rk, const DeviceLayerWeights& w, int layer, const DevicePlan& p) {
  absorb_w_uk(rk, w, p.forms.num_decode_tokens, options.faults.has(Fault::kWUkTransposed));
  if (options.cache_quant.quantized()) {  // an fp8 cache: every cached position as the top-k of mla_sparse
    const KvCacheQuant& cq = options.cache_quant;
    mla_sparse_fwd({.num_tokens = p.forms.num_decode_tokens, .num_heads = rk.w->num_local_heads(), .topk = p.max_dec_len,
                    .softmax_scale = options.faults.has(Fault::kDecodeScale1OverSqrt576)
                                         ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(kL)))
                                         : scale,
                    .format = cache_format(options), .k_scale = cq.k_scale, .quantize_query = cq.quantize_query,
                    .q_scale = cq.q_scale, .q = rk.qlat.get(),
                    .kv_cache = rk.caches[static_cast<std::size_t>(layer)].as<const std::uint8_t>(),
                    .indices = rk.ip(p.off_dec_idx), .out = rk.olat.get(), .lse = rk.lse_dec.as<float>(), .stream = rk.stream});
    apply_w_uv(rk, w, p.forms.num_decode_tokens);
    return;
  }
  MlaDecodeParams dp;
  dp.batch = p.forms.num_decode_tokens;
  dp.s_q = 1;
  dp.num_heads = rk.w->num_local_heads();
  dp.block_size = options.block_size;
  dp.max_blocks_per_seq = p.max_blocks;
  dp.num_blocks = options.num_blocks;
  dp.softmax_scale = options.faults.has(Fault::kDecodeScale1OverSqrt576) ? static_cast<float>(1.0 / std::sqrt(static_cast<double>(kL)))
                                                                        : scale;
  dp.causal = true;
  dp.q = rk.qlat.get();
  dp.kv_cache = rk.caches[static_cast<std::size_t>(layer)].get();
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
  apply_w_uv(rk, w, p.forms.num_decode_tokens);
}

// Prefill form over tokens [num_decode_tokens, n): new tokens causal, the context round by round,
// then o = merge(context, new tokens).
void CudaBackend::Impl::prefill_form(Rank& rk, const DeviceLayerWeights& w, int layer, const DevicePlan& p) {
  const int nh = rk.w->num_local_heads();
  const std::size_t attn_row = static_cast<std::size_t>(nh) * kDv, n_mqa = static_cast<std::size_t>(p.forms.num_decode_tokens);
  u16* out_rows = rk.attn.as<u16>() + n_mqa * attn_row;
  const bool has_ctx = !p.rounds.empty();
  MlaPrefillParams pp;
  pp.q = rk.q_bf.as<const u16>() + n_mqa * static_cast<std::size_t>(nh) * kDqk;
  pp.k = rk.kbuf.get();
  pp.v = rk.kvb.as<const u16>() + kDn;
  pp.v_row_stride = static_cast<long long>(nh) * kDkv;
  pp.v_head_stride = kDkv;
  pp.cu_seqlens_q = rk.ip(p.off_cu_q);
  pp.batch = p.forms.num_prefills;
  pp.num_heads = nh;
  pp.total_q = p.forms.num_prefill_tokens;
  pp.max_seqlen_q = p.max_q;
  pp.softmax_scale = scale;

  up_project(rk, w, rk.lat_bf.as<const u16>() + n_mqa * kL, p.forms.num_prefill_tokens);
  MlaPrefillParams pn = pp;
  pn.cu_seqlens_k = rk.ip(p.off_cu_q);
  pn.max_seqlen_k = p.max_q;
  pn.causal = true;
  pn.out = has_ctx ? rk.o_new.get() : static_cast<void*>(out_rows);
  pn.out_row_stride = static_cast<long long>(attn_row);
  pn.lse = rk.lse_new.as<float>();
  mla_prefill_launch(pn, rk.s());

  const void* cache = rk.caches[static_cast<std::size_t>(layer)].get();
  for (std::size_t k = 0; k < p.rounds.size(); ++k) context_round(rk, w, cache, options, p, pp, k);
  if (!has_ctx) return;
  MergeAttnStatesParams mp = merge_params(p, nh, out_rows, rk.o_ctx.get(), rk.lse_ctx.as<const float>(), rk.o_new.get(),
                                          rk.lse_new.as<const float>());
  mp.out_row_stride = static_cast<long long>(attn_row);
  merge_attn_states_launch(mp, rk.s());
}

// partial [n, d] = attn [n, nh d_v] · the rank's o_proj columns (fp32).
void CudaBackend::Impl::o_proj(Rank& rk, const DeviceLayerWeights& w, const DevicePlan& p) {
  const int nh = rk.w->num_local_heads();
  LinearParams op;
  op.rows = p.num_actual_tokens, op.out = config.hidden_size, op.in = nh * kDv, op.x = rk.attn.get(), op.w = w.o_proj;
  op.y = rk.partial.get();
  rk.gemm->linear(op);
}

}  // namespace mlasim
