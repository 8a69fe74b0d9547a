// The subcommands of `mlasim`: each file registers one on the app and reports an exit code.
#pragma once

#include <CLI/CLI.hpp>

#include "attention/faults.h"
#include "base/status.h"

namespace mlasim::cli {

// Exit codes (docs/design.md): only the CLI maps errors to these.
// 4: the replay stopped at a step where vLLM's own scheduler cannot go on (VllmCannotRun); the
// outputs hold the steps before it.
enum ExitCode : int {
  kExitOk = 0,
  kExitRegression = 1,
  kExitBadInput = 2,
  kExitOutputFailed = 3,
  kExitVllmCannotRun = 4,
  kExitNoGpu = 77
};

// Prints the error and returns its exit code: 3 when an output could not be written
// (Error::output: disk full, I/O error), else 2 (bad input).
int report_error(const Error& error);

// Each add_* registers a subcommand whose callback stores its exit code in `exit_code`.
void add_run_command(CLI::App& app, int& exit_code);
void add_check_command(CLI::App& app, int& exit_code);
void add_route_command(CLI::App& app, int& exit_code);
void add_deploy_command(CLI::App& app, int& exit_code);
void add_golden_command(CLI::App& app, int& exit_code);
void add_export_command(CLI::App& app, int& exit_code);
void add_import_command(CLI::App& app, int& exit_code);
void add_version_command(CLI::App& app, int& exit_code);
void add_fuzz_command(CLI::App& app, int& exit_code);
void add_shrink_command(CLI::App& app, int& exit_code);
void add_matrix_command(CLI::App& app, int& exit_code);
void add_releases_command(CLI::App& app, int& exit_code);
void add_merge_command(CLI::App& app, int& exit_code);

// Parses --inject names into `faults`; on an unknown name prints the known ones and returns false.
bool parse_faults(const std::vector<std::string>& names, FaultSet& faults);

// True when `path` (an output file of `flag`) is "" or sits in an existing directory; else prints
// why and returns false, so a long run never ends with an unwritable report.
bool output_path_ok(const char* flag, const std::string& path);

// --seed: a decimal 0..2^64-1 (no sign, no exponent: CLI11 would wrap -1 or saturate 2^64).
CLI::Validator seed_validator();
// --time: finite seconds in (0, max_seconds] (not nan, not 0).
CLI::Validator seconds_validator(double max_seconds);

// Writes each (path, text) whose path is not "" as one output set, as `run` publishes its outputs:
// first what a killed mlasim left beside those targets is completed or removed (a note on stderr
// each, base/output_set.h), then every file is written and synced beside its target, then all are
// renamed into place together; a failure (a full disk, a read-only folder: exit 3) publishes none.
Status write_output_set(const std::vector<std::pair<std::string, std::string>>& files);

// A command's files: (flag or role, path as given); "" paths are skipped.
using NamedPaths = std::vector<std::pair<std::string, std::string>>;
// True when no two outputs name the same file and no output names an input (the scenario, its
// requests file, a scenario `check` reads); else prints which, exit 2 for the caller, before
// anything is written.
bool outputs_distinct(const NamedPaths& outputs, const NamedPaths& inputs);

// Registers --cpu-threads N|auto on `cmd`: the CPU reference's thread count (set_cpu_threads).
void add_cpu_threads_option(CLI::App* cmd);

// Reads MLASIM_CPU_THREADS; false (after saying why) when it is set to something other than auto or
// 1..1024.
bool cpu_threads_env_ok();

// Returns kExitOk when `device` is usable, else prints why and returns 77 (no GPU) or 2.
int check_device(const std::string& device);

}  // namespace mlasim::cli
