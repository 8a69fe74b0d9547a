// CudaBackend::Impl::attention: one rank's MLA attention for one layer (cache write, decode form,
// prefill form with chunked context, o_proj partial).
#include "attention/cuda/cuda_backend_internal.cuh"

namespace mlasim {
using namespace cuda_detail;

// The rank's attention partial: partial [n, d] = o_proj columns of its heads · o (fp32).
void CudaBackend::Impl::attention(Rank& rk, int layer, const DevicePlan& p) {
  const ModelConfig& c = config;
  const DeviceLayerWeights& w = rk.w->layer(layer);
  const int n = p.num_actual_tokens, d = c.hidden_size, nh = rk.w->num_local_heads(), rq = c.q_lora_rank;
  const float eps = static_cast<float>(c.rms_norm_eps);
  const bool neox = options.faults.has(Fault::kRopeNeoxInsteadOfInterleaved);
  const int half = kDr / 2;
  const float* cosv = rk.rope.as<const float>();
  const float* sinv = cosv + static_cast<std::size_t>(n) * half;
  MLASIM_CUDA_CHECK(cudaSetDevice(rk.device));

  // x = RMSNorm(h) (bf16), q (fp32 -> RoPE -> bf16), [c_kv | k_pe] (fp32 -> norm, RoPE -> bf16).
  rms_norm_to_bf16(rk.h.as<const float>(), w.input_layernorm, n, d, eps, rk.x_bf.get(), rk.s());
  LinearParams lp;
  lp.rows = n;
  if (rq == 0) {
    lp.out = nh * kDqk, lp.in = d, lp.x = rk.x_bf.get(), lp.w = w.q_proj, lp.y = rk.q.get();
    rk.gemm->linear(lp);
  } else {
    lp.out = rq, lp.in = d, lp.x = rk.x_bf.get(), lp.w = w.q_a_proj, lp.y = rk.cq.get();
    rk.gemm->linear(lp);
    rms_norm_to_bf16(rk.cq.as<const float>(), w.q_a_layernorm, n, rq, eps, rk.cq_bf.get(), rk.s());
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
  if (p.num_decode_tokens > 0) {
    LinearParams uk;
    uk.rows = p.num_decode_tokens, uk.out = kRkv, uk.in = kDn;
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
    concat_q_pe_for_decode(rk.q_bf.as<const u16>(), p.num_decode_tokens, nh, kDn, kDr, kRkv, rk.qlat.as<u16>(), rk.s());

    MlaDecodeParams dp;
    dp.batch = p.num_decode_tokens;
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
    uv.rows = p.num_decode_tokens, uv.out = kDv, uv.in = kRkv;
    uv.x = rk.olat.get(), uv.ldx = static_cast<long long>(nh) * kRkv, uv.stride_x = kRkv;
    uv.w = w.kv_b_proj + static_cast<std::size_t>(kDn) * kRkv, uv.ldw = kRkv, uv.stride_w = static_cast<long long>(kDkv) * kRkv;
    uv.y = rk.attn.get(), uv.ldy = static_cast<long long>(attn_row), uv.stride_y = kDv, uv.y_type = GemmOut::kBf16;
    uv.batch = nh;
    rk.gemm->linear(uv);
  }

  // Prefill form: new tokens causal, context rounds non-causal, merged by LSE.
  if (p.num_prefill_tokens > 0) {
    const u16* lat_new = rk.lat_bf.as<const u16>() + static_cast<std::size_t>(p.num_decode_tokens) * kL;
    u16* out_rows = rk.attn.as<u16>() + static_cast<std::size_t>(p.num_decode_tokens) * attn_row;
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
    pp.q = rk.q_bf.as<const u16>() + static_cast<std::size_t>(p.num_decode_tokens) * nh * kDqk;
    pp.k = rk.kbuf.get();
    pp.v = rk.kvb.as<const u16>() + kDn;
    pp.v_row_stride = static_cast<long long>(nh) * kDkv;
    pp.v_head_stride = kDkv;
    pp.cu_seqlens_q = rk.ip(p.off_cu_q);
    pp.batch = p.num_prefills;
    pp.num_heads = nh;
    pp.total_q = p.num_prefill_tokens;
    pp.max_seqlen_q = p.max_q;
    pp.softmax_scale = scale;

    up_project(lat_new, p.num_prefill_tokens);
    MlaPrefillParams pn = pp;
    pn.cu_seqlens_k = rk.ip(p.off_cu_q);
    pn.max_seqlen_k = p.max_q;
    pn.causal = true;
    pn.out = has_ctx ? rk.o_new.get() : static_cast<void*>(out_rows);
    pn.out_row_stride = static_cast<long long>(attn_row);
    pn.lse = rk.lse_new.as<float>();
    mla_prefill_launch(pn, rk.s());

    for (std::size_t k = 0; k < p.rounds.size(); ++k) {
      const DevicePlan::Round& rd = p.rounds[k];
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
        mp.num_tokens = p.num_prefill_tokens;
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
      mp.num_tokens = p.num_prefill_tokens;
      mp.num_heads = nh;
      mp.head_size = kDv;
      merge_attn_states_launch(mp, rk.s());
    }
  }

  LinearParams op;
  op.rows = n, op.out = d, op.in = nh * kDv, op.x = rk.attn.get(), op.w = w.o_proj, op.y = rk.partial.get();
  rk.gemm->linear(op);
}

}  // namespace mlasim
