// The six counts of one step's split, under vLLM's names: the decode/prefill split of the
// reordered batch (split_decodes_and_prefills) and MLA's forward split into the decode path
// (absorbed MQA, num_mqa_tokens) and the prefill path (MHA, num_mha_tokens). One struct wherever
// the counts appear: routing, attention metadata, step plans, run records.
#pragma once

namespace mlasim {

struct SplitCounts {
  int num_decodes = 0;
  int num_decode_tokens = 0;
  int num_prefills = 0;
  int num_prefill_tokens = 0;
  int num_mqa_tokens = 0;
  int num_mha_tokens = 0;

  int num_actual_tokens() const { return num_mqa_tokens + num_mha_tokens; }
  bool operator==(const SplitCounts&) const = default;
};

}  // namespace mlasim
