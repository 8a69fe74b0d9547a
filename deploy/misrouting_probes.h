// The misrouting report's probes: a lone 1-token prompt, a lone 5-token prompt, a 1-token prompt
// behind a decode and, with k speculative tokens, a short fresh prompt of 1 + k tokens. Each is a
// request placed so that it is scheduled alone in its step (or beside one decode); a dry replay
// says which MLA path the step gives it. `mlasim deploy` and `mlasim releases` share them.
#pragma once

#include <string>
#include <vector>

#include "engine/run_record.h"
#include "scenario/yaml_document.h"

namespace mlasim {

struct ProbeSpec {
  const char* name;  // "lone 1-token prompt"
  const char* id;    // the request's id
  int arrival_step;
  int prompt_len;
  int max_tokens;
};

// The probes' requests (with the decode behind which the third probe runs); the short fresh prompt
// only when k > 0.
std::vector<ProbeSpec> misrouting_probe_specs(int num_speculative_tokens);

// The requests as a scenario's `requests:` sequence (prompt_len, ignore_eos), commented with names.
YamlValue probe_requests_yaml(int num_speculative_tokens);

// One probe's outcome: how the step that first schedules the request routes it.
struct ProbeResult {
  std::string name;
  std::string id;
  int step = 0;
  int q = 0, nct = 0, prompt_len = 0;
  bool decode_path = false;  // MQA (absorbed) form
  bool fresh_on_decode_path = false;
  int num_mqa = 0, num_mha = 0;  // the step's totals, as vLLM logs them
  // A model with linear-attention (KDA) layers: the step's split of those layers.
  bool has_linear_attention = false;
  LinearAttentionSplit linear_attention;
};

// The probes of a dry replay of a scenario holding probe_requests_yaml(k), in spec order (the
// decode backdrop left out). A probe never scheduled is missing.
std::vector<ProbeResult> probe_results(const RunRecord& run, int num_speculative_tokens);

}  // namespace mlasim
