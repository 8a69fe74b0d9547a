// Communicator: the in-device ordered reduction kernel with event ordering, and the NCCL path
// (compiled when CMake found NCCL: MLASIM_HAVE_NCCL).
#include "attention/cuda/communicator.h"

#include <cuda_runtime.h>

#include <set>
#include <utility>

#include "attention/cuda/cuda_check.h"
#include "attention/cuda/launch.cuh"
#include "model/tp_shard.h"
#include "base/check.h"

#if MLASIM_HAVE_NCCL
#include <nccl.h>
#define MLASIM_NCCL_CHECK(call)                                                                   \
  do {                                                                                            \
    ncclResult_t mlasim_nr_ = (call);                                                             \
    if (mlasim_nr_ != ncclSuccess) {                                                              \
      std::fprintf(stderr, "%s:%d: NCCL error %s in %s\n", __FILE__, __LINE__,                   \
                   ncclGetErrorString(mlasim_nr_), #call);                                        \
      std::abort();                                                                               \
    }                                                                                             \
  } while (0)
#endif

namespace mlasim {
namespace {

enum class Mode { kSingle, kInDevice, kNccl };

Mode mode_of(const std::vector<int>& devices) {
  if (devices.size() <= 1) return Mode::kSingle;
  const std::set<int> distinct(devices.begin(), devices.end());
  if (distinct.size() == 1) return Mode::kInDevice;
  return Mode::kNccl;
}

struct ReduceArgs {
  float* bufs[kMaxTensorParallelSize];
  int n;
  std::size_t count;
};

// Element i: s = b0[i]; s += b1[i]; ... (rank order); then every buffer gets s.
__global__ void ordered_sum_kernel(const ReduceArgs a) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < a.count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    float s = a.bufs[0][i];
    for (int r = 1; r < a.n; ++r) s += a.bufs[r][i];
    for (int r = 0; r < a.n; ++r) a.bufs[r][i] = s;
  }
}

}  // namespace

bool communicator_has_nccl() {
#if MLASIM_HAVE_NCCL
  return true;
#else
  return false;
#endif
}

std::string communicator_support_error(const std::vector<int>& devices) {
  if (devices.empty()) return "no ranks";
  if (static_cast<int>(devices.size()) > kMaxTensorParallelSize)
    return "at most " + std::to_string(kMaxTensorParallelSize) + " tensor-parallel ranks";
  const Mode m = mode_of(devices);
  if (m != Mode::kNccl) return "";
  const std::set<int> distinct(devices.begin(), devices.end());
  if (distinct.size() != devices.size())
    return "tensor parallel " + std::to_string(devices.size()) + " over " + std::to_string(distinct.size()) +
           " devices puts several ranks on each of several devices, which is not supported: use one device "
           "(CUDA_VISIBLE_DEVICES=0, or the backend's max_devices = 1) or at least as many devices as ranks";
  if (!communicator_has_nccl())
    return "ranks on distinct devices need NCCL, and this build has none (CMake found no libnccl): use one "
           "device (CUDA_VISIBLE_DEVICES=0, or the backend's max_devices = 1) or rebuild with NCCL";
  return "";
}

struct Communicator::Impl {
  Mode mode = Mode::kSingle;
  std::vector<cudaStream_t> streams;
  std::vector<cudaEvent_t> events;  // one per rank, on its device
#if MLASIM_HAVE_NCCL
  std::vector<ncclComm_t> comms;
#endif
};

Communicator::Communicator(std::vector<int> rank_devices, std::vector<void*> rank_streams)
    : devices_(std::move(rank_devices)), impl_(std::make_unique<Impl>()) {
  const std::string err = communicator_support_error(devices_);
  MLASIM_CHECK(err.empty(), err);
  MLASIM_CHECK(rank_streams.size() == devices_.size(), "Communicator: one stream per rank");
  impl_->mode = mode_of(devices_);
  for (void* s : rank_streams) impl_->streams.push_back(static_cast<cudaStream_t>(s));
  if (impl_->mode == Mode::kInDevice) {
    impl_->events.resize(devices_.size());
    MLASIM_CUDA_CHECK(cudaSetDevice(devices_[0]));
    for (cudaEvent_t& e : impl_->events) MLASIM_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
#if MLASIM_HAVE_NCCL
  if (impl_->mode == Mode::kNccl) {
    impl_->comms.resize(devices_.size());
    MLASIM_NCCL_CHECK(ncclCommInitAll(impl_->comms.data(), static_cast<int>(devices_.size()), devices_.data()));
  }
#endif
}

Communicator::~Communicator() {
  if (!impl_) return;
  for (cudaEvent_t e : impl_->events) {
    cudaSetDevice(devices_[0]);
    cudaEventDestroy(e);
  }
#if MLASIM_HAVE_NCCL
  for (ncclComm_t c : impl_->comms) ncclCommDestroy(c);
#endif
}

std::string Communicator::mode() const {
  switch (impl_->mode) {
    case Mode::kSingle: return "single";
    case Mode::kInDevice: return "in-device";
    case Mode::kNccl: return "nccl";
  }
  return "?";
}

void Communicator::all_reduce_sum(const std::vector<float*>& buffers, std::size_t count) {
  MLASIM_CHECK(buffers.size() == devices_.size(), "all_reduce_sum: one buffer per rank");
  if (impl_->mode == Mode::kSingle || count == 0) return;
  const int n = size();
  if (impl_->mode == Mode::kInDevice) {
    MLASIM_CUDA_CHECK(cudaSetDevice(devices_[0]));
    cudaStream_t s0 = impl_->streams[0];
    for (int r = 1; r < n; ++r) {  // rank 0's stream waits for every rank's partial
      MLASIM_CUDA_CHECK(cudaEventRecord(impl_->events[static_cast<std::size_t>(r)], impl_->streams[static_cast<std::size_t>(r)]));
      MLASIM_CUDA_CHECK(cudaStreamWaitEvent(s0, impl_->events[static_cast<std::size_t>(r)], 0));
    }
    ReduceArgs a{};
    for (int r = 0; r < n; ++r) a.bufs[r] = buffers[static_cast<std::size_t>(r)];
    a.n = n;
    a.count = count;
    const std::size_t blocks = (count + 255) / 256;
    MLASIM_LAUNCH(static_cast<unsigned>(blocks < 4096 ? blocks : 4096), 256, 0, s0, ordered_sum_kernel)(a);
    MLASIM_CUDA_CHECK(cudaGetLastError());
    MLASIM_CUDA_CHECK(cudaEventRecord(impl_->events[0], s0));
    for (int r = 1; r < n; ++r)  // and every rank waits for the sum
      MLASIM_CUDA_CHECK(cudaStreamWaitEvent(impl_->streams[static_cast<std::size_t>(r)], impl_->events[0], 0));
    return;
  }
#if MLASIM_HAVE_NCCL
  MLASIM_NCCL_CHECK(ncclGroupStart());
  for (int r = 0; r < n; ++r) {
    MLASIM_CUDA_CHECK(cudaSetDevice(devices_[static_cast<std::size_t>(r)]));
    MLASIM_NCCL_CHECK(ncclAllReduce(buffers[static_cast<std::size_t>(r)], buffers[static_cast<std::size_t>(r)], count,
                                    ncclFloat32, ncclSum, impl_->comms[static_cast<std::size_t>(r)],
                                    impl_->streams[static_cast<std::size_t>(r)]));
  }
  MLASIM_NCCL_CHECK(ncclGroupEnd());
#else
  MLASIM_CHECK(false, "all_reduce_sum: the NCCL path is not built");
#endif
}

}  // namespace mlasim
