// `mlasim deploy --hf-config FILE --gpu G ...`: vLLM 0.33.0's backend, block size and runner for a
// deployment, and what happens to the misrouting report's probes.
#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>

#include "config/deployment.h"
#include "scenario/hf_config.h"
#include "deploy/deploy_report.h"
#include "tools/mlasim/commands.h"

namespace mlasim::cli {
namespace {

struct DeployCliOptions {
  DeployOptions deploy;
  int block_size = 0;
  std::optional<int> max_model_len;
  std::string json_path;
  std::string scenario_path;
};

int run_deploy(DeployCliOptions& o) {
  if (!output_path_ok("--json", o.json_path) || !output_path_ok("-o", o.scenario_path)) return kExitBadInput;
  if (!outputs_distinct({{"--json", o.json_path}, {"-o", o.scenario_path}},
                        {{"the model's config (--hf-config)", o.deploy.hf_config}}))
    return kExitBadInput;
  o.deploy.block_size = o.block_size > 0 ? std::optional<int>(o.block_size) : std::nullopt;
  // The config as vLLM reads it, for its max_model_len; its errors name the file, line, column
  // and key.
  ModelConfig model;
  HfConfigInfo info;
  const Status config_read = read_hf_config(o.deploy.hf_config, model, &info);
  for (const std::string& note : info.notes) std::cerr << "note: " << note << "\n";
  if (!config_read) return report_error(config_read.error());
  std::string warning;
  auto max_model_len = deploy_max_model_len(info.max_len, o.max_model_len, vllm_allow_long_max_model_len(), warning);
  if (!max_model_len) return report_error(max_model_len.error());
  if (!warning.empty()) std::cerr << "warning: --max-model-len: " << warning << "\n";
  o.deploy.max_model_len = max_model_len.value();
  if (o.deploy.max_model_len > model.max_position_embeddings) o.deploy.max_position_embeddings = o.deploy.max_model_len;
  o.deploy.max_model_len_source =
      o.max_model_len ? "--max-model-len"
      : info.max_len.key.empty()
          ? "vLLM's default: the config names no length"
          : "derived as vLLM does from the config: " + info.max_len.key + "=" +
                std::to_string(static_cast<long long>(info.max_len.derived));
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path config = fs::absolute(o.deploy.hf_config, ec);
  // Evaluated as the scenario `-o` writes (its config path relative to it), or in memory; an
  // error in it names the flag, not this name.
  std::string display;
  std::string ref = config.string();
  if (!o.scenario_path.empty()) {
    display = o.scenario_path;
    const fs::path dir = fs::absolute(o.scenario_path, ec).parent_path();
    // Relative to the scenario when the two are close (a shipped config beside scenarios/),
    // else absolute.
    const fs::path rel = fs::relative(config, dir, ec);
    int climbs = 0;
    for (const auto& part : rel) climbs += part == "..";
    if (!ec && !rel.empty() && climbs <= 2) ref = rel.string();
  } else {
    display = (config.parent_path() / "<mlasim deploy>.yaml").string();
    ref = config.filename().string();
  }
  const std::string yaml = deployment_scenario_yaml(o.deploy, ref);
  auto report = evaluate_deployment(o.deploy, yaml, display);
  if (!report) return report_error(report.error());
  std::cout << deploy_report_text(report.value());
  // --json and -o are one output set: both are published, or (a failed write) neither.
  const std::string scenario_text =
      o.scenario_path.empty() ? "" : yaml + probe_expectations_yaml(report.value());  // check holds it to the probes
  if (Status st = write_output_set({{o.json_path, o.json_path.empty() ? "" : deploy_report_json(report.value())},
                                    {o.scenario_path, scenario_text}});
      !st)
    return report_error(st.error());
  if (!o.scenario_path.empty())
    std::cout << "wrote " << o.scenario_path << " (mlasim run / golden update / check take it as it is)\n";
  return kExitOk;
}

}  // namespace

void add_deploy_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<DeployCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "deploy",
      "From a Hugging Face config.json and a deployment to what vLLM 0.33.0 runs: MLA or not, sparse\n"
      "or dense (and why), the attention backend candidates in priority order with vLLM's reasons,\n"
      "the chosen backend's decode threshold and query-length support, the block size, the model\n"
      "runner, and how the misrouting report's probes route (a lone 1-token prompt, a lone 5-token\n"
      "prompt, a 1-token prompt behind a decode; with --spec-tokens a short fresh prompt).\n"
      "The config.json is read as vLLM reads it (strict JSON; a key written twice keeps its last value,\n"
      "with a note); max_model_len is vLLM's, derived from the config unless --max-model-len is given.\n"
      "--json and -o are written together, or neither. Exit 0, 2 on bad input or a deployment vLLM\n"
      "refuses (nothing written), 3 when an output cannot be written.\n"
      "Example: mlasim deploy --hf-config scenarios/hf_configs/deepseek-v3.json --gpu b200 --tp 8");
  cmd->add_option("--hf-config", o->deploy.hf_config, "The model's config.json")->required();
  cmd->add_option("--gpu", o->deploy.gpu, "GPU (default h200)")->check(CLI::IsMember(gpu_names()));
  cmd->add_option("--kv-cache-dtype", o->deploy.kv_cache_dtype, "KV-cache dtype as vLLM names it (default auto)")
      ->check(CLI::IsMember(kv_cache_dtype_names()));
  cmd->add_option("--tp", o->deploy.tensor_parallel_size, "Tensor-parallel size (default 1)")->check(CLI::Range(1, 8));
  cmd->add_option("--block-size", o->block_size, "--block-size as given to vLLM (default: vLLM's auto choice)")
      ->check(CLI::Range(1, 1 << 16));
  cmd->add_option("--spec-tokens", o->deploy.num_speculative_tokens, "Speculative tokens k (MTP)")
      ->check(CLI::Range(0, 64));
  std::vector<std::string> backends = attention_backend_names();
  backends.insert(backends.begin(), "auto");
  cmd->add_option("--attention-backend", o->deploy.attention_backend, "--attention-backend (default auto)")
      ->check(CLI::IsMember(backends));
  cmd->add_option("--max-model-len", o->max_model_len,
                  "--max-model-len as given to vLLM (default: derived from the config as vLLM does; a longer\n"
                  "value is refused as vLLM refuses it unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1)")
      ->check(CLI::Range(2, 1 << 24));
  cmd->add_option("--json", o->json_path, "Also write the chain as JSON");
  cmd->add_option("-o", o->scenario_path, "Also write the deployment as a scenario with the probes");
  cmd->callback([o, &exit_code] { exit_code = run_deploy(*o); });
}

}  // namespace mlasim::cli
