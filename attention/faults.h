// Injectable faults of the MLA backends: plausible engine bugs, each changing the math only where
// the real bug would, so a scenario can show which batches expose it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlasim {

enum class Fault : int {
  // The decode path assumes its rows' tokens are already cached: the latent of a token whose row
  // is on the decode path with nct == 0 (a fresh prefill there) is not written to its slot.
  kDecodeSkipsCacheWriteForFreshRows = 0,
  // The decode path's softmax scale is 1/sqrt(576) (FlashMLA's default) instead of the model's.
  kDecodeScale1OverSqrt576,
  // RoPE rotates (x[i], x[i + d_r/2]) instead of (x[2i], x[2i+1]), for q and k alike (every path).
  kRopeNeoxInsteadOfInterleaved,
  // kv_a_layernorm is skipped: c_kv is the raw W_DKV x (every path, cache included).
  kKvNormDropped,
  // The decode path's W_UK_h (d_n x r_kv block of kv_b_proj) is read as if stored r_kv x d_n
  // (reshaped instead of transposed) when absorbing it into q: q_lat[c] = sum_i flat[c d_n + i] q_nope[i].
  kWUkTransposed,
  // merge_attn_states weights each partial by the other's LSE: o = o_a e^(b-lse) + o_b e^(a-lse)
  // (prefill-path rows with context only).
  kChunkLseMergeWrong,
  // Sparse (DSA) models: the positions the indexer's top-k hands the attention are each one lower
  // (0 stays; duplicates merge), an off-by-one in the index-to-position map, so no query reads its
  // own key, within index_topk or past it (every token of a sparse model, in both forms).
  kTopkOffByOne,
  // fp8 KV caches: the reader dequantizes with a scale 448/240 too large, as a reader that takes
  // e4m3fnuz's largest value (240) for the writer's e4m3fn one (448) does (vLLM #32976 fixed that
  // mismatch in concat_and_cache_ds_mla on gfx942). Every cached value read back is off.
  kFp8DequantScaleWrong,
};
inline constexpr int kNumFaults = 8;

const char* to_string(Fault f);  // e.g. "decode_skips_cache_write_for_fresh_rows"
std::optional<Fault> parse_fault(std::string_view name);
std::vector<Fault> all_faults();
// Which tokens a fault can change, in words.
const char* fault_scope(Fault f);

class FaultSet {
 public:
  FaultSet() = default;
  FaultSet(std::initializer_list<Fault> faults) {
    for (Fault f : faults) add(f);
  }
  void add(Fault f) { bits_ |= bit(f); }
  bool has(Fault f) const { return (bits_ & bit(f)) != 0; }
  bool empty() const { return bits_ == 0; }
  std::vector<Fault> list() const;
  std::string to_string() const;  // comma-separated names, "" when empty

 private:
  static std::uint32_t bit(Fault f) { return 1u << static_cast<int>(f); }
  std::uint32_t bits_ = 0;
};

}  // namespace mlasim
