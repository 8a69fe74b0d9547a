// `mlasim export SCENARIO -o DIR`: the scenario's model as a Hugging Face DeepSeek-V3 checkpoint.
#include <iostream>

#include "model/mla_weights.h"
#include "base/disk_space.h"
#include "scenario/scenario_loader.h"
#include "output/model_export.h"
#include "engine/replay.h"
#include "tools/mlasim/commands.h"

namespace mlasim::cli {
namespace {

int run_export(const std::string& scenario_path, const std::string& out_dir) {
  Result<Scenario> loaded = load_scenario_file(scenario_path);
  if (!loaded) {
    std::cerr << loaded.error().format() << "\n";
    return kExitBadInput;
  }
  if (Status st = model_memory_check(loaded.value(), CpuPrecision::kFloat); !st) {
    return report_error(st.error());
  }
  // Before the weights are drawn (seconds to minutes for the large presets): the files must fit.
  if (Status st = disk_space_check(out_dir, export_bytes(loaded.value().model), "the export"); !st)
    return report_error(st.error());
  const MlaWeights weights = seeded_weights(loaded.value().model);
  if (Status st = export_hf_checkpoint(out_dir, weights); !st) {
    return report_error(st.error());
  }
  long long numel = 0;
  const auto tensors = weights.tensors();
  for (const NamedWeight& w : tensors) numel += w.tensor->numel();
  std::cout << "wrote " << out_dir << "/config.json and " << out_dir << "/model.safetensors (" << tensors.size()
            << " tensors, " << numel << " float32 values)\n";
  return kExitOk;
}

}  // namespace

void add_export_command(CLI::App& app, int& exit_code) {
  auto scenario = std::make_shared<std::string>();
  auto out_dir = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand(
      "export",
      "Write the scenario's seeded model as config.json + model.safetensors in Hugging Face\n"
      "DeepSeek-V3 layout and names (float32), so other tools can load it.\n"
      "Example: mlasim export scenarios/seed/lone_one_token_prompt.yaml -o /tmp/tiny-mla");
  cmd->add_option("scenario", *scenario, "Scenario YAML file")->required();
  cmd->add_option("-o,--output", *out_dir, "Output directory")->required();
  cmd->callback([scenario, out_dir, &exit_code] { exit_code = run_export(*scenario, *out_dir); });
}

}  // namespace mlasim::cli
