// The host side of a CUDA backend step: slots, RoPE angles, decode tokens, context chunks and
// sampled tokens of one StepInputs, laid out as the kernels read them.
#include "attention/cuda/cuda_backend_internal.cuh"

namespace mlasim {
namespace cuda_detail {
namespace {

int slot_of(const std::vector<int>& blocks, int pos, int block_size, int num_blocks) {
  const std::size_t b = static_cast<std::size_t>(pos / block_size);
  MLASIM_CHECK(b < blocks.size(), "a context position past the row's block table");
  const int id = blocks[b];
  MLASIM_CHECK(id >= 0 && id < num_blocks, "a block id outside the cache");
  return id * block_size + pos % block_size;
}
}  // namespace

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

}  // namespace cuda_detail
}  // namespace mlasim
