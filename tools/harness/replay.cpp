// Scenario replays with the CPU backend.
#include "tools/harness/replay.h"

#include <memory>
#include <optional>

#include "tools/harness/engine.h"
#include "tools/harness/run_collector.h"

namespace mlasim {

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
  std::unique_ptr<Backend> backend;
  if (options.make_backend) {
    backend = options.make_backend(*weights, scenario, options.faults);
  } else {
    CpuBackendOptions cpu;
    cpu.tensor_parallel_size =
        options.tensor_parallel_size > 0 ? options.tensor_parallel_size : scenario.parallel.tensor_parallel_size;
    cpu.num_blocks = scenario.scheduler.num_gpu_blocks;
    cpu.block_size = scenario.scheduler.block_size;
    cpu.faults = options.faults;
    // model.dtype bf16: the latent cache holds bf16 values, as an engine's does; compute stays in
    // the backend's precision. The golden (fp64) never rounds.
    cpu.bf16_cache = scenario.model.dtype == ModelDtype::kBf16 && options.precision == CpuPrecision::kFloat;
    backend = make_cpu_backend(*weights, cpu, options.precision);
  }
  EngineOptions engine_options;
  engine_options.backend = backend.get();
  engine_options.force_prefill_path = options.force_prefill_path;
  run(engine_options);
  return backend->precision();
}

ReplayOptions golden_replay_options() {
  ReplayOptions o;
  o.precision = CpuPrecision::kDouble;
  o.force_prefill_path = true;
  o.tensor_parallel_size = 1;
  return o;
}


}  // namespace mlasim
