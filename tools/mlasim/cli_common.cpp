// Helpers shared by the subcommands: fault names, device selection, report paths.
#include <filesystem>
#include <iostream>

#include "tools/mlasim/commands.h"
#ifdef MLASIM_HAVE_CUDA
#include "tools/mlasim/cuda_module.h"
#endif

namespace mlasim::cli {

bool parse_faults(const std::vector<std::string>& names, FaultSet& faults) {
  for (const std::string& n : names) {
    std::optional<Fault> f = parse_fault(n);
    if (!f) {
      std::cerr << "--inject: unknown fault \"" << n << "\"\n  hint: known faults:";
      for (Fault known : all_faults()) std::cerr << " " << to_string(known);
      std::cerr << "\n";
      return false;
    }
    faults.add(*f);
  }
  return true;
}

bool output_path_ok(const char* flag, const std::string& path) {
  if (path.empty()) return true;
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (parent.empty() || std::filesystem::is_directory(parent, ec)) return true;
  std::cerr << path << ": error: " << flag << ": the directory " << parent.string()
            << " does not exist\n  hint: create it first, or write the file elsewhere\n";
  return false;
}

int check_device(const std::string& device) {
  if (device == "cpu") return kExitOk;
#ifdef MLASIM_HAVE_CUDA
  std::string why;
  const CudaBackendModule* cuda = cuda_backend_module(&why);
  if (!cuda) {
    std::cerr << "mlasim: --device cuda requested but the CUDA backend cannot be loaded: " << why << "\n";
    return kExitNoGpu;
  }
  if (cuda->usable_device_count(&why) == 0) {
    std::cerr << "mlasim: --device cuda requested but no usable CUDA device: " << why << "\n";
    return kExitNoGpu;
  }
  return kExitOk;
#else
  std::cerr << "mlasim: --device cuda requested but this mlasim was built without CUDA (see `mlasim version`)\n";
  return kExitNoGpu;
#endif
}

}  // namespace mlasim::cli
