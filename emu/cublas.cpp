// cuBLAS for the SIMT emulator: cublasGemmStridedBatchedEx by its column-major definition
//   C_i = alpha · op(A_i) · op(B_i) + beta · C_i,  op(A) m×k, op(B) k×n, C m×n,
//   X_i = X + i · strideX,  element (r, c) of a column-major operand at r + c · ld,
// with cuBLAS's argument checks (leading dimensions against the operand shapes, supported types)
// and a check that every operand lies inside device memory. fp32 products summed in double then
// rounded once (CUBLAS_COMPUTE_32F permits any fp32-or-better accumulation); beta = 0 never reads C.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "cublas_v2.h"
#include "cuda_bf16.h"
#include "emu/simt.h"

struct cublasContext {
  cudaStream_t stream = nullptr;
  cublasPointerMode_t mode = CUBLAS_POINTER_MODE_HOST;
};

namespace {

bool element_size(cudaDataType_t t, std::size_t* bytes) {
  switch (t) {
    case CUDA_R_32F: *bytes = 4; return true;
    case CUDA_R_16BF: *bytes = 2; return true;
    default: return false;
  }
}

float load(const void* base, cudaDataType_t t, long long idx) {
  if (t == CUDA_R_32F) return static_cast<const float*>(base)[idx];
  return static_cast<float>(static_cast<const __nv_bfloat16*>(base)[idx]);
}

void store(void* base, cudaDataType_t t, long long idx, float v) {
  if (t == CUDA_R_32F)
    static_cast<float*>(base)[idx] = v;
  else
    static_cast<__nv_bfloat16*>(base)[idx] = __nv_bfloat16(v);
}

// Bytes spanned by a column-major rows×cols operand with leading dimension ld, over `batch` strides.
bool operand_in_device(const void* p, std::size_t elem, long long rows, long long cols, long long ld,
                       long long stride, int batch) {
  if (rows == 0 || cols == 0 || batch == 0) return true;
  for (int i = 0; i < batch; ++i) {
    const auto* first = static_cast<const unsigned char*>(p) + static_cast<long long>(i) * stride * static_cast<long long>(elem);
    const long long span = (cols - 1) * ld + rows;
    if (!mlasim::emu::device_range_ok(first, static_cast<std::size_t>(span) * elem)) return false;
  }
  return true;
}

}  // namespace

cublasStatus_t cublasCreate(cublasHandle_t* handle) {
  if (!handle) return CUBLAS_STATUS_INVALID_VALUE;
  *handle = new cublasContext;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy(cublasHandle_t handle) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream(cublasHandle_t handle, cudaStream_t stream) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->stream = stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetPointerMode(cublasHandle_t handle, cublasPointerMode_t mode) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->mode = mode;
  return CUBLAS_STATUS_SUCCESS;
}

