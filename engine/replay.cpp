// Scenario replays with the CPU backend.
#include "engine/replay.h"

#include <unistd.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "base/file_read.h"
#include "engine/engine.h"
#include "engine/run_collector.h"
#include "attention/kv_cache_quant.h"

namespace mlasim {

std::unique_ptr<Backend> make_replay_backend(const MlaWeights& weights, const Scenario& scenario,
                                             const ReplayOptions& options) {
  if (options.make_backend) return options.make_backend(weights, scenario, options.faults);
  const CpuBackendOptions cpu =
      cpu_backend_options(scenario, options.precision, options.faults, options.tensor_parallel_size);
  return make_cpu_backend(weights, cpu, options.precision);
}

std::string sparse_past_index_topk(const Scenario& s) {
  const ModelConfig& m = s.model;
  if (!has_dsa_indexer(m)) return "";
  bool fits = s.requests_file.empty();
  for (const RequestSpec& r : s.requests) {
    const long long prompt = r.prompt.empty() ? r.seeded_prompt_len : static_cast<long long>(r.prompt.size());
    fits = fits && prompt + r.max_tokens - 1 + s.scheduler.num_speculative_tokens <= *m.index_topk;
  }
  if (fits) return "";
  return "its sparse model's sequences pass index_topk " + std::to_string(*m.index_topk) +
         ", past which each query attends to the DSA indexer's top-k positions";
}

RunRecord replay(const Scenario& scenario, const ReplayOptions& options) {
  RecordCollector collector(scenario);
  const std::optional<PrecisionClass> precision = replay(scenario, options, {&collector});
  RunRecord record = collector.take();
  record.precision = precision;
  return record;
}

std::optional<PrecisionClass> replay(const Scenario& scenario, const ReplayOptions& options,
                                     const std::vector<StepSink*>& sinks) {
  auto run = [&](EngineOptions engine_options) {
    engine_options.audit_every_step = options.audit_every_step;
    Engine engine(scenario, engine_options);
    for (StepSink* s : sinks) engine.add_sink(s);
    engine.run_to_end();
  };
  if (!options.with_model) {
    run({});
    return std::nullopt;
  }
  std::optional<MlaWeights> seeded;
  const MlaWeights* weights = options.weights;
  if (!weights) weights = &seeded.emplace(seeded_weights(scenario.model));
  const std::unique_ptr<Backend> backend = make_replay_backend(*weights, scenario, options);
  if (options.on_backend) options.on_backend(backend->precision());
  EngineOptions engine_options;
  engine_options.backend = backend.get();
  engine_options.force_prefill_path = options.force_prefill_path;
  run(engine_options);
  return backend->precision();
}

CpuBackendOptions cpu_backend_options(const Scenario& scenario, CpuPrecision precision, const FaultSet& faults,
                                      int tensor_parallel_size) {
  CpuBackendOptions cpu;
  cpu.tensor_parallel_size = tensor_parallel_size > 0 ? tensor_parallel_size : scenario.parallel.tensor_parallel_size;
  cpu.num_blocks = scenario.scheduler.num_gpu_blocks;
  cpu.block_size = scenario.scheduler.block_size;
  cpu.faults = faults;
  // model.dtype bf16: the latent cache holds bf16 values, as an engine's does; compute stays in
  // the backend's precision.
  cpu.bf16_cache = scenario.model.dtype == ModelDtype::kBf16 && precision == CpuPrecision::kFloat;
  // An fp8 KV cache holds what vLLM's holds in both precisions (attention/kv_cache_quant.h).
  cpu.cache_quant = scenario_kv_cache_quant(scenario).quant;
  return cpu;
}

ModelMemory model_memory(const Scenario& scenario, CpuPrecision precision) {
  double numel = 0;
  for (const WeightSpec& w : weight_specs(scenario.model)) {
    double n = 1;
    for (int d : w.shape) n *= d;
    numel += n;
  }
  const ModelConfig& m = scenario.model;
  const SchedulerConfig& sc = scenario.scheduler;
  const double value_bytes = precision == CpuPrecision::kDouble ? 8 : 4;
  ModelMemory mem;
  mem.weights = numel * 4 + (precision == CpuPrecision::kDouble ? numel * 8 : 0);
  const int row = m.kv_lora_rank + m.qk_rope_head_dim + (has_dsa_indexer(m) ? m.index_head_dim : 0);  // + index keys
  mem.cache = static_cast<double>(sc.num_gpu_blocks) * sc.block_size * row *
              m.num_hidden_layers * m.num_attn_modules * value_bytes * std::max(1, scenario.parallel.tensor_parallel_size);
  return mem;
}

double physical_memory_bytes() {
  return static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGE_SIZE));
}

Status model_memory_check(const Scenario& scenario, CpuPrecision precision, double limit_bytes) {
  if (const KvCacheQuantResult q = scenario_kv_cache_quant(scenario); !q.unsupported.empty()) {
    Error e;
    e.file = scenario.source;
    e.key_path = "cache.kv_cache_dtype";
    e.message = q.unsupported;
    e.hint = "set cache.kv_cache_dtype to auto, bfloat16, fp8, fp8_e4m3 or fp8_ds_mla, or run --dry-run";
    return e;
  }
  const ModelMemory mem = model_memory(scenario, precision);
  const double weights = mem.weights, cache = mem.cache;
  if (limit_bytes <= 0) limit_bytes = physical_memory_bytes();
  if (weights + cache <= limit_bytes) return Status::Ok();
  Error e;
  e.file = scenario.source;
  e.key_path = "model";
  e.message = "the model needs " + format_bytes(weights + cache) + " on the CPU (weights " + format_bytes(weights) +
              ", KV cache " + format_bytes(cache) + "), more than the " + format_bytes(limit_bytes) +
              " of memory this machine has";
  e.hint = "shrink the model's dimensions (or choose a smaller preset) or scheduler.num_gpu_blocks; --dry-run needs no model";
  return e;
}

ReplayOptions golden_replay_options() {
  ReplayOptions o;
  o.precision = CpuPrecision::kDouble;
  o.force_prefill_path = true;
  o.tensor_parallel_size = 1;
  return o;
}


}  // namespace mlasim
