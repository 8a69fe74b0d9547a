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
#include "base/status.h"
#include "report/misrouting_probes.h"

namespace mlasim {

struct DeployOptions {
  std::string hf_config;           // path as given
  std::string gpu = "h200";
  std::string kv_cache_dtype = "auto";
  int tensor_parallel_size = 1;
  std::optional<int> block_size;
  int num_speculative_tokens = 0;
  std::string attention_backend = "auto";
};

struct DeployReport {
  Scenario scenario;
  std::vector<ProbeResult> probes;  // report/misrouting_probes.h
};

// The scenario of the deployment. `hf_config_ref` is how the scenario names the config (relative
// to where the scenario will be written, or absolute).
std::string deployment_scenario_yaml(const DeployOptions& o, const std::string& hf_config_ref);

// Loads that scenario (as `display_name`) and replays it dry. Errors are the loader's: a config
// vLLM refuses, a deployment with no valid backend.
Result<DeployReport> evaluate_deployment(const DeployOptions& o, const std::string& yaml,
                                         const std::string& display_name);

// The probes' steps as an `expect:` block for the scenario `-o` writes.
std::string probe_expectations_yaml(const DeployReport& r);
std::string deploy_report_text(const DeployReport& r);
std::string deploy_report_json(const DeployReport& r);

}  // namespace mlasim
