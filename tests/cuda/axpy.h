// y = a·x + y on the device (n floats, device pointers): the smallest kernel, for the launch test.
#pragma once

namespace mlasim::gpu_test {

void axpy(int n, float a, const float* x, float* y);

}  // namespace mlasim::gpu_test
