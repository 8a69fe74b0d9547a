// Checked CUDA and cuBLAS calls: a failure is reported with file:line and the call, then aborts.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define MLASIM_CUDA_CHECK(call)                                                                          \
  do {                                                                                                   \
    cudaError_t mlasim_err_ = (call);                                                                    \
    if (mlasim_err_ != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d: CUDA error %s (%s) in %s\n", __FILE__, __LINE__,                     \
                   cudaGetErrorName(mlasim_err_), cudaGetErrorString(mlasim_err_), #call);               \
      std::abort();                                                                                      \
    }                                                                                                    \
  } while (0)

#define MLASIM_CUBLAS_CHECK(call)                                                                        \
  do {                                                                                                   \
    cublasStatus_t mlasim_st_ = (call);                                                                  \
    if (mlasim_st_ != CUBLAS_STATUS_SUCCESS) {                                                           \
      std::fprintf(stderr, "%s:%d: cuBLAS error %s in %s\n", __FILE__, __LINE__,                        \
                   cublasGetStatusString(mlasim_st_), #call);                                            \
      std::abort();                                                                                      \
    }                                                                                                    \
  } while (0)
