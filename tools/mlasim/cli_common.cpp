// Helpers shared by the subcommands: unimplemented features and device selection.
#include <iostream>

#include "tools/mlasim/commands.h"
#ifdef MLASIM_HAVE_CUDA
#include "attention/cuda/device_query.h"
#endif

namespace mlasim::cli {

int not_implemented(const char* command, const char* what) {
  std::cerr << "mlasim " << command << ": " << what << " is not implemented yet\n";
  return kExitBadInput;
}

int check_device(const std::string& device) {
  if (device == "cpu") return kExitOk;
#ifdef MLASIM_HAVE_CUDA
  std::string why;
  if (cuda_usable_device_count(&why) == 0) {
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
