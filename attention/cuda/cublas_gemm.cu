// CublasGemm: row-major Y = X·Wᵀ mapped onto column-major cuBLAS as Yᵀ = op(W)·Xᵀ
// (cublasGemmStridedBatchedEx, CUDA_R_16BF inputs, CUBLAS_COMPUTE_32F).
#include "attention/cuda/cublas_gemm.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>

#include "attention/cuda/cuda_check.h"
#include "base/check.h"

namespace mlasim {

struct CublasGemm::Impl {
  int device = 0;
  cudaStream_t stream = nullptr;
  cublasHandle_t handle = nullptr;
};

CublasGemm::CublasGemm(int device, void* stream) : impl_(std::make_unique<Impl>()) {
  impl_->device = device;
  impl_->stream = static_cast<cudaStream_t>(stream);
  MLASIM_CUDA_CHECK(cudaSetDevice(device));
  MLASIM_CUBLAS_CHECK(cublasCreate(&impl_->handle));
  MLASIM_CUBLAS_CHECK(cublasSetStream(impl_->handle, impl_->stream));
  MLASIM_CUBLAS_CHECK(cublasSetPointerMode(impl_->handle, CUBLAS_POINTER_MODE_HOST));
}

CublasGemm::~CublasGemm() {
  if (impl_ && impl_->handle) {
    cudaSetDevice(impl_->device);
    cublasDestroy(impl_->handle);
  }
}

void CublasGemm::linear(const LinearParams& in) {
  LinearParams p = in;
  MLASIM_CHECK(p.rows >= 0 && p.out >= 0 && p.in >= 0 && p.batch >= 0, "linear: negative shape");
  if (p.rows == 0 || p.out == 0 || p.batch == 0) return;
  MLASIM_CHECK(p.x && p.w && p.y, "linear: null pointer");
  if (p.ldx == 0) p.ldx = p.in;
  if (p.ldw == 0) p.ldw = p.w_in_out ? p.out : p.in;
  if (p.ldy == 0) p.ldy = p.out;
  MLASIM_CHECK(p.ldx >= p.in && p.ldy >= p.out && p.ldw >= (p.w_in_out ? p.out : p.in),
               "linear: a row stride is below the row width (rows " + std::to_string(p.rows) + ", out " +
                   std::to_string(p.out) + ", in " + std::to_string(p.in) + ")");
  MLASIM_CHECK(p.beta == 0.f || p.y_type == GemmOut::kF32, "linear: accumulation needs an fp32 output");
  if (p.in == 0) MLASIM_CHECK(p.beta == 0.f, "linear: in == 0 with accumulation");
  const float alpha = 1.f, beta = p.beta;
  // Column-major view: C (m = out, n = rows, ldc = ldy) = op(A) (m×k) · B (k×n), k = in.
  // B = X: column-major [in, rows] with ldb = ldx. A = W: column-major [in, out] (ld = ldw) for a
  // Linear weight, hence op T; column-major [out, in] for an [in, out] matrix, hence op N.
  const cublasOperation_t op_a = p.w_in_out ? CUBLAS_OP_N : CUBLAS_OP_T;
  const cudaDataType_t c_type = p.y_type == GemmOut::kF32 ? CUDA_R_32F : CUDA_R_16BF;
  MLASIM_CUDA_CHECK(cudaSetDevice(impl_->device));
  MLASIM_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      impl_->handle, op_a, CUBLAS_OP_N, p.out, p.rows, p.in, &alpha, p.w, CUDA_R_16BF, static_cast<int>(p.ldw),
      p.stride_w, p.x, CUDA_R_16BF, static_cast<int>(p.ldx), p.stride_x, &beta, p.y, c_type, static_cast<int>(p.ldy),
      p.stride_y, p.batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace mlasim
