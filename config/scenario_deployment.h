// What vLLM 0.33.0 runs for a scenario's deployment: the model's config checks
// (verify_and_update_config), the backend (auto or explicit), the block size and the model
// runner, written back into the scenario (engine.attention_backend, scheduler.block_size,
// engine.model_runner) so everything downstream replays that.
#pragma once

#include <string>

#include "config/scenario.h"

namespace mlasim {

// The selection's query for a scenario (serving dtype, heads per rank, dims, k, block size).
BackendQuery backend_query(const Scenario& s);

// Resolves s.deployment and the engine/scheduler fields it decides. Profiles before vLLM 0.33
// keep their historical defaults (flashattn-mla, block 16, runner v1). Returns "" or vLLM's
// refusal (the scenario is then invalid: exit 2), or, starting "mlasim ", a deployment mlasim does
// not model (a hybrid family on an AMD GPU).
std::string resolve_deployment(Scenario& s);

// The chain as text, one link a line: model → MLA/sparse → candidates → backend → block size →
// runner (`--explain`, `mlasim deploy`).
std::string explain_deployment(const Scenario& s);

}  // namespace mlasim
