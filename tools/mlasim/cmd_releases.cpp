// `mlasim releases`: the release matrix (deploy/release_matrix.h), as text, Markdown and JSON.
#include <iostream>
#include <memory>

#include "deploy/release_matrix.h"
#include "tools/mlasim/commands.h"

namespace mlasim::cli {
namespace {

struct ReleasesFlags {
  std::string json_path;
  std::string markdown_path;
  bool markdown_stdout = false;
};

int run_releases(const ReleasesFlags& f) {
  if (!output_path_ok("--json", f.json_path) || !output_path_ok("--markdown", f.markdown_path)) return kExitBadInput;
  if (!outputs_distinct({{"--json", f.json_path}, {"--markdown", f.markdown_path}}, {})) return kExitBadInput;
  auto cells = release_matrix();
  if (!cells) return report_error(cells.error());
  std::cout << (f.markdown_stdout ? release_matrix_markdown(cells.value()) : release_matrix_text(cells.value()));
  if (Status st = write_output_set({{f.json_path, f.json_path.empty() ? "" : release_matrix_json(cells.value())},
                                    {f.markdown_path, f.markdown_path.empty() ? "" : release_matrix_markdown(cells.value())}});
      !st)
    return report_error(st.error());
  return kExitOk;
}

}  // namespace

void add_releases_command(CLI::App& app, int& exit_code) {
  auto f = std::make_shared<ReleasesFlags>();
  CLI::App* cmd = app.add_subcommand(
      "releases",
      "For each vLLM release an engine profile reproduces x the MLA backends that release ships: how\n"
      "the misrouting report's probes route (a lone 1-token prompt, a lone 5-token prompt, a 1-token\n"
      "prompt behind a decode, with k = 0; a short fresh prompt of 1 + k tokens with k = 1 and 3):\n"
      "the path, whether the fresh prompt takes the decode path, and the step's num_mqa/num_mha. Each\n"
      "release says whether its real code was run against the profile (tools/conformance/) and the\n"
      "counts. Then every MLA model family vLLM 0.33 serves: how mlasim reads it, its shipped configs\n"
      "and what was checked against vLLM and transformers, with the counts. A dry replay of generated\n"
      "scenarios; the same output every time.\n"
      "Exit 0, 2 on bad input, 3 when an output cannot be written.\n"
      "Examples: mlasim releases\n"
      "          mlasim releases --json releases.json --markdown-stdout");
  cmd->add_option("--json", f->json_path, "Write the matrix as JSON to FILE");
  cmd->add_option("--markdown", f->markdown_path, "Write the matrix as a Markdown table to FILE");
  cmd->add_flag("--markdown-stdout", f->markdown_stdout, "Print the Markdown table instead of the text table");
  cmd->callback([f, &exit_code] { exit_code = run_releases(*f); });
}

}  // namespace mlasim::cli
