// CpuBackend::run_step: plan the step (make_step_plan plus each token's RoPE angles), embed, run
// the layers, then logits for the sampled tokens only.
#include "attention/cpu/cpu_backend.h"

#include <algorithm>
#include <type_traits>

#include "model/fp8.h"
#include "model/tp_shard.h"
#include "base/check.h"

namespace mlasim {
namespace {

// The step plan, with each token's RoPE angles at its position.
template <typename T>
CpuStepPlan make_plan(const StepInputs& in, const CpuModel<T>& model, const CpuBackendOptions& o) {
  CpuStepPlan plan{make_step_plan(in, model.config.vocab_size, o.block_size, o.faults), o.tensor_parallel_size, o.faults, {},
                   o.bf16_cache, o.cache_quant};
  if (o.faults.has(Fault::kFp8DequantScaleWrong)) plan.cache_quant.read_scale_factor = kFp8E4m3Max / 240.0f;
  plan.angles.reserve(plan.positions.size());
  for (int pos : plan.positions) plan.angles.push_back(rope_angles(model.inv_freq, pos));
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
  for (int l = 0; l < weights.config.num_hidden_layers * weights.config.num_attn_modules; ++l)
    caches_.emplace_back(options.num_blocks, options.block_size, row, static_cast<T>(options.cache_fill));
  // The DSA indexer's key cache, one per layer, on the same block tables (vLLM's
  // DeepseekV32IndexerCache shares the MLA layers' KV cache group).
  if (has_dsa_indexer(weights.config))
    for (int l = 0; l < weights.config.num_hidden_layers; ++l)
      index_caches_.emplace_back(options.num_blocks, options.block_size, weights.config.index_head_dim,
                                 static_cast<T>(options.cache_fill));
}

template <typename T>
PrecisionClass CpuBackend<T>::precision() const {
  if constexpr (std::is_same_v<T, double>) return PrecisionClass::kFp64;
  if (options_.cache_quant.kind == KvCacheQuantKind::kFp8DsMla) return PrecisionClass::kFp8DsMla;
  if (options_.cache_quant.quantized()) return PrecisionClass::kFp8;
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
  const CpuStepPlan plan = make_plan(in, model_, options_);
  const ModelConfig& c = model_.config;
  const int n = plan.num_actual_tokens, d = c.hidden_size, V = c.vocab_size;
  std::vector<T> h(static_cast<size_t>(n) * d);
  for (int t = 0; t < n; ++t) {
    const int id = in.token_ids[static_cast<size_t>(t)];
    std::copy_n(&model_.embed_tokens[static_cast<size_t>(id) * d], d, &h[static_cast<size_t>(t) * d]);
  }
  for (int l = 0; l < c.num_hidden_layers; ++l)
    decoder_layer_forward(model_, l, plan, h, std::span(caches_), std::span(index_caches_));

  std::vector<T> logits(plan.logits_indices.size() * static_cast<size_t>(V));
  final_logits(model_, h.data(), plan.logits_indices, logits.data());
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
