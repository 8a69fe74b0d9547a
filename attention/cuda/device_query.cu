// cudaGetDeviceCount returns an error (not 0) on a machine without a driver: any error means "no GPU".
#include <cuda_runtime.h>

#include "attention/cuda/device_query.h"

namespace mlasim {

int cuda_usable_device_count(std::string* why) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    if (why) *why = std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err);
    (void)cudaGetLastError();  // clear the sticky error
    return 0;
  }
  if (count == 0 && why) *why = "cudaGetDeviceCount reported 0 devices";
  return count;
}

}  // namespace mlasim
