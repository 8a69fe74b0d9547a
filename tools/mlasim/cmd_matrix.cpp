// `mlasim matrix`: the routing matrix, as a text table, Markdown and JSON.
#include <iostream>
#include <memory>

#include "tools/fuzz/matrix.h"
#include "base/atomic_file.h"
#include "tools/mlasim/commands.h"
#include "tools/mlasim/fuzz_cli.h"

namespace mlasim::cli {
namespace {

struct MatrixFlags {
  int runs = 300;
  unsigned long long seed = 0;
  bool model = false;
  std::vector<std::string> injects;
  std::string json_path;
  std::string markdown_path;
  bool markdown_stdout = false;
  std::string jobs = "0";
  std::string shard;  // --shard I/N|auto ("": every cell)
};

int run_matrix(const MatrixFlags& f) {
  MatrixOptions options;
  options.runs = f.runs;
  options.seed = f.seed;
  options.with_model = f.model;
  if (!parse_jobs_and_shard(f.jobs, f.shard, options.jobs, options.shard)) return kExitBadInput;
  if (!parse_faults(f.injects, options.faults)) return kExitBadInput;
  if (!options.faults.empty() && !f.model) {
    std::cerr << "mlasim matrix: --inject changes the model's math, so it needs --model\n";
    return kExitBadInput;
  }
  if (!output_path_ok("--json", f.json_path) || !output_path_ok("--markdown", f.markdown_path)) return kExitBadInput;
  if (!outputs_distinct({{"--json", f.json_path}, {"--markdown", f.markdown_path}}, {})) return kExitBadInput;
  const std::vector<MatrixCell> cells = routing_matrix(options);
  std::cout << (f.markdown_stdout ? matrix_markdown(cells, options) : matrix_text(cells, options));
  if (Status st = write_output_set({{f.json_path, f.json_path.empty() ? "" : matrix_json(cells, options)},
                                    {f.markdown_path, f.markdown_path.empty() ? "" : matrix_markdown(cells, options)}});
      !st)
    return report_error(st.error());
  return kExitOk;
}

}  // namespace

void add_matrix_command(CLI::App& app, int& exit_code) {
  auto f = std::make_shared<MatrixFlags>();
  CLI::App* cmd = app.add_subcommand(
      "matrix",
      "For every engine profile x attention backend x speculative tokens k in {0, 1, 3} x chunked\n"
      "prefill on/off: the smallest batch that puts a fresh prefill (nct = 0) on MLA's decode path,\n"
      "found by `mlasim fuzz` (the cell's profile, backend, k and chunking pinned; thresholds, budgets,\n"
      "blocks and prefix caching drawn) and shrunk, or \"none found in N runs\". With --model: whether\n"
      "routing that batch this way changes the logits of the fp64 CPU reference against the strict\n"
      "profile's routing of the same schedule (\"same\": the two paths agree within the fp64 class).\n"
      "The same seed and --runs give the same table.\n"
      "Exit 0, or 2 on bad input.\n"
      "Examples: mlasim matrix\n"
      "          mlasim matrix --runs 1000 --json matrix.json --markdown matrix.md\n"
      "          mlasim matrix --model --inject decode_skips_cache_write_for_fresh_rows --markdown-stdout");
  cmd->add_option("--runs", f->runs, "Fuzz runs per cell (default 300)")->check(CLI::Range(1, 1 << 24));
  cmd->add_option("--seed", f->seed, "Seed of the fuzz distribution (default 0)")->check(seed_validator());
  cmd->add_flag("--model", f->model, "Also replay each found batch with the model in fp64 (tiny preset)");
  cmd->add_option("--inject", f->injects, "Inject a fault into those model runs (repeatable; see `mlasim run --help`)");
  cmd->add_option("-j,--jobs", f->jobs, "Cells filled at once (default 0: one per hardware thread); the same table for any N")
      ->type_name("N");
  cmd->add_option("--json", f->json_path, "Write the matrix as JSON to FILE");
  cmd->add_option("--shard", f->shard,
                  "Fill only the cells whose index i (in the table's order) has i % N == I; `mlasim merge` joins\n"
                  "the shards' --json reports into the whole matrix's; auto: the shard a Slurm job array, a\n"
                  "Kubernetes Indexed Job or GTEST_SHARD_INDEX/GTEST_TOTAL_SHARDS names (`mlasim check --help`)")
      ->type_name("I/N|auto");
  cmd->add_option("--markdown", f->markdown_path, "Write the matrix as a Markdown table to FILE");
  cmd->add_flag("--markdown-stdout", f->markdown_stdout, "Print the Markdown table instead of the text table");
  cmd->callback([f, &exit_code] { exit_code = run_matrix(*f); });
}

}  // namespace mlasim::cli
