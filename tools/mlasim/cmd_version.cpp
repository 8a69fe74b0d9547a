// `mlasim version`: version, git commit, whether the CUDA backend is compiled in.
#include <iostream>

#include "tools/mlasim/commands.h"

namespace mlasim::cli {

void add_version_command(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("version", "Print the version, the git commit and whether CUDA is compiled in.\n"
                                                "Example: mlasim version");
  cmd->callback([&exit_code] {
    std::cout << "mlasim " << MLASIM_VERSION << "\n";
    std::cout << "commit: " << MLASIM_GIT_COMMIT << "\n";
#if defined(MLASIM_CUDA_EMULATION)
    std::cout << "cuda: yes (mlasim's SIMT emulator on the CPU: results, not timings)\n";
#elif defined(MLASIM_HAVE_CUDA)
    std::cout << "cuda: yes\n";
#else
    std::cout << "cuda: no\n";
#endif
    exit_code = kExitOk;
  });
}

}  // namespace mlasim::cli
