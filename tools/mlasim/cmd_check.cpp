// `mlasim check PATH...`: compare scenarios against their goldens and expect blocks.
#include "tools/mlasim/commands.h"

namespace mlasim::cli {
namespace {

struct CheckOptions {
  std::vector<std::string> paths;
  std::string golden_dir = "golden";
  std::string device = "cpu";
  std::string junit_path;
  std::string json_path;
};

}  // namespace

void add_check_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<CheckOptions>();
  CLI::App* cmd = app.add_subcommand(
      "check",
      "Run every scenario under PATH (files or directories) and compare the split (exactly) and the\n"
      "logits (within the dtype's tolerances) with golden/<name>/, plus each scenario's expect: block.\n"
      "Prints one line per scenario and a closing `N passed, N failed` line.\n"
      "Exit 0 all pass, 1 a regression, 2 bad input, 77 a GPU was requested and none is present.\n"
      "Example: mlasim check scenarios/ --junit report.xml");
  cmd->add_option("paths", o->paths, "Scenario files or directories (default: scenarios/)");
  cmd->add_option("--golden-dir", o->golden_dir, "Directory holding <scenario>/split.txt and logits goldens");
  cmd->add_option("--device", o->device, "Backend: cpu or cuda")->check(CLI::IsMember({"cpu", "cuda"}));
  cmd->add_option("--junit", o->junit_path, "Write a JUnit XML report to FILE");
  cmd->add_option("--json", o->json_path, "Write a JSON report to FILE");
  cmd->callback([o, &exit_code] {
    if (int rc = check_device(o->device); rc != kExitOk) {
      exit_code = rc;
      return;
    }
    exit_code = not_implemented("check", "comparison against goldens");
  });
}

}  // namespace mlasim::cli
