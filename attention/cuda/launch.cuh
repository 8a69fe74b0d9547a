// Kernel launch and dynamic shared memory spelled so that the same source builds with nvcc and under
// mlasim's SIMT emulator (emu/include/cuda_runtime.h defines both macros there):
//   MLASIM_LAUNCH(grid, block, smem, stream, kernel)(args...)  ==  kernel<<<grid, block, smem, stream>>>(args...)
//   MLASIM_DYNAMIC_SMEM(name);  ==  extern __shared__ __align__(128) unsigned char name[];
#pragma once

#include <cuda_runtime.h>

#if !defined(MLASIM_CUDA_EMULATION)
#define MLASIM_LAUNCH(grid, block, smem, stream, ...) __VA_ARGS__<<<(grid), (block), (smem), (stream)>>>
#define MLASIM_DYNAMIC_SMEM(name) extern __shared__ __align__(128) unsigned char name[]
#endif
