// One replay of a scenario with or without the MLA model: builds the weights and the CPU
// backend the options ask for, drives the Engine to completion, returns the record.
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include "attention/backend.h"
#include "attention/cpu/cpu_backend.h"
#include "attention/faults.h"
#include "model/mla_weights.h"
#include "config/scenario.h"
#include "base/status.h"
#include "engine/run_record.h"
#include "engine/step_sink.h"

namespace mlasim {

class Engine;

// Builds the backend under test for a scenario from its weights (the CLI passes the CUDA one;
// the harness itself knows only the CPU backend, so it never depends on attention/cuda).
using BackendFactory = std::function<std::unique_ptr<Backend>(const MlaWeights&, const Scenario&, const FaultSet&)>;

struct ReplayOptions {
  bool with_model = true;                       // false: dry run (scheduler + routing only)
  CpuPrecision precision = CpuPrecision::kFloat;
  bool force_prefill_path = false;              // golden mode
  int tensor_parallel_size = 0;                 // 0: the scenario's parallel.tensor_parallel_size
  FaultSet faults;
  const MlaWeights* weights = nullptr;          // nullptr: the scenario's seeded weights
  BackendFactory make_backend;                  // empty: the CPU backend in `precision`
  bool audit_every_step = false;                // the block pool audit after every step (else sampled)
  // An engine about to be dropped whose storage the session's engine reuses (Engine's donor; fuzz
  // hands on each thread's last one: ReplaySession::release_engine).
  Engine* engine_donor = nullptr;
  // Told the backend's precision class once the backend exists, before the first step (a model
  // run's golden check takes its tolerance from it).
  std::function<void(PrecisionClass)> on_backend;
};

// The backend `options` asks for over `weights`: its factory's, else the CPU backend in its
// precision and TP size, with its faults.
std::unique_ptr<Backend> make_replay_backend(const MlaWeights& weights, const Scenario& scenario,
                                             const ReplayOptions& options);

RunRecord replay(const Scenario& scenario, const ReplayOptions& options);

// Why a backend that computes dense MLA (the CUDA backend: no DSA indexer yet, docs/spec/mla.md §10)
// would not compute this scenario's sparse model: "its sparse model's sequences pass index_topk N"
// when one of its sequences can (the prompt, the outputs fed back and a verify step's drafts; a
// requests_file's are not known before the replay, so they count), else "".
std::string sparse_past_index_topk(const Scenario& scenario);
// The same run handing every step to `sinks` and keeping nothing itself. Returns the backend's
// precision class (nullopt for a dry run).
std::optional<PrecisionClass> replay(const Scenario& scenario, const ReplayOptions& options,
                                     const std::vector<StepSink*>& sinks);

// What running the scenario's model on the CPU allocates, in bytes: the seeded weights (float;
// the fp64 backend adds a double copy) and the latent KV cache of every block (per TP rank).
struct ModelMemory {
  double weights = 0, cache = 0;
  double total() const { return weights + cache; }
};
ModelMemory model_memory(const Scenario& scenario, CpuPrecision precision);
double physical_memory_bytes();

// What running the scenario's model on the CPU allocates: the seeded weights (float; the fp64
// backend adds a double copy) and the latent KV cache of every block (per TP rank). An error
// naming the scenario, the sizes and the limit when it is more than `limit_bytes` (0: this
// machine's physical memory), so a huge model is refused before anything is allocated. Also
// refused: a KV cache dtype whose numerics mlasim does not model (attention/kv_cache_quant.h).
Status model_memory_check(const Scenario& scenario, CpuPrecision precision, double limit_bytes = 0);

// The CPU backend's options for a scenario: its blocks, its TP size (`tensor_parallel_size` 0:
// the scenario's), the faults, and a bf16 latent cache for model.dtype bf16 in float precision
// (the golden, fp64, never rounds).
CpuBackendOptions cpu_backend_options(const Scenario& scenario, CpuPrecision precision, const FaultSet& faults,
                                      int tensor_parallel_size = 0);

// The golden reference: fp64, TP 1, every token through the prefill form (on an fp8 KV cache,
// the form the routing gives it: Engine), no faults.
ReplayOptions golden_replay_options();

}  // namespace mlasim
