// Matrix products of the CPU reference (docs/spec/cpu_reference.md §1): OpenBLAS sgemm/dgemm for
// GEMM-shaped work, a fixed-order dot loop for fewer than kGemvRows rows (where a BLAS call costs
// more than it saves). Row-major throughout. Every output element is computed by the same code
// whatever the thread count, so results are bitwise the same for 1, 2 or N threads.
#pragma once

namespace mlasim {

// Below this many rows of A, products are computed as dot products (mla_ops.h dot()).
inline constexpr int kGemvRows = 8;
// parallel_gemm_nt's fixed tiles of C: the same tiles, and so the same BLAS calls, for any
// thread count.
inline constexpr int kGemmTileM = 256;
inline constexpr int kGemmTileN = 512;

// C[m, n] (+)= A[m, k] B[n, k]^T: `accumulate` adds to C, otherwise C is overwritten.
template <typename T>
void gemm_nt(int m, int n, int k, const T* a, int lda, const T* b, int ldb, T* c, int ldc, bool accumulate = false);

// C[m, n] (+)= A[m, k] B[k, n].
template <typename T>
void gemm_nn(int m, int n, int k, const T* a, int lda, const T* b, int ldb, T* c, int ldc, bool accumulate = false);

// gemm_nt over fixed kGemmTileM x kGemmTileN tiles of C on the thread pool (rows of A and B are
// the tokens and the output features of a Linear layer: y = x W^T).
template <typename T>
void parallel_gemm_nt(int m, int n, int k, const T* a, int lda, const T* b, int ldb, T* c, int ldc,
                      bool accumulate = false);

// Stops OpenBLAS's own worker threads. mlasim never uses them (its thread pool runs one BLAS call
// per tile, serial_blas), yet OpenBLAS starts them when it loads and each spins on sched_yield for
// about 2^28 cycles before it sleeps: CPU time on another core that a short replay pays in full.
// Called once at the start of main; later BLAS calls run serially on the calling thread.
void release_blas_threads();

// The BLAS in use and the kernel it chose for this CPU, e.g. "OpenBLAS 0.3.21 (Haswell)".
const char* blas_name();

}  // namespace mlasim
