// cuBLAS wrapper for the model's Linear layers: bf16 inputs, fp32 compute, bf16 or fp32 output,
// row-major activations and row-major [out, in] weights, optionally strided-batched (per-head
// W_UK absorption and W_UV). Host-only header (no CUDA types): pointers are device pointers.
#pragma once

#include <memory>

namespace mlasim {

enum class GemmOut { kBf16, kF32 };

// For b in [0, batch), r in [0, rows), o in [0, out):
//   y_b[r·ldy + o] = Σ_i x_b[r·ldx + i] · W_b(o, i)  (+ beta · y_b[r·ldy + o])
// with W_b(o, i) = w_b[o·ldw + i] (a Linear weight [out, in], row stride ldw ≥ in), or, when
// w_in_out, w_b[i·ldw + o] (a [in, out] matrix, row stride ldw ≥ out). x_b = x + b·stride_x etc.
// Slices are pointer offsets plus the full row stride: a rank's rows of a weight start at
// w + row_begin·ldw, a column slice [c0, c0 + in) at w + c0 with ldw the full width.
struct LinearParams {
  int rows = 0;  // tokens
  int out = 0;
  int in = 0;
  const void* x = nullptr;  // bf16, [rows, ldx]
  long long ldx = 0;        // 0: in
  const void* w = nullptr;  // bf16
  long long ldw = 0;        // 0: in (or out when w_in_out)
  bool w_in_out = false;
  void* y = nullptr;        // bf16 or fp32 per y_type, [rows, ldy]
  long long ldy = 0;        // 0: out
  GemmOut y_type = GemmOut::kF32;
  float beta = 0.f;         // 1: accumulate into y (fp32 output only)
  int batch = 1;
  long long stride_x = 0, stride_w = 0, stride_y = 0;  // elements between batch entries
};

// One cuBLAS handle bound to a device and a stream. Not thread-safe; one per rank.
class CublasGemm {
 public:
  CublasGemm(int device, void* stream);  // stream: a cudaStream_t of `device`
  ~CublasGemm();
  CublasGemm(const CublasGemm&) = delete;
  CublasGemm& operator=(const CublasGemm&) = delete;

  // Asynchronous on the stream. Aborts (file:line) on bad shapes or a cuBLAS error.
  void linear(const LinearParams& p);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mlasim
