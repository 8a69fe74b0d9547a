// The host-side interface every model backend (CPU reference, CUDA) implements: one engine step
// in, the sampled rows' logits out. Host types only.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "attention/precision_class.h"

namespace mlasim {

struct AttentionMetadata;

struct StepInputs {
  const AttentionMetadata* metadata = nullptr;  // this step, reordered row order
  // Per token in reordered order: aligned with metadata->positions and slot_mapping.
  std::span<const int> token_ids;
  // Rows (reordered positions) that need logits, in the order the logits are wanted.
  std::vector<int> sample_rows;
  // Per sample row: how many of its LAST tokens need logits (1, or 1 + drafts with spec decode).
  std::vector<int> num_sample_tokens;
  // Golden mode: every token through the prefill (MHA) form, whatever the split said.
  bool force_prefill_path = false;
  // A sparse model's prefill-form rows attend to every causal position (dense MHA), not to their
  // top-k (engine.sparse_mla_prefill: dense_mha). vLLM's own dense MHA prefill runs only where the
  // top-k holds every position, so both are the same there.
  bool prefill_rows_dense = false;
};

struct StepOutputs {
  int vocab_size = 0;
  // [num logit rows, vocab]: sample rows in sample order, each row's last tokens in position order.
  std::vector<float> logits;
  // The same values before rounding to float, when the backend computes in double (else empty).
  std::vector<double> logits_f64;
  int num_logit_rows() const { return vocab_size ? static_cast<int>(logits.size()) / vocab_size : 0; }
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;  // e.g. "cpu-f64", "cpu-f32", "cuda"
  // The tolerance class its logits are compared in: what it computes and stores in.
  virtual PrecisionClass precision() const = 0;
  // Writes every token's latent to the cache, runs all layers, returns the sampled logits.
  virtual StepOutputs run_step(const StepInputs& inputs) = 0;
};

}  // namespace mlasim
