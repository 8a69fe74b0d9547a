// Fault names and scopes.
#include "attention/faults.h"

namespace mlasim {
namespace {

struct FaultInfo {
  Fault fault;
  const char* name;
  const char* scope;
};

constexpr FaultInfo kFaults[kNumFaults] = {
    {Fault::kDecodeSkipsCacheWriteForFreshRows, "decode_skips_cache_write_for_fresh_rows",
     "decode-path rows with nct == 0 (their keys are read from unwritten slots)"},
    {Fault::kDecodeScale1OverSqrt576, "decode_scale_1_over_sqrt_576", "every decode-path token"},
    {Fault::kRopeNeoxInsteadOfInterleaved, "rope_neox_instead_of_interleaved",
     "every token that attends to a key at another position"},
    {Fault::kKvNormDropped, "kv_norm_dropped", "every token"},
    {Fault::kWUkTransposed, "w_uk_transposed", "every decode-path token"},
    {Fault::kChunkLseMergeWrong, "chunk_lse_merge_wrong", "prefill-path rows with context (nct > 0)"},
    {Fault::kTopkOffByOne, "topk_off_by_one",
     "every token of a sparse (DSA) model past position 0 (the top-k positions read one lower)"},
    {Fault::kFp8DequantScaleWrong, "fp8_dequant_scale_wrong",
     "every token that reads a cached key of an fp8 KV cache (decode path; prefill-path context)"},
};

}  // namespace

const char* to_string(Fault f) { return kFaults[static_cast<int>(f)].name; }
const char* fault_scope(Fault f) { return kFaults[static_cast<int>(f)].scope; }

std::optional<Fault> parse_fault(std::string_view name) {
  for (const FaultInfo& i : kFaults)
    if (name == i.name) return i.fault;
  return std::nullopt;
}

std::vector<Fault> all_faults() {
  std::vector<Fault> v;
  for (const FaultInfo& i : kFaults) v.push_back(i.fault);
  return v;
}

std::vector<Fault> FaultSet::list() const {
  std::vector<Fault> v;
  for (Fault f : all_faults())
    if (has(f)) v.push_back(f);
  return v;
}

std::string FaultSet::to_string() const {
  std::string s;
  for (Fault f : list()) s += (s.empty() ? "" : ",") + std::string(mlasim::to_string(f));
  return s;
}

}  // namespace mlasim
