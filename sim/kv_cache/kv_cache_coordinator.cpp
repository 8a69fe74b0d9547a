// vLLM's KV cache manager and coordinator over several KV cache groups.
#include "sim/kv_cache/kv_cache_coordinator.h"

#include <algorithm>
#include <optional>
#include <string>

#include "base/check.h"
#include "sim/kv_cache/full_attention_manager.h"
#include "sim/kv_cache/mamba_manager.h"
#include "sim/kv_cache/sliding_window_manager.h"

namespace mlasim {

using kv::cdiv;

bool same_kv_cache_spec(const KvCacheGroup& a, const KvCacheGroup& b) {
  return a.kind == b.kind && a.block_size == b.block_size && a.page_size_bytes == b.page_size_bytes &&
         a.tokens_per_state == b.tokens_per_state && a.sliding_window == b.sliding_window &&
         a.extra_retained_tokens == b.extra_retained_tokens && a.mamba_cache_mode == b.mamba_cache_mode &&
         a.num_speculative_blocks == b.num_speculative_blocks &&
         a.num_prefill_checkpoint_blocks == b.num_prefill_checkpoint_blocks &&
         a.prefill_checkpoint_alignment == b.prefill_checkpoint_alignment;
}

namespace {

// single_type_kv_cache_manager.py:2608-2653 get_manager_for_kv_cache_spec.
std::unique_ptr<SingleTypeKVCacheManager> make_manager(const KvCacheGroup& g, GroupBlockPool& pool,
                                                       const GroupedKVCacheConfig& c, int group_id) {
  const int sbs = c.layout.scheduler_block_size;
  switch (g.kind) {
    case KvCacheSpecKind::kMlaAttention:
      return std::make_unique<FullAttentionManager>(g, pool, c.enable_caching, group_id, sbs);
    case KvCacheSpecKind::kSlidingWindowMla:
      return std::make_unique<SlidingWindowManager>(
          g, pool, c.enable_caching, group_id, sbs,
          SlidingWindowManager::max_admission_blocks(g, c.max_num_batched_tokens, c.max_model_len));
    case KvCacheSpecKind::kMamba:
      return std::make_unique<MambaManager>(g, pool, c.enable_caching, group_id, sbs, c.num_hash_lookahead_tokens);
    case KvCacheSpecKind::kCircularBuffer:
      return std::make_unique<CircularBufferManager>(g, pool, c.enable_caching, group_id, sbs);
  }
  MLASIM_CHECK(false, "unknown KV cache spec kind");
  return nullptr;
}

}  // namespace

GroupedKVCacheManager::GroupedKVCacheManager(const GroupedKVCacheConfig& c)
    : pool_(c.num_gpu_blocks, c.enable_caching, c.layout.hash_block_size, c.free_unhashed_first),
      enable_caching_(c.enable_caching),
      max_model_len_(c.max_model_len),
      scheduler_block_size_(c.layout.scheduler_block_size),
      retention_interval_(c.layout.prefix_cache_retention_interval) {
  MLASIM_CHECK(!c.layout.groups.empty(), "no KV cache groups");
  MLASIM_CHECK(scheduler_block_size_ > 0 && scheduler_block_size_ % c.layout.hash_block_size == 0,
               "scheduler_block_size must be a multiple of hash_block_size");  // kv_cache_coordinator.py:113-116
  for (std::size_t i = 0; i < c.layout.groups.size(); ++i) {
    const KvCacheGroup& g = c.layout.groups[i];
    MLASIM_CHECK(scheduler_block_size_ % g.block_size == 0, "scheduler_block_size must be a multiple of each group's");
    if (c.enable_caching && prefix_cacheable(g))  // kv_cache_coordinator.py:651-665
      MLASIM_CHECK(g.block_size % c.layout.hash_block_size == 0, "a group's block size must be a multiple of hash_block_size");
    managers_.push_back(make_manager(g, pool_, c, static_cast<int>(i)));
    managers_.back()->set_retention_interval(retention_interval_);
  }
  no_hits_.assign(managers_.size(), {});
  for (std::size_t i = managers_.size(); i-- > 0;)
    if (managers_[i]->spec().kind == KvCacheSpecKind::kMlaAttention) attention_group_ = static_cast<int>(i);
  if (enable_caching_) build_spec_groups();
}

void GroupedKVCacheManager::build_spec_groups() {
  // kv_cache_coordinator.py:711-775 verify_and_split_kv_cache_groups: groups of equal specs are looked
  // up together; stable-sorted full attention first. Circular buffers stay out.
  for (std::size_t i = 0; i < managers_.size(); ++i) {
    const KvCacheGroup& g = managers_[i]->spec();
    if (!prefix_cacheable(g)) continue;
    auto it = std::find_if(attention_groups_.begin(), attention_groups_.end(), [&](const SpecGroup& s) {
      return same_kv_cache_spec(managers_[static_cast<std::size_t>(s.group_ids.front())]->spec(), g);
    });
    if (it != attention_groups_.end()) it->group_ids.push_back(static_cast<int>(i));
    else attention_groups_.push_back({{static_cast<int>(i)}});
  }
  MLASIM_CHECK(!attention_groups_.empty(), "HybridKVCacheCoordinator requires at least one cacheable group");
  std::stable_sort(attention_groups_.begin(), attention_groups_.end(), [&](const SpecGroup& a, const SpecGroup& b) {
    const bool fa = group(a.group_ids.front()).kind == KvCacheSpecKind::kMlaAttention;
    const bool fb = group(b.group_ids.front()).kind == KvCacheSpecKind::kMlaAttention;
    return fa && !fb;
  });
}

int GroupedKVCacheManager::find_longest_cache_hit(const Request& request, int max_cache_hit_length, GroupBlocks& hits,
                                                  int& num_uncached) const {
  // kv_cache_coordinator.py:806-941 without EAGLE.
  const std::size_t n = managers_.size();
  std::vector<std::optional<std::vector<int>>> hit_blocks(n);
  std::vector<int> hit_length_by_group(n, 0);
  int hit_length = max_cache_hit_length, longest = 0;
  const bool is_simple_hybrid =
      attention_groups_.size() == 2 && group(attention_groups_[0].group_ids.front()).kind == KvCacheSpecKind::kMlaAttention;
  GroupBlocks found;
  while (true) {
    int curr = hit_length;
    for (const SpecGroup& sg : attention_groups_) {
      const int first = sg.group_ids.front();
      const SingleTypeKVCacheManager& m = *managers_[static_cast<std::size_t>(first)];
      if (m.spec().kind == KvCacheSpecKind::kMlaAttention && hit_blocks[static_cast<std::size_t>(first)]) {
        curr = std::min(curr, hit_length_by_group[static_cast<std::size_t>(first)]);  // downward-closed
        continue;
      }
      found.assign(sg.group_ids.size(), {});
      curr = m.find_longest_cache_hit(request.block_hashes, curr, sg.group_ids, scheduler_block_size_, found);
      for (std::size_t k = 0; k < sg.group_ids.size(); ++k) {
        hit_blocks[static_cast<std::size_t>(sg.group_ids[k])] = std::move(found[k]);
        hit_length_by_group[static_cast<std::size_t>(sg.group_ids[k])] = curr;
      }
      longest = std::max(longest, curr);
    }
    if (curr >= hit_length) break;
    hit_length = curr;
    if (is_simple_hybrid) break;
  }
  hits.assign(n, {});
  for (std::size_t g = 0; g < n; ++g) {
    if (!hit_blocks[g]) continue;
    hits[g] = std::move(*hit_blocks[g]);
    if (managers_[g]->spec().kind == KvCacheSpecKind::kMlaAttention)  // :919-932: cut to the common length
      hits[g].resize(std::min(hits[g].size(), static_cast<std::size_t>(cdiv(hit_length, managers_[g]->block_size()))));
  }
  num_uncached = longest - hit_length;
  return hit_length;
}

int GroupedKVCacheManager::get_computed_blocks(const Request& request, GroupBlocks& hits, int& shared_prefix_boundary) const {
  hits.assign(managers_.size(), {});
  shared_prefix_boundary = 0;
  if (!enable_caching_) return 0;
  int num_uncached = 0;
  // "The last token must be recomputed to get logits."
  const int n = find_longest_cache_hit(request, request.num_tokens() - 1, hits, num_uncached);
  if (num_uncached) shared_prefix_boundary = n + num_uncached;
  return n;
}

int GroupedKVCacheManager::get_num_blocks_to_allocate(ReqId id, int num_tokens, const GroupBlocks& hits,
                                                      int total_computed_tokens, int num_local_computed_tokens,
                                                      int num_tokens_main_model, bool apply_admission_cap,
                                                      int prefill_end) {
  int total = 0;  // kv_cache_coordinator.py:194-263
  if (retention_interval_ != 0) prefill_end = 0;  // :237-238: dense and periodic retention checkpoint every chunk
  for (std::size_t g = 0; g < managers_.size(); ++g)
    total += managers_[g]->get_num_blocks_to_allocate(id, num_tokens, hits[g], total_computed_tokens,
                                                      num_local_computed_tokens, num_tokens_main_model,
                                                      apply_admission_cap, prefill_end);
  return total;
}

bool GroupedKVCacheManager::allocate_slots(Request& request, int num_new_tokens, int num_lookahead_tokens,
                                           const GroupBlocks* hits, int num_new_computed_tokens,
                                           bool full_sequence_must_fit, GroupBlocks& new_blocks) {
  MLASIM_CHECK(num_new_tokens > 0 || num_new_computed_tokens > 0, "allocate_slots needs tokens");
  const GroupBlocks& computed = hits ? *hits : no_hits_;
  const ReqId id = request.request_id;
  const int num_local_computed_tokens = request.num_computed_tokens + num_new_computed_tokens;
  const int total_computed_tokens = std::min(num_local_computed_tokens, max_model_len_);
  // kv_cache_manager.py:514-516: the scheduler's prefill boundary (resumed requests replay outputs).
  const int prefill_end = std::max(request.num_prompt_tokens, request.num_tokens() - 1);
  const int free_blocks = pool_.get_num_free_blocks();
  if (full_sequence_must_fit) {
    const int full = std::min(request.num_tokens(), max_model_len_);
    if (get_num_blocks_to_allocate(id, full, computed, total_computed_tokens, num_local_computed_tokens, full, true,
                                   prefill_end) > free_blocks)
      return false;
  }
  const int num_tokens_main_model = total_computed_tokens + num_new_tokens;
  const int num_tokens_need_slot = std::min(num_tokens_main_model + num_lookahead_tokens, max_model_len_);
  // :550-562: blocks behind a window go first, even when this allocation fails.
  for (auto& m : managers_) m->remove_skipped_blocks(id, std::max(0, total_computed_tokens));
  if (get_num_blocks_to_allocate(id, num_tokens_need_slot, computed, num_local_computed_tokens,
                                 num_local_computed_tokens, num_tokens_main_model, false,
                                 prefill_end) > pool_.get_num_free_blocks())
    return false;
  const bool any_hit = std::any_of(computed.begin(), computed.end(), [](const std::vector<int>& b) { return !b.empty(); });
  if (any_hit) {  // kv_cache_coordinator.py:265-313 allocate_new_computed_blocks
    const bool running = std::any_of(managers_.begin(), managers_.end(), [&](const auto& m) { return m->is_running(id); });
    MLASIM_CHECK(!running, "prefix-cache hits for a running request");
    for (std::size_t g = 0; g < managers_.size(); ++g)
      managers_[g]->add_local_computed_blocks(id, computed[g], num_local_computed_tokens);
  }
  new_blocks.assign(managers_.size(), {});
  for (std::size_t g = 0; g < managers_.size(); ++g)
    managers_[g]->allocate_new_blocks(id, num_tokens_need_slot, num_tokens_main_model, new_blocks[g]);
  // Drafts are never cached: the count stops at the request's known tokens.
  cache_blocks(request, std::min(total_computed_tokens + num_new_tokens, request.num_tokens()));
  return true;
}

void GroupedKVCacheManager::cache_blocks(const Request& request, int num_computed_tokens) {
  if (!enable_caching_) return;
  // kv_cache_coordinator.py:777-804: hits land on scheduler blocks, so only whole ones are cached.
  const int cacheable = num_computed_tokens / scheduler_block_size_ * scheduler_block_size_;
  for (auto& m : managers_)
    if (m->enable_caching()) m->cache_blocks(request, cacheable);
}

void GroupedKVCacheManager::free(const Request& request) {
  for (auto& m : managers_) m->free(request.request_id);
}

void GroupedKVCacheManager::get_blocks(ReqId id, GroupBlocks& out) const {
  out.resize(managers_.size());
  for (std::size_t g = 0; g < managers_.size(); ++g) {
    const std::span<const int> b = managers_[g]->blocks(id);
    out[g].assign(b.begin(), b.end());
  }
}

void GroupedKVCacheManager::new_step_starts() {
  for (auto& m : managers_) m->new_step_starts();
}

void GroupedKVCacheManager::audit() const {
  pool_.audit();
  std::vector<int>& owners = audit_owners_;  // kept across calls, as the single-group audit keeps its own
  owners.assign(static_cast<std::size_t>(pool_.num_gpu_blocks()), 0);
  for (const auto& m : managers_) m->count_owners(owners);
  for (int id = 1; id < pool_.num_gpu_blocks(); ++id)
    MLASIM_CHECK(owners[static_cast<std::size_t>(id)] == pool_.ref_cnt(id),
                 "block " + std::to_string(id) + " ref count != number of block tables holding it");
}

}  // namespace mlasim
