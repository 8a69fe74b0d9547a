// vLLM 0.33's KV cache plan for a model: block size, specs, layout, groups, block sizes.
#include "config/kv_cache_plan.h"

#include <algorithm>
#include <numeric>
#include <set>

#include "config/scenario_deployment.h"

namespace mlasim {
namespace {

long long cdiv(long long a, long long b) { return (a + b - 1) / b; }

Error plan_error(std::string message, std::string hint = {}) {
  Error e;
  e.message = std::move(message);
  e.hint = std::move(hint);
  return e;
}

std::vector<const KvBackendFacts*> non_ssm_backends(const KvModelLayers& m) {
  std::vector<const KvBackendFacts*> out;
  for (const auto& b : m.backends)
    if (!b.ssm) out.push_back(&b);
  return out;
}

int min_base(const KvBackendFacts& b) {
  int m = b.kernel_block_sizes.front().size;
  for (const auto& s : b.kernel_block_sizes) m = std::min(m, s.size);
  return m;
}

std::string sizes_text(const KvBackendFacts& b) { return b.name + ": " + kernel_block_sizes_text(b.kernel_block_sizes); }

// _preferred_block_size_for_backends (platforms/interface.py ~700-747).
Result<int> preferred_block_size(const std::vector<const KvBackendFacts*>& backends, int default_size) {
  if (backends.size() == 1) return backends[0]->preferred(default_size);
  auto all_support = [&](int size) {
    return std::all_of(backends.begin(), backends.end(), [&](const KvBackendFacts* b) { return b->supports_block_size(size); });
  };
  if (all_support(default_size)) return default_size;
  std::set<long long> candidates{1};
  for (const KvBackendFacts* b : backends) {
    std::set<long long> next;
    for (long long c : candidates) {
      if (b->kernel_block_sizes.empty()) next.insert(c);
      for (const auto& s : b->kernel_block_sizes) next.insert(std::lcm(c, static_cast<long long>(s.size)));
    }
    candidates = next;
  }
  for (long long c : candidates)
    if (c < (1LL << 30) && all_support(static_cast<int>(c))) return static_cast<int>(c);
  std::string list;
  for (const KvBackendFacts* b : backends) list += (list.empty() ? "" : "; ") + sizes_text(*b);
  return plan_error("The attention backends share no supported KV cache block size (" + list + ").");
}

// The KDA state page of one layer (MambaSpec(shapes, dtypes, block_size=-1).page_size_bytes).
long long mamba_page(const KvModelLayers& m, const KvCachePlanInputs& in) {
  for (const auto& l : m.layers)
    if (l.kind == KvLayerKind::kKda) {
      KvSpecContext ctx;
      ctx.num_speculative_tokens = in.num_speculative_tokens;
      ctx.tensor_parallel_size = in.tensor_parallel_size;
      return kda_state_spec(m, l.num_heads, l.head_size, l.conv_size, ctx).page_size_bytes();
    }
  return 0;
}

// The MLA page of one token as _align_hybrid_block_size computes it (interface.py ~975): the
// head size in the cache dtype, without a backend's packing.
long long mla_page_per_token(const ModelConfig& cfg, const KvModelLayers& m) {
  return static_cast<long long>(cfg.kv_lora_rank + cfg.qk_rope_head_dim) * cache_torch_dtype(m.cache_dtype, m.model_dtype).size;
}

// _align_hybrid_block_size (interface.py ~940-1130): attention blocks whose page holds a Mamba
// state page, the Mamba page padded to the attention page.
void align_hybrid_block_size(const ModelConfig& cfg, const KvModelLayers& m, const KvCachePlanInputs& in,
                             KvCachePlan& plan) {
  const long long attn_1 = mla_page_per_token(cfg, m);
  const long long mamba = mamba_page(m, in);
  if (mamba == 0) return;
  const auto backends = non_ssm_backends(m);
  long long kernel_alignment = std::max<long long>(min_base(*backends.front()), plan.block_size);
  long long backend_alignment = 1;
  for (const KvBackendFacts* b : backends)
    if (!b->kernel_block_sizes.empty()) backend_alignment = std::lcm(backend_alignment, static_cast<long long>(min_base(*b)));
  kernel_alignment = std::max<long long>(kernel_alignment, 128);  // use_mla: TRTLLM/FlashInfer decode kernels
  // align mode: lcm with get_mamba_prefill_checkpoint_alignment, None for KDA layers (no override).
  long long block = kernel_alignment * cdiv(mamba, kernel_alignment * attn_1);
  block = backend_alignment * cdiv(block, backend_alignment);
  if (plan.block_size < block) plan.block_size = static_cast<int>(block);
  if (plan.mamba_cache_mode == "align") plan.mamba_block_size = plan.block_size;
  const long long attn_page = plan.block_size * attn_1;
  if (attn_page != mamba) plan.mamba_page_size_padded = attn_page;
}

// update_block_size_for_backend (interface.py ~750-795) and _check_aligned_block_size (~797).
Status resolve_block_size(const ModelConfig& cfg, const KvModelLayers& m, const KvCachePlanInputs& in, KvCachePlan& plan) {
  const auto backends = non_ssm_backends(m);
  plan.block_size = in.block_size.value_or(16);
  if (!in.block_size && !backends.empty()) {
    auto preferred = preferred_block_size(backends, 16);
    if (!preferred) return preferred.error();
    plan.block_size = preferred.value();
  }
  // MambaModelConfig.verify_and_update_config (model_executor/models/config.py ~750-787).
  const int before = plan.block_size;
  if (m.is_hybrid) {
    plan.mamba_cache_mode = in.enable_prefix_caching ? "align" : "none";
    plan.mamba_block_size = in.enable_prefix_caching ? in.block_size.value_or(16) : in.max_model_len;
    align_hybrid_block_size(cfg, m, in, plan);
  }
  if (plan.block_size == before) return Status::Ok();
  std::string rejecting;
  for (const KvBackendFacts* b : backends)
    if (!b->supports_block_size(plan.block_size)) rejecting += (rejecting.empty() ? "" : ", ") + b->name;
  if (!rejecting.empty())
    return plan_error("Aligned KV cache block size " + std::to_string(plan.block_size) +
                      " is not supported by attention backend(s): " + rejecting + ".");
  return Status::Ok();
}

// get_supported_kv_cache_layouts (v1/attention/backends/utils.py ~243) and resolve_kv_cache_layout
// (~293-382) without VLLM_KV_CACHE_LAYOUT, a connector or DCP.
Result<KvTensorLayout> resolve_layout(const KvModelLayers& m, const std::vector<NamedKvCacheSpec>& specs) {
  using L = KvTensorLayout;
  std::vector<std::vector<L>> declared;
  for (const auto& b : m.backends)
    if (!b.layouts.empty()) declared.push_back(b.layouts);
  std::vector<L> candidates = declared.empty() ? std::vector<L>{L::kLBNHC, L::kLBHNC, L::kBLNHC, L::kBLHNC, L::kBHLNC, L::kLHBNC}
                                               : declared.front();
  for (const auto& d : declared)
    if (d != declared.front()) return plan_error("mlasim does not model backends declaring different KV cache layouts");
  std::set<std::tuple<long long, long long, long long>> shapes;
  for (const auto& s : specs) shapes.insert({s.spec.num_kv_heads, s.spec.num_states(), s.spec.page_size_bytes()});
  if (shapes.size() > 1) {
    std::erase_if(candidates, [](L l) { return !is_block_compact(l); });
    if (candidates.empty()) return plan_error("Specs with mixed HNC shapes need a block-compact layout, but none is in every supported set.");
  }
  return candidates.front();
}

// select_common_block_size (v1/worker/utils.py ~515-562): the group's block size when every backend
// takes it, else the largest exact size of one of them that divides it and all take.
Result<int> common_kernel_block_size(int block, const std::vector<const KvBackendFacts*>& backends) {
  auto supported = [&](int bs) {
    return std::all_of(backends.begin(), backends.end(), [&](const KvBackendFacts* b) {
      return std::any_of(b->worker_kernel_block_sizes.begin(), b->worker_kernel_block_sizes.end(),
                         [&](const KernelBlockSize& s) { return s.multiple_of ? bs % s.size == 0 : bs == s.size; });
    });
  };
  if (supported(block)) return block;
  int best = 0;
  for (const KvBackendFacts* b : backends)
    for (const auto& s : b->worker_kernel_block_sizes)
      if (!s.multiple_of && block % s.size == 0 && supported(s.size)) best = std::max(best, s.size);
  if (best) return best;
  std::string list;
  for (const KvBackendFacts* b : backends)
    list += (list.empty() ? "" : "; ") + b->name + ": " + kernel_block_sizes_text(b->worker_kernel_block_sizes);
  return plan_error("No common block size for " + std::to_string(block) + " (" + list + ").");
}

// _get_kv_cache_bytes_per_block for a block-outermost layout (kv_cache_planning.py ~572-600): the
// widest group's pages, rounded up to every layer's block stride alignment.
long long block_outermost_bytes_per_block(const std::vector<PlannedKvCacheGroup>& groups) {
  long long widest = 0, alignment = 1;
  for (const auto& g : groups) {
    long long sum = 0;
    for (const auto& s : g.layer_specs) {
      sum += s.page_size_bytes();
      alignment = std::lcm(alignment, s.block_stride_alignment_bytes());
    }
    widest = std::max(widest, sum);
  }
  return cdiv(widest, alignment) * alignment;
}

// The kernel block size of the group that holds the first layer of the model's MLA attention
// backend (the selection's, or DeepSeek-V4's attention class's): prepare_kernel_block_sizes
// (v1/worker/utils.py ~630-676) over the worker's AttentionGroups of that KV cache group
// (v1/worker/gpu/attn_utils.py ~215). Block-outermost packing puts other layers' pages between a
// layer's blocks (block stride > layer stride): the manager's block size, never split.
Result<int> mla_kernel_block_size(const KvModelLayers& m, const std::vector<PlannedKvCacheGroup>& groups,
                                  const std::vector<NamedKvCacheSpec>& specs, const std::vector<int>& layer_backend,
                                  KvTensorLayout layout) {
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const KvBackendFacts& b = m.backends[layer_backend[i]];
    if (!b.mla_kind && b.name != "FLASHMLA_SPARSE_DSV4" && b.name != "FLASHINFER_MLA_SPARSE_DSV4") continue;
    for (const auto& g : groups) {
      if (std::find(g.layer_names.begin(), g.layer_names.end(), specs[i].name) == g.layer_names.end()) continue;
      if (is_block_outermost(layout)) {
        const long long stride = block_outermost_bytes_per_block(groups);
        for (const auto& s : g.layer_specs)
          if (stride > s.page_size_bytes()) return g.block_size();
      }
      std::vector<const KvBackendFacts*> backends;
      for (const auto& name : g.layer_names)
        for (std::size_t j = 0; j < specs.size(); ++j)
          if (specs[j].name == name && std::find(backends.begin(), backends.end(), &m.backends[layer_backend[j]]) == backends.end())
            backends.push_back(&m.backends[layer_backend[j]]);
      return common_kernel_block_size(g.block_size(), backends);
    }
  }
  return 0;
}

// Every layer's spec at the plan's sizes, in registration order, and each one's backend (index into
// m.backends); the layers without a cache of their own are left out.
Result<std::vector<NamedKvCacheSpec>> layer_specs(const KvModelLayers& m, const KvCachePlan& plan,
                                                  const KvCachePlanInputs& in, std::vector<int>& layer_backend) {
  KvSpecContext ctx;
  ctx.block_size = plan.block_size;
  ctx.mamba_block_size = plan.mamba_block_size;
  ctx.mamba_page_size_padded = plan.mamba_page_size_padded;
  ctx.mamba_cache_mode = plan.mamba_cache_mode;
  ctx.num_speculative_tokens = in.num_speculative_tokens;
  ctx.tensor_parallel_size = in.tensor_parallel_size;
  std::vector<NamedKvCacheSpec> specs;
  for (const KvLayer& l : m.layers) {
    auto spec = kv_layer_spec(m, l, ctx);
    if (!spec) continue;
    if (l.kind == KvLayerKind::kKpoolTail && plan.block_size % spec->block_size != 0)  // attention.py ~164
      return plan_error("Glm5NextTailCache: cache_config.block_size (" + std::to_string(plan.block_size) +
                        ") must be a multiple of the tail ring (" + std::to_string(spec->block_size) + ")");
    if (spec->page_size_bytes() == 0)  // get_kv_cache_configs' memory check divides by it (~1554)
      return plan_error("vLLM 0.33 fails to start: integer division or modulo by zero (a ZeroDivisionError in the KV "
                        "cache memory check, v1/kv_cache_interface.py ~1383: " + l.name + "'s page holds no state: a "
                        "block of " + std::to_string(spec->block_size) + " tokens, one state per " +
                        std::to_string(spec->tokens_per_state) + " tokens)",
                        "give a --block-size that is a multiple of the largest compress ratio");
    specs.push_back({l.name, *spec});
    layer_backend.push_back(l.backend);
  }
  return specs;
}

KvCacheGroup layout_group(const PlannedKvCacheGroup& g) {
  KvCacheGroup out;
  const KvCacheSpec& first = g.layer_specs.front();
  out.kind = first.kind;
  out.layer_names = g.layer_names;
  out.block_size = first.block_size;
  out.page_size_bytes = first.page_size_bytes();
  out.tokens_per_state = first.tokens_per_state;
  out.sliding_window = first.sliding_window;
  out.extra_retained_tokens = first.extra_retained_tokens;
  if (first.kind == KvCacheSpecKind::kMamba) {
    out.mamba_cache_mode = first.mamba_cache_mode;
    out.num_speculative_blocks = first.num_speculative_blocks;
  }
  out.uniform_type = g.uniform_type;
  out.group_page_size_bytes = g.page_size_bytes();
  out.prefix_cacheable = g.prefix_cacheable();
  for (const auto& s : g.layer_specs) {
    out.layer_page_size_bytes.push_back(s.page_size_bytes());
    out.layer_tokens_per_state.push_back(s.kind == KvCacheSpecKind::kMamba ? -1 : s.tokens_per_state);
  }
  return out;
}

}  // namespace

