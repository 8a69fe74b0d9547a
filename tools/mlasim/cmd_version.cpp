// `mlasim version`: version, git commit, whether the CUDA backend is there (its module is loaded,
// with cuBLAS, only under --cuda).
#include <filesystem>
#include <iostream>
#include <memory>

#include "attention/cpu/cpu_gemm.h"
#include "model/cpu_thread_pool.h"
#include "tools/mlasim/commands.h"
#ifdef MLASIM_HAVE_CUDA
#include "tools/mlasim/cuda_module.h"
#endif

namespace mlasim::cli {
namespace {

void print_cuda(bool load) {
#if defined(MLASIM_CUDA_EMULATION)
  (void)load;
  std::cout << "cuda: yes (mlasim's SIMT emulator on the CPU: results, not timings)\n";
#elif defined(MLASIM_HAVE_CUDA)
  const std::string path = cuda_backend_module_path();
  if (!load) {
    const bool present = std::filesystem::exists(path);
    std::cout << "cuda: " << (present ? "yes" : "no") << "\n";
    std::cout << "cuda backend: " << path << (present ? " (loaded by --device cuda; `mlasim version --cuda` loads it now)"
                                                      : " is missing (this mlasim was built with CUDA)")
              << "\n";
    return;
  }
  std::string why;
  const CudaBackendModule* cuda = cuda_backend_module(&why);
  std::cout << "cuda: " << (cuda ? "yes" : "no") << "\n";
  if (!cuda) {
    std::cout << "cuda backend: cannot be loaded: " << why << "\n";
    return;
  }
  std::cout << "cuda backend: " << path << " (" << cuda->build << ")\n";
  const int devices = cuda->usable_device_count(&why);
  std::cout << "cuda devices: " << devices << (devices == 0 ? " (" + why + ")" : "") << "\n";
#else
  (void)load;
  std::cout << "cuda: no\n";
#endif
}

}  // namespace

void add_version_command(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("version", "Print the version, the git commit and whether the CUDA backend is there.\n"
                                                "Example: mlasim version --cuda");
  auto load = std::make_shared<bool>(false);
  cmd->add_flag("--cuda", *load,
                "Also load the CUDA backend (and cuBLAS): say what it was built with and count the usable devices");
  cmd->callback([load, &exit_code] {
    std::cout << "mlasim " << MLASIM_VERSION << "\n";
    std::cout << "commit: " << MLASIM_GIT_COMMIT << "\n";
    std::cout << "cpu: " << blas_name() << ", " << cpu_threads() << " thread" << (cpu_threads() == 1 ? "" : "s")
              << " (--cpu-threads, MLASIM_CPU_THREADS)\n";
    print_cuda(*load);
    exit_code = kExitOk;
  });
}

}  // namespace mlasim::cli
