// `mlasim export SCENARIO -o DIR`: the scenario's model as a Hugging Face DeepSeek-V3 checkpoint.
#include "tools/mlasim/commands.h"

namespace mlasim::cli {

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
  cmd->callback([&exit_code] { exit_code = not_implemented("export", "model export"); });
}

}  // namespace mlasim::cli
