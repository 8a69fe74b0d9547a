// OpenBLAS behind the CPU reference's matrix products, single-threaded per call (the thread pool
// splits the work itself, in fixed tiles), with a dot-product path for a few rows.
#include "attention/cpu/cpu_gemm.h"

#include <cblas.h>

#include <algorithm>
#include <mutex>
#include <string>

#include "model/cpu_thread_pool.h"
#include "attention/cpu/mla_ops.h"

extern "C" void openblas_set_num_threads(int num_threads);
extern "C" char* openblas_get_config(void);
extern "C" int blas_thread_shutdown_(void);
extern "C" char* openblas_get_corename(void);

namespace mlasim {
namespace {

void serial_blas() {
  static std::once_flag once;
  std::call_once(once, [] { openblas_set_num_threads(1); });
}

void blas_gemm(CBLAS_TRANSPOSE tb, int m, int n, int k, const float* a, int lda, const float* b, int ldb, float* c,
               int ldc, bool accumulate) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, tb, m, n, k, 1.0f, a, lda, b, ldb, accumulate ? 1.0f : 0.0f, c, ldc);
}

void blas_gemm(CBLAS_TRANSPOSE tb, int m, int n, int k, const double* a, int lda, const double* b, int ldb, double* c,
               int ldc, bool accumulate) {
  cblas_dgemm(CblasRowMajor, CblasNoTrans, tb, m, n, k, 1.0, a, lda, b, ldb, accumulate ? 1.0 : 0.0, c, ldc);
}

// C[i, j] (+)= dot(A[i, :], B[j, :]) for few rows of A.
template <typename T>
void rows_nt(int m, int n, int k, const T* a, int lda, const T* b, int ldb, T* c, int ldc, bool accumulate) {
  for (int i = 0; i < m; ++i) {
    const T* ai = a + static_cast<long long>(i) * lda;
    T* ci = c + static_cast<long long>(i) * ldc;
    for (int j = 0; j < n; ++j) {
      const T v = dot(ai, b + static_cast<long long>(j) * ldb, k);
      ci[j] = accumulate ? ci[j] + v : v;
    }
  }
}

}  // namespace

template <typename T>
void gemm_nt(int m, int n, int k, const T* a, int lda, const T* b, int ldb, T* c, int ldc, bool accumulate) {
  if (m <= 0 || n <= 0) return;
  if (m < kGemvRows) return rows_nt(m, n, k, a, lda, b, ldb, c, ldc, accumulate);
  serial_blas();
  blas_gemm(CblasTrans, m, n, k, a, lda, b, ldb, c, ldc, accumulate);
}

template <typename T>
void gemm_nn(int m, int n, int k, const T* a, int lda, const T* b, int ldb, T* c, int ldc, bool accumulate) {
  if (m <= 0 || n <= 0) return;
  serial_blas();
  blas_gemm(CblasNoTrans, m, n, k, a, lda, b, ldb, c, ldc, accumulate);
}

template <typename T>
void parallel_gemm_nt(int m, int n, int k, const T* a, int lda, const T* b, int ldb, T* c, int ldc, bool accumulate) {
  if (m <= 0 || n <= 0) return;
  const int tm = (m + kGemmTileM - 1) / kGemmTileM, tn = (n + kGemmTileN - 1) / kGemmTileN;
  parallel_for(tm * tn, [&](int tile) {
    const int i0 = (tile / tn) * kGemmTileM, j0 = (tile % tn) * kGemmTileN;
    const int mi = std::min(kGemmTileM, m - i0), nj = std::min(kGemmTileN, n - j0);
    gemm_nt(mi, nj, k, a + static_cast<long long>(i0) * lda, lda, b + static_cast<long long>(j0) * ldb, ldb,
            c + static_cast<long long>(i0) * ldc + j0, ldc, accumulate);
  });
}

void release_blas_threads() {
  serial_blas();
  blas_thread_shutdown_();
}

const char* blas_name() {
  static const std::string name = [] {
    std::string config = openblas_get_config();
    const size_t space = config.find(' ', config.find(' ') + 1);  // "OpenBLAS 0.3.21 ..." -> first two words
    return config.substr(0, space) + " (" + openblas_get_corename() + ")";
  }();
  return name.c_str();
}

#define MLASIM_INSTANTIATE(T)                                                                              \
  template void gemm_nt<T>(int, int, int, const T*, int, const T*, int, T*, int, bool);                    \
  template void gemm_nn<T>(int, int, int, const T*, int, const T*, int, T*, int, bool);                    \
  template void parallel_gemm_nt<T>(int, int, int, const T*, int, const T*, int, T*, int, bool);
MLASIM_INSTANTIATE(float)
MLASIM_INSTANTIATE(double)
#undef MLASIM_INSTANTIATE

}  // namespace mlasim
