// Host-only query of usable CUDA devices (no CUDA types in this header, so the CLI can include it).
#pragma once

#include <string>

namespace mlasim {

// Number of usable CUDA devices; 0 when cudaGetDeviceCount fails for any reason (no driver, no
// device, insufficient driver), with the reason in *why when given.
int cuda_usable_device_count(std::string* why = nullptr);

}  // namespace mlasim