Result<KvCachePlan> plan_kv_cache(const ModelConfig& cfg, const KvCachePlanInputs& in) {
  auto built = kv_model_layers(cfg, in);
  if (!built) return built.error();
  const KvModelLayers& m = built.value();
  KvCachePlan plan;
  plan.backends = m.backends;
  plan.cache_dtype = m.cache_dtype;
  if (cfg.attention_layers.empty()) {
    plan.block_size = in.selected_block_size;  // the selection resolved it (config/backend_selection.h)
  } else if (Status st = resolve_block_size(cfg, m, in, plan); !st) {
    return st.error();
  }
  std::vector<int> layer_backend;
  auto collected = layer_specs(m, plan, in, layer_backend);
  if (!collected) return collected.error();
  const std::vector<NamedKvCacheSpec>& specs = collected.value();
  auto layout = resolve_layout(m, specs);
  if (!layout) return layout.error();
  plan.tensor_layout = layout.value();
  auto groups = get_kv_cache_groups(specs, plan.tensor_layout);
  if (!groups) return groups.error();
  plan.groups = std::move(groups).value();
  for (const auto& g : plan.groups) {
    std::vector<std::string> names;
    for (const auto& layer : g.layer_names)
      for (std::size_t i = 0; i < specs.size(); ++i)
        if (specs[i].name == layer && std::find(names.begin(), names.end(), m.backends[layer_backend[i]].name) == names.end())
          names.push_back(m.backends[layer_backend[i]].name);
    plan.group_backends.push_back(names);
    plan.layout.groups.push_back(layout_group(g));
  }
  if (!cfg.attention_layers.empty()) {  // a plain MLA model's is the selection's (config/backend_selection.h)
    auto kernel = mla_kernel_block_size(m, plan.groups, specs, layer_backend, plan.tensor_layout);
    if (!kernel) return kernel.error();
    plan.mla_kernel_block_size = kernel.value();
  }
  plan.layout.num_blocks = in.num_gpu_blocks;  // num_gpu_blocks_override (kv_cache_planning.py ~312)
  resolve_kv_cache_block_sizes(plan.layout, in.enable_prefix_caching, plan.block_size);
  return plan;
}

KvCachePlanInputs kv_cache_plan_inputs(const Scenario& s) {
  KvCachePlanInputs in;
  in.gpu = s.deployment.gpu;
  in.kv_cache_dtype = s.deployment.effective_kv_cache_dtype;
  in.tensor_parallel_size = s.parallel.tensor_parallel_size;
  if (s.scheduler.block_size_given) in.block_size = s.scheduler.block_size;
  in.selected_block_size = s.scheduler.block_size;
  in.num_speculative_tokens = s.scheduler.num_speculative_tokens;
  in.num_gpu_blocks = s.scheduler.num_gpu_blocks;
  in.enable_prefix_caching = s.scheduler.enable_prefix_caching;
  in.max_model_len = s.scheduler.max_model_len;
  in.mla_backend = s.deployment.selection.backend;
  in.mla_query = backend_query(s);
  return in;
}

}  // namespace mlasim
