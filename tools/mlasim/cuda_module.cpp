// Loads the CUDA backend module (cuda_module.h) from the directory of /proc/self/exe, checking its
// ABI version and type layout before using its table.
#include "tools/mlasim/cuda_module.h"

#if defined(MLASIM_HAVE_CUDA)
#include <dlfcn.h>

#include <filesystem>

namespace mlasim::cli {

#if defined(MLASIM_CUDA_BACKEND_LINKED)

const CudaBackendModule* cuda_backend_module(std::string*) { return mlasim_cuda_backend_module(); }
std::string cuda_backend_module_path() { return ""; }

#else

std::string cuda_backend_module_path() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return (ec ? std::filesystem::path(kCudaBackendModuleFile) : exe.parent_path() / kCudaBackendModuleFile).string();
}

namespace {

struct Loaded {
  const CudaBackendModule* module = nullptr;
  std::string error;
};

Loaded load() {
  const std::string path = cuda_backend_module_path();
  if (!std::filesystem::exists(path)) return {nullptr, path + " is missing (it is built and installed beside mlasim)"};
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);  // never closed: its backends may live until exit
  if (!handle) return {nullptr, dlerror()};
  using Entry = const CudaBackendModule* (*)();
  auto entry = reinterpret_cast<Entry>(dlsym(handle, kCudaBackendModuleEntry));
  if (!entry) return {nullptr, path + " lacks " + kCudaBackendModuleEntry};
  const CudaBackendModule* m = entry();
  if (m->abi != kCudaBackendModuleAbi || m->layout != cuda_backend_module_layout())
    return {nullptr, path + " was built for another mlasim (module ABI " + std::to_string(m->abi) + ", this mlasim's " +
                         std::to_string(kCudaBackendModuleAbi) + ", or other type layouts): rebuild both together"};
  return {m, ""};
}

}  // namespace

const CudaBackendModule* cuda_backend_module(std::string* why) {
  static const Loaded loaded = load();
  if (!loaded.module && why) *why = loaded.error;
  return loaded.module;
}

#endif

}  // namespace mlasim::cli
#endif
