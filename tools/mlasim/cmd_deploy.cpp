// `mlasim deploy --hf-config FILE --gpu G ...`: vLLM 0.33.0's backend, block size and runner for a
// deployment, and what happens to the misrouting report's probes.
#include <filesystem>
#include <iostream>
#include <limits>

#include "config/deployment.h"
#include "base/atomic_file.h"
#include "report/deploy_report.h"
#include "tools/mlasim/commands.h"

namespace mlasim::cli {
namespace {

struct DeployCliOptions {
  DeployOptions deploy;
  int block_size = 0;
  std::string json_path;
  std::string scenario_path;
};

int run_deploy(DeployCliOptions& o) {
  if (!output_path_ok("--json", o.json_path) || !output_path_ok("-o", o.scenario_path)) return kExitBadInput;
  o.deploy.block_size = o.block_size > 0 ? std::optional<int>(o.block_size) : std::nullopt;
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path config = fs::absolute(o.deploy.hf_config, ec);
  // Evaluated as the scenario `-o` writes (its config path relative to it), or in memory.
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
  if (!o.json_path.empty())
    if (Status st = write_file_atomically(o.json_path, deploy_report_json(report.value())); !st)
      return report_error(st.error());
  if (!o.scenario_path.empty()) {
    // With the probes' expectations: `mlasim check` holds the scenario to what was printed.
    if (Status st = write_file_atomically(o.scenario_path, yaml + probe_expectations_yaml(report.value())); !st)
      return report_error(st.error());
    std::cout << "wrote " << o.scenario_path << " (mlasim run / golden update / check take it as it is)\n";
  }
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
  cmd->add_option("--json", o->json_path, "Also write the chain as JSON");
  cmd->add_option("-o", o->scenario_path, "Also write the deployment as a scenario with the probes");
  cmd->callback([o, &exit_code] { exit_code = run_deploy(*o); });
}

}  // namespace mlasim::cli
