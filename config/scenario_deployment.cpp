// Scenario → vLLM 0.33.0's backend, block size and runner.
#include "config/scenario_deployment.h"

#include <initializer_list>
#include <utility>

#include "config/hy_v4_attention.h"
#include "config/kv_cache_plan.h"
#include "config/masked_mha.h"
#include "config/mtp_drafter.h"

namespace mlasim {
namespace {

bool is_vllm033(EngineProfile p) { return p == EngineProfile::kVllm033 || p == EngineProfile::kStrict; }

// The hybrid families' KV cache groups, and the block size they settle on
// (config/kv_cache_plan.h). "" or vLLM's refusal.
std::string plan_hybrid_kv_cache(Scenario& s) {
  DeploymentConfig& d = s.deployment;
  d.kv_cache_layout = {};
  if (!s.scheduler.kv_cache_groups_listed) s.scheduler.kv_cache_layout = {};
  if (s.model.attention_layers.empty()) return "";
  if (gpu_info(d.gpu).vendor != GpuVendor::kNvidia)
    return "mlasim plans " + s.model.architecture + "'s KV cache groups on NVIDIA GPUs only (vLLM 0.33 builds "
           "other layer classes on ROCm: vllm/models/*/amd); choose an NVIDIA engine.gpu";
  auto plan = plan_kv_cache(s.model, kv_cache_plan_inputs(s));
  if (!plan) return plan.error().message;
  s.scheduler.block_size = d.selection.block_size = plan.value().block_size;
  d.selection.kernel_block_size = plan.value().mla_kernel_block_size;
  d.kv_cache_layout = plan.value().layout;
  // The scheduler's groups (sim/kv_cache/): the model's, unless the scenario lists its own.
  if (!s.scheduler.kv_cache_groups_listed) s.scheduler.kv_cache_layout = d.kv_cache_layout;
  return "";
}

}  // namespace

BackendQuery backend_query(const Scenario& s) {
  const GpuInfo& gpu = gpu_info(s.deployment.gpu);
  const ModelConfig& m = s.model;
  BackendQuery q;
  q.vendor = gpu.vendor;
  q.major = gpu.major;
  q.minor = gpu.minor;
  q.head_size = m.kv_lora_rank + m.qk_rope_head_dim;  // model_arch_config_convertor.py ~91-98
  q.dtype_is_bf16 = m.torch_dtype == "bfloat16";
  q.dtype_is_fp32 = m.torch_dtype == "float32";
  q.kv_cache_dtype = s.deployment.effective_kv_cache_dtype;
  if (s.scheduler.block_size_given) q.block_size = s.scheduler.block_size;
  q.use_sparse = m.index_topk.has_value();
  q.num_heads_per_rank = m.num_attention_heads / std::max(1, s.parallel.tensor_parallel_size);
  q.qk_nope_head_dim = m.qk_nope_head_dim;
  q.qk_rope_head_dim = m.qk_rope_head_dim;
  q.kv_lora_rank = m.kv_lora_rank;
  q.v_head_dim = m.v_head_dim;
  q.index_topk = m.index_topk ? m.index_topk : m.unused_index_topk;
  q.num_speculative_tokens = s.scheduler.num_speculative_tokens;
  return q;
}

std::string resolve_deployment(Scenario& s) {
  DeploymentConfig& d = s.deployment;
  d.effective_kv_cache_dtype = d.kv_cache_dtype;
  d.kv_cache_dtype_note.clear();
  // `auto` resolved from a modelopt quantization_config (engine/arg_utils.py ~2297).
  if (d.kv_cache_dtype == KvCacheDtype::kAuto && !s.model.quant_kv_cache_dtype.empty())
    if (auto from_quant = parse_kv_cache_dtype(s.model.quant_kv_cache_dtype); from_quant && *from_quant != KvCacheDtype::kAuto) {
      d.effective_kv_cache_dtype = *from_quant;
      d.kv_cache_dtype_note = "the config's quantization_config (" + s.model.quant_method + ") names the KV cache's dtype: " +
                              s.model.quant_kv_cache_dtype + " (utils/torch_utils.py ~443-516)";
    }
  // verify_and_update_config (model_executor/models/config.py ~74-110).
  if (s.model.architecture == "DeepseekV32ForCausalLM" && d.effective_kv_cache_dtype == KvCacheDtype::kBfloat16) {
    d.effective_kv_cache_dtype = KvCacheDtype::kAuto;
    d.kv_cache_dtype_note = "DeepseekV32ForCausalLM.verify_and_update_config: bfloat16 → auto (models/config.py ~84-86)";
  }
  const GpuInfo& gpu = gpu_info(d.gpu);
  // Glm5NextModelConfig.verify_and_update_config (models/config.py ~119-143): auto -> fp8 on SM10x
  // for the sparse (index_topk) checkpoints.
  if (s.model.architecture == "Glm5NextForCausalLM" && d.effective_kv_cache_dtype == KvCacheDtype::kAuto &&
      gpu.vendor == GpuVendor::kNvidia && gpu.major == 10 && s.model.index_topk) {
    d.effective_kv_cache_dtype = KvCacheDtype::kFp8;
    d.kv_cache_dtype_note = "Glm5NextModelConfig.verify_and_update_config: auto → fp8 on SM10x (models/config.py ~119-143)";
  }
  if (s.model.architecture == "GlmMoeDsaForCausalLM" && d.effective_kv_cache_dtype == KvCacheDtype::kAuto &&
      gpu.vendor == GpuVendor::kNvidia && gpu.major == 10) {
    d.effective_kv_cache_dtype = KvCacheDtype::kFp8E4m3;
    d.kv_cache_dtype_note = "GlmMoeDsaForCausalLM.verify_and_update_config: auto → fp8_e4m3 on SM10x (models/config.py ~89-101)";
  }
  d.selection_applies = is_vllm033(s.engine.profile);
  if (!d.selection_applies) {
    // Older profiles and SGLang: the backend named (or flashattn-mla), block 16, runner v1.
    d.selection = {};
    d.selection.backend = s.engine.attention_backend;
    d.selection.explicit_backend = s.engine.attention_backend_given.has_value();
    d.selection.block_size = s.scheduler.block_size;
    d.selection.block_size_auto = false;
    d.selection.kernel_block_size = s.scheduler.block_size;
    d.selection.model_runner = s.engine.model_runner;
    d.selection.card = backend_card(s.engine.profile, s.engine.attention_backend, backend_query(s));
    return "";
  }
  SelectionRequest req;
  req.profile = s.engine.profile;
  req.query = backend_query(s);
  req.backend = s.engine.attention_backend_given;
  req.model_runner = s.engine.model_runner_given;
  // An explicit backend is checked against the deployment only when the scenario describes one
  // (engine.gpu or model.hf_config); without, it is a routing what-if, as before.
  d.validated = !req.backend || d.gpu_given || !s.model.hf_config.empty();
  req.validate_explicit = d.validated;
  d.selection = s.model.architecture == "DeepseekV4ForCausalLM" ? select_deepseek_v4_backend(req) : select_backend(req);
  if (s.model.architecture == "HYV4ForCausalLM") apply_hy_v4_attention(req, s.model.learnable_sink, d.selection);
  if (!d.selection.error.empty()) return d.selection.error;
  s.engine.attention_backend = d.selection.backend;
  s.scheduler.block_size = d.selection.block_size;
  s.engine.model_runner = d.selection.model_runner;
  return plan_hybrid_kv_cache(s);
}

namespace {

// The chosen backend's card, the block sizes, the runner and the paths rows take.
// The deployment's masked-MHA prefill (config/masked_mha.h), as the routing builds it.
bool masked_mha_available(const Scenario& s, const BackendCard& b) {
  if (!b.dense_mha_prefill || !s.model.index_topk) return false;
  const int max_model_len = s.scheduler.max_model_len > 0 ? s.scheduler.max_model_len : s.model.max_position_embeddings;
  return masked_mha_rule(backend_query(s), s.engine.attention_backend, s.parallel.tensor_parallel_size, max_model_len,
                         s.scheduler.max_num_seqs, s.scheduler.block_size, *s.model.index_topk)
      .available;
}

std::string explain_backend(const Scenario& s) {
  const BackendSelection& sel = s.deployment.selection;
  const ModelConfig& m = s.model;
  std::string out;
  auto line = [&](const std::string& t) { out += t + "\n"; };
  const BackendCard& b = sel.card;
  line(std::string("backend: ") + b.vllm_name + " (" + b.source + "); reorder_batch_threshold " +
       std::to_string(b.reorder_batch_threshold) +
       (b.reorder_batch_threshold != b.class_threshold ? " (class " + std::to_string(b.class_threshold) + ", raised to 1 + k)" : "") +
       ", query_len_support " + to_string(b.query_len_support) + " (" + b.builder_source + ")");
  line("block size: " + std::to_string(sel.block_size) +
       (sel.block_size_auto ? " (auto: the backend's preferred size, platforms/interface.py ~700-790)"
                            : " (scheduler.block_size)") +
       "; kernel block size " + std::to_string(sel.kernel_block_size) +
       (sel.kernel_block_size != sel.block_size ? " (select_common_block_size, v1/worker/utils.py ~515)" : ""));
  line(std::string("model runner: ") + to_string(sel.model_runner) + " (" + sel.model_runner_reason + ")");
  const std::string t = std::to_string(b.reorder_batch_threshold);
  int num_linear = 0, num_mla = 0;
  for (const AttentionLayerPlan& l : m.attention_layers) (l.kind == AttentionLayerKind::kLinear ? num_linear : num_mla) += 1;
  const std::string mla_layers = num_linear > 0 ? " (the " + std::to_string(num_mla) + " MLA layers)" : "";
  if (is_deepseek_v4_backend(b.kind)) {
    line("paths: every layer kind splits as the sliding-window cache's builder does (decode_threshold 1 + k = " + t +
         ", sparse_swa.py ~467-475, flashmla.py ~143-172): decodes (q <= " + t +
         ") on the sparse decode kernel, the rest on the sparse prefill kernel, every token absorbed (MQA); no MHA form");
    for (const auto& [ratio, what] : std::initializer_list<std::pair<int, const char*>>{
             {1, "sliding-window only (compress ratio 1): the last sliding_window tokens"},
             {4, "compressed, ratio 4 (CSA): the indexer's top index_topk compressed states and the window"},
             {128, "compressed, ratio 128 (HCA): every compressed state and the window"}}) {
      int n = 0;
      for (const AttentionLayerPlan& l : m.attention_layers) n += l.compress_ratio == ratio;
      if (n > 0) line("  " + std::to_string(n) + " layers " + what);
    }
  } else if (m.index_topk && b.sparse && sel.sparse_mla_force_mqa)
    line("paths: every token on the decode path (top-k MQA): the split's decodes (q <= " + t + ") and its prefills "
         "alike, as attention_config.sparse_mla_force_mqa asks (no dense-MHA prefill, mla_attention.py ~1238-1240)");
  else if (m.index_topk && b.sparse)
    line("paths" + mla_layers + ": the split's decodes (q <= " + t + ") on the decode path; its prefills take dense MHA while the "
         "longest prefill sequence fits index_topk " + std::to_string(*m.index_topk) +
         (b.dense_mha_prefill ? "" : " (not on this backend: no dense prefill)") +
         (masked_mha_available(s, b)
              ? ", past it masked MHA (the top-k as a key mask) where vLLM's length table for this backend and TP says "
                "so and the masks fit their workspace (_use_masked_mha, mla_attention.py ~1872-1899), else every token "
                "the decode path"
              : ", else every token the decode path") +
         " (sparse_mla_attention.py ~136-144, mla_attention.py ~986-994)");
  else if (m.index_topk)
    line("paths: every token on the decode path (sparse MLA)");
  else
    line("paths" + mla_layers + ": rows with q <= " + t + (b.require_uniform ? " (uniform)" : "") +
         " at the front of the batch are decodes on the decode path (MQA); the rest take the prefill path (MHA)");
  if (num_linear > 0)
    line("paths (the " + std::to_string(num_linear) + " linear-attention (KDA) layers): no MLA path; GDN_ATTN's own "
         "split (gdn_attn.py ~337-430): a first chunk (nct = 0), one token or more, on the chunked prefill kernel, one "
         "token over prior state on the recurrent decode kernel" +
         (s.scheduler.num_speculative_tokens > 0 ? ", decodes of up to 1 + k tokens on the speculative-decode kernel" : "") +
         "; model runner V1 reorders the batch with the smallest group threshold, this builder's " +
         std::to_string(1 + s.scheduler.num_speculative_tokens) + " (gdn_attn.py ~171-176)");
  return out;
}

// The MTP drafter vLLM makes of the target, when the scenario drafts with MTP from a config.json
// that has MTP layers.
template <typename Line>
void line_mtp_drafter(const Scenario& s, Line& line) {
  const ModelConfig& m = s.model;
  const SchedulerConfig& sc = s.scheduler;
  if (m.hf_config.empty() || m.num_nextn_predict_layers == 0 || sc.num_speculative_tokens == 0 ||
      sc.speculative_method != SpeculativeMethod::kMtp)
    return;
  if (const auto d = mtp_drafter(m.model_type, m.architecture))
    line("speculative: MTP, k = " + std::to_string(sc.num_speculative_tokens) + ", drafted by " + d->architecture +
         " (model_type " + d->model_type + ", n_predict = num_nextn_predict_layers " +
         std::to_string(m.num_nextn_predict_layers) + "; SpeculativeConfig.hf_config_override, config/speculative.py "
         "~720-1100)");
}

}  // namespace

std::string explain_deployment(const Scenario& s) {
  const DeploymentConfig& d = s.deployment;
  const ModelConfig& m = s.model;
  const GpuInfo& gpu = gpu_info(d.gpu);
  const BackendSelection& sel = d.selection;
  std::string out;
  auto line = [&](const std::string& t) { out += t + "\n"; };
  line("model: " + (m.hf_config.empty() ? "preset " + m.preset + " (as " + m.architecture + ")"
                                        : m.hf_config + ": " + m.architecture + ", model_type " + m.model_type) +
       (m.hf_config.empty() || m.text_model_type == m.model_type ? "" : " (text_config: " + m.text_model_type + ")") +
       "; MLA (head_size " + std::to_string(m.kv_lora_rank + m.qk_rope_head_dim) + " = kv_lora_rank " +
       std::to_string(m.kv_lora_rank) + " + qk_rope_head_dim " + std::to_string(m.qk_rope_head_dim) + ")" +
       (m.num_attn_modules > 1 ? ", " + std::to_string(m.num_attn_modules) + " MLA modules per decoder layer" : ""));
  line_mtp_drafter(s, line);
  const bool hy_v4 = m.architecture == "HYV4ForCausalLM";
  line(std::string("sparse: ") +
       (m.index_topk ? "yes: index_topk = " + std::to_string(*m.index_topk) +
                           (hy_v4 ? " on every layer (layer_types: DSA, models/hy_v4/nvidia/attention.py ~323-330)"
                                  : " (is_v32 = hasattr(config, \"index_topk\"), deepseek_v2.py ~1138)")
        : hy_v4 ? "no: no layer_types entry is DSA, so every layer is dense MLA (models/hy_v4/nvidia/attention.py ~323-330)"
                : "no: the config has no index_topk (deepseek_v2.py ~1138), so dense MLA"));
  if (hy_v4)
    line(std::string("learnable sink: ") +
         (!m.learnable_sink                 ? "off (learnable_sink false)"
          : sel.learnable_sink_applied      ? "applied by " + std::string(vllm_backend_name(sel.backend))
          : sel.error.empty()               ? "loaded but disabled: no backend here applies it (see the warning)"
                                            : "-"));
  line(std::string("deployment: ") + gpu.display +
       (gpu.vendor == GpuVendor::kNvidia
            ? " (compute capability " + std::to_string(gpu.major) + "." + std::to_string(gpu.minor) + ")"
            : std::string(" (") + gpu.gcn_arch + ")") +
       (d.gpu_given ? "" : " [default]") + ", TP " + std::to_string(s.parallel.tensor_parallel_size) + " (" +
       std::to_string(m.num_attention_heads / std::max(1, s.parallel.tensor_parallel_size)) +
       " heads per rank), kv_cache_dtype " + to_string(d.kv_cache_dtype) +
       (d.effective_kv_cache_dtype != d.kv_cache_dtype ? std::string(" → ") + to_string(d.effective_kv_cache_dtype) +
                                                             " (" + d.kv_cache_dtype_note + ")"
                                                       : ""));
  if (!d.selection_applies) {
    line(std::string("backend: ") + vllm_backend_name(sel.backend) + " (profile " + to_string(s.engine.profile) +
         " predates vLLM 0.33's selection: the backend named, else FLASH_ATTN_MLA; block size 16 unless set; runner v1)");
    return out;
  }
  if (sel.chosen_by_model)
    line("candidates: none: DeepSeek-V4's attention class names its backend (_select_dsv4_attn_cls, "
         "models/deepseek_v4/nvidia/model.py ~537-568: FLASHINFER_MLA_SPARSE_DSV4 on SM12x or when named, else "
         "FLASHMLA_SPARSE_DSV4); vLLM's selector is not asked");
  else
    line(sel.explicit_backend ? "candidates: the backend named in engine.attention_backend" +
                                    std::string(d.validated ? ", checked as vLLM checks --attention-backend"
                                                            : " (not checked: the scenario names no engine.gpu)")
                              : "candidates (vLLM 0.33 _get_backend_priorities, cuda.py ~84-155, in priority order):");
  for (const auto& c : sel.candidates) {
    std::string reasons;
    for (const auto& r : c.reasons) reasons += (reasons.empty() ? "" : "; ") + r;
    const std::string verdict = sel.explicit_backend && !d.validated ? "taken as named"
                                : c.reasons.empty()                  ? "valid"
                                                                     : "invalid: " + reasons;
    line(std::string("  ") + vllm_backend_name(c.kind) + ": " + verdict);
  }
  if (!sel.error.empty()) {
    line("refused: " + sel.error);
    return out;
  }
  for (const auto& w : sel.warnings) line("warning: " + w);
  for (const auto& n : sel.notes) line("note: " + n + " (models/hy_v4/nvidia/attention.py ~544-664)");
  out += explain_backend(s);
  return out;
}

}  // namespace mlasim
