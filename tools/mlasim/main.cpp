// mlasim: replay MLA serving scenarios through vLLM's V1 scheduler and attention routing, run
// real MLA kernels, and compare splits and logits against goldens.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <unistd.h>
#include <new>

#include "attention/cpu/cpu_gemm.h"
#include "base/atomic_file.h"
#include "tools/mlasim/commands.h"

namespace {

// A command's exit code once what it printed has reached stdout: a write error there (a full
// disk, a closed descriptor, a pipe whose reader left) is an output that could not be written,
// exit 3, never a silent 0.
int with_stdout_flushed(int exit_code) {
  std::cout.flush();
  const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout) || std::cout.fail();
  if (!failed) return exit_code;
  // The failed write's errno is gone by now (later calls overwrote it): one more byte, which
  // cannot land either, gives the reason (ENOSPC, EBADF, EPIPE, EIO).
  errno = 0;
  const int err = ::write(STDOUT_FILENO, "\n", 1) < 0 && errno != 0 ? errno : EIO;
  std::cerr << "mlasim: error: cannot write to stdout: " << std::strerror(err) << "\n";
  if (mlasim::is_output_errno(err)) std::cerr << "  hint: " << mlasim::output_errno_hint(err) << "\n";
  return exit_code == mlasim::cli::kExitBadInput ? exit_code : mlasim::cli::kExitOutputFailed;
}

// Every option that takes a value refuses an empty one (`--json ''`, `-o ''`, `--shard ''`):
// an empty path or number is a mistake in a script, never a way to leave the option out.
void refuse_empty_values(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    if (opt->get_type_size() == 0) continue;  // a flag
    opt->check(CLI::Validator(
        [](std::string& value) { return value.empty() ? std::string("an empty value: give one, or leave the option out") : std::string(); },
        "", "NONEMPTY"));
  }
  for (CLI::App* sub : app.get_subcommands({})) refuse_empty_values(*sub);
}

// `mlasim nosuch`: the unknown command named, with the commands there are (CLI11 would only say
// that a subcommand is required).
bool known_command(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return true;
  for (const CLI::App* sub : app.get_subcommands({}))
    if (sub->check_name(argv[1])) return true;
  std::string names;
  for (const CLI::App* sub : app.get_subcommands({})) names += (names.empty() ? "" : ", ") + sub->get_name();
  std::cerr << "mlasim: error: unknown command '" << argv[1] << "'; the commands are " << names
            << " (mlasim --help says what each does)\n";
  return false;
}

// Every command, in the order --help lists them; each sets `exit_code` when it ran.
void add_commands(CLI::App& app, int& exit_code) {
  mlasim::cli::add_run_command(app, exit_code);
  mlasim::cli::add_check_command(app, exit_code);
  mlasim::cli::add_route_command(app, exit_code);
  mlasim::cli::add_deploy_command(app, exit_code);
  mlasim::cli::add_golden_command(app, exit_code);
  mlasim::cli::add_export_command(app, exit_code);
  mlasim::cli::add_import_command(app, exit_code);
  mlasim::cli::add_fuzz_command(app, exit_code);
  mlasim::cli::add_shrink_command(app, exit_code);
  mlasim::cli::add_matrix_command(app, exit_code);
  mlasim::cli::add_releases_command(app, exit_code);
  mlasim::cli::add_merge_command(app, exit_code);
  mlasim::cli::add_version_command(app, exit_code);
  refuse_empty_values(app);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "mlasim: a scheduler and attention-routing simulator and regression harness for MLA\n"
      "(Multi-head Latent Attention) serving. It replays YAML request traces through vLLM's V1\n"
      "scheduler, routes every token to MLA's prefill path (MHA form) or decode path (absorbed\n"
      "MQA form) under an engine profile, and compares the num_mha/num_mqa split and the logits\n"
      "against goldens.\n\n"
      "Examples:\n"
      "  mlasim run scenarios/seed/lone_one_token_prompt.yaml --dry-run\n"
      "  mlasim run scenarios/seed/lone_one_token_prompt.yaml --set engine.profile=strict\n"
      "  mlasim check scenarios/\n"
      "  mlasim import azure AzureLLMInferenceTrace_conv.csv -o /tmp/azure_conv.yaml\n"
      "  mlasim fuzz --set engine.attention_backend=flashinfer-mla -o /tmp/found\n"
      "  mlasim matrix --markdown routing_matrix.md\n\n"
      "Exit codes: 0 ok, 1 regression, 2 bad input, 3 an output could not be written (disk full, I/O\n"
      "error), 4 the replay stopped where vLLM's own scheduler cannot go on (run, check, golden update),\n"
      "77 a GPU was requested and none is present.",
      "mlasim"};
  mlasim::release_blas_threads();
  if (!mlasim::cli::cpu_threads_env_ok()) return mlasim::cli::kExitBadInput;
  app.require_subcommand(1);
  app.fallthrough(false);
  int exit_code = mlasim::cli::kExitOk;
  add_commands(app, exit_code);
  if (!known_command(app, argc, argv)) return mlasim::cli::kExitBadInput;
  try {
    app.parse(argc, argv);
    return with_stdout_flushed(exit_code);
  } catch (const CLI::CallForHelp& e) {
    return with_stdout_flushed(app.exit(e));
  } catch (const CLI::CallForAllHelp& e) {
    return with_stdout_flushed(app.exit(e));
  } catch (const CLI::ParseError& e) {
    app.exit(e);  // prints the message and usage
    return mlasim::cli::kExitBadInput;
  } catch (const std::filesystem::filesystem_error& e) {
    // What a command did not report itself, never an abort: the path and the OS's reason.
    const int err = e.code().value();
    std::cerr << "mlasim: error: " << e.path1().string() << ": " << e.code().message() << "\n";
    if (!mlasim::is_output_errno(err)) return mlasim::cli::kExitBadInput;
    std::cerr << "  hint: " << mlasim::output_errno_hint(err) << "\n";
    return mlasim::cli::kExitOutputFailed;
  } catch (const std::bad_alloc&) {
    std::cerr << "mlasim: error: out of memory: the scenario asks for more memory than this process can allocate\n";
    return mlasim::cli::kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "mlasim: error: " << e.what() << "\n";
    return mlasim::cli::kExitBadInput;
  }
  return exit_code;
}
