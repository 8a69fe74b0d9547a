// The GPU benchmarks' timing harness: CUDA-event timing of a callable (the median of N runs, the L2
// flushed before each), and the ceilings measured figures are printed against: device-to-device
// copy bandwidth and the cuBLAS bf16 GEMM rate. The interface carries no CUDA type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace mlasim::kit {

// A device buffer of max(2 × the current device's L2, min_bytes) bytes; calling it writes the whole
// buffer (cudaMemsetAsync on the default stream), which evicts what a timed run would find in L2.
class L2Flush {
 public:
  explicit L2Flush(std::size_t min_bytes);
  void operator()() const;
  std::size_t bytes() const { return bytes_; }

 private:
  struct DeviceFree {
    void operator()(void* p) const;  // cudaFree
  };
  std::unique_ptr<void, DeviceFree> buf_;
  std::size_t bytes_ = 0;
};

double median(std::vector<double> v);  // the upper median for an even count

// Milliseconds of fn (CUDA events on the default stream around it), the median of `runs` runs after
// `warmups` untimed ones; `flush` (none when null) runs, untimed, before each timed run.
double median_ms(int runs, const L2Flush* flush, const std::function<void()>& fn, int warmups = 2);

// Device-to-device copy of `bytes`: TB/s counting the bytes read plus the bytes written.
double copy_bandwidth_tbs(std::size_t bytes, int runs, const L2Flush& flush);

// cuBLAS bf16 GEMM n × n × n with fp32 compute: TFLOP/s.
double gemm_bf16_tflops(int n, int runs, const L2Flush& flush);

// n bf16 values uniform in [−a, a] from a counter hash of (seed, index), written on the device:
// timing data only (validation uses the host references of kit/).
void fill_uniform_bf16(void* x, std::size_t n, std::uint64_t seed, float a);

}  // namespace mlasim::kit
