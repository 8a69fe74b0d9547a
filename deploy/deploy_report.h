// `mlasim deploy`: from a config.json and a deployment (GPU, TP, KV dtype, block size, k) to
// vLLM 0.33.0's backend, block size and runner, and what happens to the misrouting report's
// probes. The deployment is written as a scenario first (deployment_scenario_yaml), loaded like
// any other, and replayed dry: the probes are that scenario's steps, so `-o` hands the user
// exactly what was evaluated.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/scenario.h"
#include "scenario/hf_config.h"
#include "base/status.h"
#include "deploy/misrouting_probes.h"

namespace mlasim {

struct DeployOptions {
  std::string hf_config;           // path as given
  std::string gpu = "h200";
  std::string kv_cache_dtype = "auto";
  int tensor_parallel_size = 1;
  std::optional<int> block_size;
  int num_speculative_tokens = 0;
  std::string attention_backend = "auto";
  // --max-model-len as resolved by deploy_max_model_len (vLLM's derived length when not given), and
  // the model's max_position_embeddings raised to it when it is longer (a model_max_length, a RoPE factor).
  int max_model_len = 0;
  std::optional<int> max_position_embeddings;
  std::string max_model_len_source;  // for the report: "--max-model-len" or the config key it came from
};

struct DeployReport {
  Scenario scenario;
  std::string max_model_len_source;
  std::vector<ProbeResult> probes;  // deploy/misrouting_probes.h
};

// max_model_len as vLLM 0.33 resolves --max-model-len against the config (vllm/config/model.py,
// _get_and_verify_max_len): `user` when given and at most the derived length (or at most the
// config's model_max_length, or the config names no length), else vLLM's ValueError as an error
// naming --max-model-len, unless `allow_long` (VLLM_ALLOW_LONG_MAX_MODEL_LEN) makes it vLLM's
// warning, in `warning`; without `user`, the derived length.
Result<int> deploy_max_model_len(const HfDerivedMaxLen& derived, std::optional<int> user, bool allow_long,
                                 std::string& warning);

// VLLM_ALLOW_LONG_MAX_MODEL_LEN as vLLM's envs.py reads it: "1" or "true" (any case, spaces
// stripped).
bool vllm_allow_long_max_model_len();

// The scenario of the deployment. `hf_config_ref` is how the scenario names the config (relative
// to where the scenario will be written, or absolute).
std::string deployment_scenario_yaml(const DeployOptions& o, const std::string& hf_config_ref);

// Loads that scenario (as `display_name`) and replays it dry. Errors are the loader's: a config
// vLLM refuses, a deployment with no valid backend. An error in the scenario itself (which is not
// a file the user has) is told as `mlasim deploy`'s, naming the flag that set the key (--tp,
// --block-size, ...), its hint naming flags too; one in the config.json names that file's line,
// column and key.
Result<DeployReport> evaluate_deployment(const DeployOptions& o, const std::string& yaml,
                                         const std::string& display_name);

// The probes' steps as an `expect:` block for the scenario `-o` writes.
std::string probe_expectations_yaml(const DeployReport& r);
std::string deploy_report_text(const DeployReport& r);
std::string deploy_report_json(const DeployReport& r);

}  // namespace mlasim
