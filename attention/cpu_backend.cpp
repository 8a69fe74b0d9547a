// CpuBackend::run_step: embed, plan the step (which rows take which form, context chunks, RoPE
// angles, cache writes), run the layers, then logits for the sampled tokens only.
#include "attention/cpu_backend.h"

#include <type_traits>

#include "attention/attention_metadata.h"
#include "attention/tp_shard.h"
#include "sim/check.h"

namespace mlasim {
namespace {

CpuStepPlan make_plan(const StepInputs& in, const std::vector<double>& inv_freq,
                      int tp, const FaultSet& faults) {
  const AttentionMetadata& md = *in.metadata;
  CpuStepPlan plan;
  plan.md = &md;
  plan.tp = tp;
  plan.faults = faults;
  if (in.force_prefill_path) {
    plan.num_decode_form_rows = 0;
    plan.prefill_chunks = single_context_chunks(md, 0, md.num_reqs);
  } else {
    plan.num_decode_form_rows = md.decode ? md.decode->num_rows : 0;
    if (md.prefill) {
      MLASIM_CHECK(md.prefill->row_start == plan.num_decode_form_rows, "prefill rows must follow the decode rows");
      plan.prefill_chunks = context_chunks_from_metadata(md);
    } else {
      MLASIM_CHECK(plan.num_decode_form_rows == md.num_reqs, "rows on neither path");
    }
  }
  const int n = md.num_actual_tokens;
  plan.angles.reserve(static_cast<size_t>(n));
  for (int t = 0; t < n; ++t) plan.angles.push_back(rope_angles(inv_freq, md.positions[static_cast<size_t>(t)]));
  plan.write_cache.assign(static_cast<size_t>(n), true);
  if (faults.has(Fault::kDecodeSkipsCacheWriteForFreshRows)) {
    for (int r = 0; r < plan.num_decode_form_rows; ++r) {
      if (md.context_lens[static_cast<size_t>(r)] != 0) continue;
      for (int t = md.query_start_loc[static_cast<size_t>(r)]; t < md.query_start_loc[static_cast<size_t>(r) + 1]; ++t)
        plan.write_cache[static_cast<size_t>(t)] = false;
    }
  }
  return plan;
}

}  // namespace

template <typename T>
CpuBackend<T>::CpuBackend(const MlaWeights& weights, const CpuBackendOptions& options)
    : model_(to_cpu_model<T>(weights)), options_(options) {
  const std::string err = tp_support_error(weights.config, options.tensor_parallel_size);
  MLASIM_CHECK(err.empty(), err);
  MLASIM_CHECK(options.num_blocks > 0 && options.block_size > 0, "the CPU backend needs a cache size");
  const int row = weights.config.kv_lora_rank + weights.config.qk_rope_head_dim;
  for (int l = 0; l < weights.config.num_hidden_layers; ++l)
    caches_.emplace_back(options.num_blocks, options.block_size, row, static_cast<T>(options.cache_fill));
}

template <typename T>
PrecisionClass CpuBackend<T>::precision() const {
  if constexpr (std::is_same_v<T, double>) return PrecisionClass::kFp64;
  return options_.bf16_cache ? PrecisionClass::kBf16 : PrecisionClass::kFp32;
}

template <typename T>
std::string CpuBackend<T>::name() const {
  std::string s = std::is_same_v<T, double> ? "cpu-f64" : "cpu-f32";
  if (options_.tensor_parallel_size > 1) s += " tp=" + std::to_string(options_.tensor_parallel_size);
  if (!options_.faults.empty()) s += " faults=" + options_.faults.to_string();
  return s;
}

template <typename T>
StepOutputs CpuBackend<T>::run_step(const StepInputs& in) {
  MLASIM_CHECK(in.metadata != nullptr, "StepInputs without metadata");
  const AttentionMetadata& md = *in.metadata;
  const ModelConfig& c = model_.config;
  const int n = md.num_actual_tokens, d = c.hidden_size, V = c.vocab_size;
  MLASIM_CHECK(static_cast<int>(in.token_ids.size()) == n, "one token id per scheduled token");
  MLASIM_CHECK(md.block_size == options_.block_size, "metadata block size differs from the cache's");
  MLASIM_CHECK(in.sample_rows.size() == in.num_sample_tokens.size(), "num_sample_tokens per sample row");

  std::vector<T> h(static_cast<size_t>(n) * d);
  for (int t = 0; t < n; ++t) {
    const int id = in.token_ids[static_cast<size_t>(t)];
    MLASIM_CHECK(id >= 0 && id < V, "token id outside the vocabulary");
    std::copy_n(&model_.embed_tokens[static_cast<size_t>(id) * d], d, &h[static_cast<size_t>(t) * d]);
  }
  CpuStepPlan plan = make_plan(in, model_.inv_freq, options_.tensor_parallel_size, options_.faults);
  plan.bf16_cache = options_.bf16_cache;
  for (int l = 0; l < c.num_hidden_layers; ++l)
    layer_forward(model_, l, plan, h, caches_[static_cast<size_t>(l)]);

  std::vector<int> sampled;
  for (size_t i = 0; i < in.sample_rows.size(); ++i) {
    const int r = in.sample_rows[i], k = in.num_sample_tokens[i];
    MLASIM_CHECK(r >= 0 && r < md.num_reqs, "sample row outside the batch");
    const int end = md.query_start_loc[static_cast<size_t>(r) + 1];
    MLASIM_CHECK(k >= 1 && k <= end - md.query_start_loc[static_cast<size_t>(r)], "more sampled tokens than scheduled");
    for (int t = end - k; t < end; ++t) sampled.push_back(t);
  }
  std::vector<T> logits(sampled.size() * static_cast<size_t>(V));
  final_logits(model_, h.data(), sampled, logits.data());
  StepOutputs out;
  out.vocab_size = V;
  out.logits.assign(logits.begin(), logits.end());
  if constexpr (std::is_same_v<T, double>) out.logits_f64 = std::move(logits);
  return out;
}

template class CpuBackend<float>;
template class CpuBackend<double>;

std::unique_ptr<Backend> make_cpu_backend(const MlaWeights& weights, const CpuBackendOptions& options,
                                          CpuPrecision precision) {
  if (precision == CpuPrecision::kDouble) return std::make_unique<CpuBackend<double>>(weights, options);
  return std::make_unique<CpuBackend<float>>(weights, options);
}

}  // namespace mlasim
