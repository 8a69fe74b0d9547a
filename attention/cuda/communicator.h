// Tensor-parallel all-reduce (sum, fp32) over the ranks of one CudaBackend. Rank r sits on
// device rank_devices[r] with its own stream. Modes:
//   single     tp == 1: nothing to do;
//   in-device  every rank on the same device: one kernel sums the ranks' buffers in rank order
//              (((b0 + b1) + b2) + ..., as the CPU reference) and writes the sum to every buffer,
//              ordered against the ranks' streams with events;
//   nccl       every rank on a distinct device: ncclAllReduce (needs mlasim built with NCCL).
// Other layouts (several ranks on each of several devices) are refused: communicator_support_error.
// Host-only header (streams are cudaStream_t passed as void*).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace mlasim {

// Whether this build links NCCL (the multi-device path).
bool communicator_has_nccl();

// "" when ranks on these devices can be reduced, else why not and what to do.
std::string communicator_support_error(const std::vector<int>& rank_devices);

class Communicator {
 public:
  Communicator(std::vector<int> rank_devices, std::vector<void*> rank_streams);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int size() const { return static_cast<int>(devices_.size()); }
  std::string mode() const;  // "single" | "in-device" | "nccl"

  // buffers[r] (count floats on rank r's device) <- Σ_k buffers[k], for every r. Asynchronous:
  // enqueued on the ranks' streams, which it orders against each other.
  void all_reduce_sum(const std::vector<float*>& buffers, std::size_t count);

 private:
  struct Impl;
  std::vector<int> devices_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mlasim
