// `mlasim merge REPORT... -o FILE`: the reports of a sharded campaign (`check --shard --json` or
// `--junit`, `fuzz --shard --json`, `matrix --shard --json`) joined into the one report an
// unsharded run writes.
#include <iostream>
#include <memory>

#include "base/file_read.h"
#include "harness/check_merge.h"
#include "tools/fuzz/fuzz_report.h"
#include "tools/fuzz/matrix_merge.h"
#include "tools/mlasim/commands.h"

namespace mlasim::cli {
namespace {

struct MergeFlags {
  std::vector<std::string> reports;
  std::string out;
};

constexpr std::size_t kMaxReportBytes = std::size_t{1} << 30;

int run_merge(const MergeFlags& f) {
  if (!output_path_ok("-o", f.out)) return kExitBadInput;
  NamedPaths inputs;
  for (const std::string& r : f.reports) inputs.emplace_back("the report " + r, r);
  if (!outputs_distinct({{"-o", f.out}}, inputs)) return kExitBadInput;
  std::vector<ReportFile> files;
  std::string kind;
  for (const std::string& path : f.reports) {
    Result<std::string> text = read_file_bounded(path, kMaxReportBytes, "a report");
    if (!text) {
      std::cerr << text.error().format() << "\n";
      return kExitBadInput;
    }
    const std::string k = report_kind(text.value());
    if (k.empty() || (!kind.empty() && k != kind)) {
      Error e;
      e.file = path;
      e.line = 1;
      e.column = 1;
      e.message = k.empty() ? "not a report mlasim merges" : "a " + k + " report among " + kind + " reports";
      e.hint = "merge the --json (or the --junit) reports of one `mlasim check`, `fuzz` or `matrix` --shard campaign";
      std::cerr << e.format() << "\n";
      return kExitBadInput;
    }
    kind = k;
    files.push_back(ReportFile{path, std::move(text.value())});
  }
  Result<std::string> merged = kind == "check-json"    ? merge_check_json(files)
                               : kind == "check-junit" ? merge_check_junit(files)
                               : kind == "matrix-json" ? merge_matrix_reports(files)
                                                       : merge_fuzz_reports(files);
  if (!merged) {
    std::cerr << merged.error().format() << "\n";
    return kExitBadInput;
  }
  if (Status st = write_output_set({{f.out, merged.value()}}); !st) return report_error(st.error());
  std::cout << "merged " << files.size() << " shard reports (" << kind << ") into " << f.out << "\n";
  return kExitOk;
}

}  // namespace

void add_merge_command(CLI::App& app, int& exit_code) {
  auto f = std::make_shared<MergeFlags>();
  CLI::App* cmd = app.add_subcommand(
      "merge",
      "Join the reports of a campaign split across machines into the report one unsharded run writes:\n"
      "the --json reports (or the --junit ones) of `mlasim check --shard I/N`, or the --json reports\n"
      "of `mlasim fuzz --shard I/N` (the lowest violating run of all shards, once every run below it\n"
      "has passed in its shard), or the --json reports of `mlasim matrix --shard I/N` (its cells). Every\n"
      "shard 0..N-1 must be there once, from one campaign. The result\n"
      "is byte-identical to the unsharded run's (a JUnit report's times aside).\n"
      "Exit 0, 2 on a report that is not one or shards that do not make one campaign (nothing\n"
      "written), 3 when the output cannot be written.\n"
      "Examples: mlasim merge shard0.json shard1.json shard2.json -o check.json\n"
      "          mlasim merge fuzz-*.json -o fuzz.json");
  cmd->add_option("reports", f->reports, "The shards' reports")->required();
  cmd->add_option("-o,--out", f->out, "The merged report")->required();
  cmd->callback([f, &exit_code] { exit_code = run_merge(*f); });
}

}  // namespace mlasim::cli
