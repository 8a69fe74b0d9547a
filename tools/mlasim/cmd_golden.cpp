// `mlasim golden update SCENARIO...`: regenerate goldens from the reference backend.
#include "tools/mlasim/commands.h"

namespace mlasim::cli {

void add_golden_command(CLI::App& app, int& exit_code) {
  auto scenarios = std::make_shared<std::vector<std::string>>();
  auto golden_dir = std::make_shared<std::string>("golden");
  CLI::App* cmd = app.add_subcommand("golden", "Manage goldens (nobody edits them by hand).\n"
                                               "Example: mlasim golden update scenarios/seed/*.yaml");
  cmd->require_subcommand(1);
  CLI::App* update = cmd->add_subcommand(
      "update",
      "Regenerate golden/<name>/ (split.txt, logits) for each SCENARIO from the CPU reference in double\n"
      "precision, atomically (write beside, then rename), stamping provenance.\n"
      "Example: mlasim golden update scenarios/seed/lone_one_token_prompt.yaml");
  update->add_option("scenarios", *scenarios, "Scenario files or directories")->required();
  update->add_option("--golden-dir", *golden_dir, "Where goldens live (default: golden)");
  update->callback([&exit_code] { exit_code = not_implemented("golden update", "golden generation"); });
}

}  // namespace mlasim::cli