const char* cublasGetStatusString(cublasStatus_t status) {
  switch (status) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
  }
  return "CUBLAS_STATUS_UNKNOWN";
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                                          int m, int n, int k, const void* alpha, const void* A, cudaDataType_t Atype,
                                          int lda, long long strideA, const void* B, cudaDataType_t Btype, int ldb,
                                          long long strideB, const void* beta, void* C, cudaDataType_t Ctype, int ldc,
                                          long long strideC, int batchCount, cublasComputeType_t computeType,
                                          cublasGemmAlgo_t) {
  if (!handle) return CUBLAS_STATUS_NOT_INITIALIZED;
  const bool ta = transa != CUBLAS_OP_N, tb = transb != CUBLAS_OP_N;
  const int a_rows = ta ? k : m, a_cols = ta ? m : k;
  const int b_rows = tb ? n : k, b_cols = tb ? k : n;
  if (m < 0 || n < 0 || k < 0 || batchCount < 0 || lda < (a_rows > 1 ? a_rows : 1) ||
      ldb < (b_rows > 1 ? b_rows : 1) || ldc < (m > 1 ? m : 1) || !alpha || !beta) {
    std::fprintf(stderr,
                 "mlasim-emu: cublasGemmStridedBatchedEx: invalid arguments (m %d n %d k %d, op(A) %s lda %d, op(B) %s "
                 "ldb %d, ldc %d, batch %d)\n",
                 m, n, k, ta ? "T" : "N", lda, tb ? "T" : "N", ldb, ldc, batchCount);
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  std::size_t ea = 0, eb = 0, ec = 0;
  if (computeType != CUBLAS_COMPUTE_32F || Atype != CUDA_R_16BF || Btype != CUDA_R_16BF ||
      !element_size(Ctype, &ec) || !element_size(Atype, &ea) || !element_size(Btype, &eb))
    return CUBLAS_STATUS_NOT_SUPPORTED;
  if (handle->mode != CUBLAS_POINTER_MODE_HOST) return CUBLAS_STATUS_NOT_SUPPORTED;
  if (m == 0 || n == 0 || batchCount == 0) return CUBLAS_STATUS_SUCCESS;
  const float al = *static_cast<const float*>(alpha), be = *static_cast<const float*>(beta);
  const bool reads_ab = k > 0 && al != 0.f;
  if ((reads_ab && (!operand_in_device(A, ea, a_rows, a_cols, lda, strideA, batchCount) ||
                    !operand_in_device(B, eb, b_rows, b_cols, ldb, strideB, batchCount))) ||
      !operand_in_device(C, ec, m, n, ldc, strideC, batchCount)) {
    std::fprintf(stderr,
                 "mlasim-emu: cublasGemmStridedBatchedEx: an operand reaches outside device memory (m %d n %d k %d, "
                 "lda %d ldb %d ldc %d, strides %lld %lld %lld, batch %d)\n",
                 m, n, k, lda, ldb, ldc, strideA, strideB, strideC, batchCount);
    return CUBLAS_STATUS_EXECUTION_FAILED;
  }
  // op(A) as rows of k and op(B) as columns of k, in float, so every dot product runs contiguously.
  std::vector<float> opa(static_cast<std::size_t>(m) * static_cast<std::size_t>(k));
  std::vector<float> opb(static_cast<std::size_t>(n) * static_cast<std::size_t>(k));
  for (int bi = 0; bi < batchCount; ++bi) {
    const long long oa = bi * strideA, ob = bi * strideB, oc = bi * strideC;
    if (reads_ab) {
      for (int i = 0; i < m; ++i)
        for (int p = 0; p < k; ++p)
          opa[static_cast<std::size_t>(i) * k + p] =
              load(A, Atype, oa + (ta ? p + static_cast<long long>(i) * lda : i + static_cast<long long>(p) * lda));
      for (int j = 0; j < n; ++j)
        for (int p = 0; p < k; ++p)
          opb[static_cast<std::size_t>(j) * k + p] =
              load(B, Btype, ob + (tb ? j + static_cast<long long>(p) * ldb : p + static_cast<long long>(j) * ldb));
    }
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) {
        double s = 0.0;
        if (reads_ab) {
          const float* x = &opa[static_cast<std::size_t>(i) * k];
          const float* y = &opb[static_cast<std::size_t>(j) * k];
          for (int p = 0; p < k; ++p) s += static_cast<double>(x[p]) * y[p];
        }
        const long long ci = oc + i + static_cast<long long>(j) * ldc;
        double v = static_cast<double>(al) * s;
        if (be != 0.f) v += static_cast<double>(be) * load(C, Ctype, ci);
        store(C, Ctype, ci, static_cast<float>(v));
      }
  }
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                            int k, const void* alpha, const void* A, cudaDataType_t Atype, int lda, const void* B,
                            cudaDataType_t Btype, int ldb, const void* beta, void* C, cudaDataType_t Ctype, int ldc,
                            cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  return cublasGemmStridedBatchedEx(handle, transa, transb, m, n, k, alpha, A, Atype, lda, 0, B, Btype, ldb, 0, beta, C,
                                    Ctype, ldc, 0, 1, computeType, algo);
}
