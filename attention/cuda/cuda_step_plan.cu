// The device packing of a step plan: token ids, cache slots, decode tokens, context rounds, sampled
// tokens and RoPE tables of one StepPlan, laid out as the kernels read them.
#include "attention/cuda/cuda_backend_internal.cuh"

#include <optional>

#include "attention/slot_mapping.h"

namespace mlasim {
namespace cuda_detail {
namespace {

int context_slot(const std::vector<int>& blocks, int pos, int block_size, int num_blocks) {
  const std::optional<long long> slot = slot_of(blocks, pos, block_size);
  MLASIM_CHECK(slot.has_value(), "a context position past the row's block table");
  MLASIM_CHECK(*slot >= 0 && *slot < static_cast<long long>(num_blocks) * block_size, "a block id outside the cache");
  return static_cast<int>(*slot);
}

// Slots of the cache write; -1 where the plan drops the write (the kernel skips it).
void pack_slots(DevicePlan& p, const CudaBackendOptions& o) {
  std::vector<int> slots(p.md->slot_mapping.begin(), p.md->slot_mapping.end());
  for (std::size_t t = 0; t < p.write_cache.size(); ++t)
    if (!p.write_cache[t]) slots[t] = -1;
  for (int s : slots) MLASIM_CHECK(s < o.num_blocks * o.block_size, "a slot outside the cache");
  p.off_slots = p.push(slots);
}

// Decode tokens: one s_q = 1 entry each, with its causal cache length and its row's block table.
void pack_decode(DevicePlan& p, const CudaBackendOptions& o) {
  const AttentionMetadata& md = *p.md;
  std::vector<int> dec_seqlens;
  for (int r = 0; r < p.forms.num_decodes; ++r) {
    const int nq = p.query_len(r), s = md.seq_lens[static_cast<std::size_t>(r)];
    for (int i = 0; i < nq; ++i) dec_seqlens.push_back(s - nq + i + 1);
    p.max_blocks = std::max(p.max_blocks, (s + o.block_size - 1) / o.block_size);
  }
  std::vector<int> dec_bt(static_cast<std::size_t>(p.forms.num_decode_tokens) * static_cast<std::size_t>(p.max_blocks), 0);
  for (int r = 0; r < p.forms.num_decodes; ++r) {
    const std::vector<int>& blocks = md.block_table[static_cast<std::size_t>(r)];
    const int used = (md.seq_lens[static_cast<std::size_t>(r)] + o.block_size - 1) / o.block_size;
    MLASIM_CHECK(used <= static_cast<int>(blocks.size()), "a decode row's block table is shorter than its sequence");
    for (int b = 0; b < used; ++b)
      MLASIM_CHECK(blocks[static_cast<std::size_t>(b)] >= 0 && blocks[static_cast<std::size_t>(b)] < o.num_blocks,
                   "a block id outside the cache");
    for (int t = p.query_start(r); t < p.query_start(r + 1); ++t)
      std::copy_n(blocks.begin(), used, dec_bt.begin() + static_cast<long>(static_cast<std::size_t>(t) * p.max_blocks));
  }
  p.off_dec_seqlens = p.push(dec_seqlens);
  p.off_dec_bt = p.push(dec_bt);
  if (!o.cache_quant.quantized()) return;
  for (int len : dec_seqlens) p.max_dec_len = std::max(p.max_dec_len, len);
  std::vector<int> dec_idx(static_cast<std::size_t>(p.forms.num_decode_tokens) * static_cast<std::size_t>(p.max_dec_len), -1);
  for (int t = 0; t < p.forms.num_decode_tokens; ++t)
    for (int j = 0; j < dec_seqlens[static_cast<std::size_t>(t)]; ++j)
      dec_idx[static_cast<std::size_t>(t) * static_cast<std::size_t>(p.max_dec_len) + static_cast<std::size_t>(j)] =
          dec_bt[static_cast<std::size_t>(t) * static_cast<std::size_t>(p.max_blocks) + static_cast<std::size_t>(j / o.block_size)] *
              o.block_size +
          j % o.block_size;
  p.off_dec_idx = p.push(dec_idx);
}

// Prefill-form rows: query offsets relative to num_decode_tokens, and the context rounds.
void pack_prefill(DevicePlan& p, const CudaBackendOptions& o) {
  std::vector<int> cu_q{0};
  for (int k = 0; k < p.forms.num_prefills; ++k) {
    const int q = p.query_len(p.forms.num_decodes + k);
    cu_q.push_back(cu_q.back() + q);
    p.max_q = std::max(p.max_q, q);
  }
  p.off_cu_q = p.push(cu_q);
  for (std::size_t round = 0; round < static_cast<std::size_t>(p.num_context_rounds); ++round) {
    std::vector<int> cu_k{0}, ctx_slots;
    DevicePlan::Round rd;
    for (int k = 0; k < p.forms.num_prefills; ++k) {
      const std::vector<ContextChunk>& list = p.context_chunks[static_cast<std::size_t>(k)];
      const ContextChunk ch = round < list.size() ? list[round] : ContextChunk{};
      const std::vector<int>& blocks = p.md->block_table[static_cast<std::size_t>(p.forms.num_decodes + k)];
      for (int j = 0; j < ch.len; ++j) ctx_slots.push_back(context_slot(blocks, ch.start + j, o.block_size, o.num_blocks));
      cu_k.push_back(cu_k.back() + std::max(ch.len, 0));
      rd.max_len = std::max(rd.max_len, ch.len);
    }
    rd.total = cu_k.back();
    rd.off_cu_k = p.push(cu_k);
    rd.off_slots = p.push(ctx_slots);
    p.max_round_total = std::max(p.max_round_total, rd.total);
    p.rounds.push_back(rd);
  }
}

// RoPE angles in double, stored as fp32: cos [n, d_r/2], then sin [n, d_r/2].
void pack_rope(DevicePlan& p, const ModelConfig& c, const std::vector<double>& inv_freq) {
  const int half = c.qk_rope_head_dim / 2, n = p.num_actual_tokens;
  p.rope.assign(static_cast<std::size_t>(n) * half * 2, 0.f);
  for (int t = 0; t < n; ++t) {
    const RopeAngles a = rope_angles(inv_freq, p.positions[static_cast<std::size_t>(t)]);
    for (int i = 0; i < half; ++i) {
      p.rope[static_cast<std::size_t>(t) * half + i] = static_cast<float>(a.cos[static_cast<std::size_t>(i)]);
      p.rope[(static_cast<std::size_t>(n) + t) * half + i] = static_cast<float>(a.sin[static_cast<std::size_t>(i)]);
    }
  }
}

}  // namespace

DevicePlan pack_step_plan(StepPlan plan, std::span<const int> token_ids, const ModelConfig& c,
                          const std::vector<double>& inv_freq, const CudaBackendOptions& o) {
  DevicePlan p(std::move(plan));
  p.off_ids = p.push(std::vector<int>(token_ids.begin(), token_ids.end()));
  pack_slots(p, o);
  pack_decode(p, o);
  pack_prefill(p, o);
  p.off_samples = p.push(p.logits_indices);
  pack_rope(p, c, inv_freq);
  return p;
}

}  // namespace cuda_detail
}  // namespace mlasim
