// HYV4MLAAttention's backend, learnable sink and forced sparse MQA (vllm/models/hy_v4/nvidia/attention.py).
#include "config/hy_v4_attention.h"

namespace mlasim {

const char* const kHyV4NoSparseBackend =
    "HYV4 sparse attention was requested, but no valid sparse MLA backend is available for current runtime/config. "
    "Refusing to fall back to dense attention.";

namespace {

// AttentionBackend.supports_sink of the MLA backends: ROCM_AITER_MLA_SPARSE on MI3xx
// (rocm_aiter_mla_sparse.py ~396-400; every AMD GPU mlasim knows is one), no other MLA backend.
bool supports_sink(AttentionBackendKind kind, const BackendQuery& q) {
  return kind == AttentionBackendKind::kRocmAiterMlaSparse && q.vendor == GpuVendor::kAmd;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out;
}

}  // namespace

void apply_hy_v4_attention(const SelectionRequest& request, bool learnable_sink, BackendSelection& sel) {
  const BackendQuery& q = request.query;
  if (!sel.error.empty()) {
    // The DSA layer's probe wraps the selector's refusal (~349-361); a dense layer's is the selector's own.
    if (q.use_sparse) sel.error = std::string(kHyV4NoSparseBackend) + " (the selector: " + sel.error + ")";
    return;
  }
  if (!learnable_sink) return;
  const char* selected = vllm_backend_name(sel.backend);
  if (supports_sink(sel.backend, q)) {
    sel.learnable_sink_applied = true;
  } else {
    // HYV4FlashMLASparseBackend.validate_configuration: FLASHMLA_SPARSE's checks, and it takes sinks.
    const std::vector<std::string> reasons = validate_configuration(AttentionBackendKind::kFlashMlaSparse, q);
    if (!reasons.empty()) {
      sel.warnings.push_back(std::string("HYV4 learnable sink is unavailable: the selected backend ") + selected +
                             " cannot apply sinks and the sink-capable FLASHMLA_SPARSE path is invalid here (" +
                             joined(reasons) + "). The sink parameter is loaded but the sink bias is disabled.");
      return;
    }
    sel.notes.push_back(std::string("HYV4 learnable sink enabled: using the sink-capable FLASHMLA_SPARSE impl "
                                    "instead of ") + selected + ", which cannot apply sinks.");
    bind_backend(request, AttentionBackendKind::kFlashMlaSparse, sel);
    sel.learnable_sink_applied = true;
  }
  // _force_sparse_mqa: the flag is global; only the sparse layers read it (_use_sparse_mha).
  sel.sparse_mla_force_mqa = true;
  sel.notes.push_back("HYV4 learnable sink enabled: forcing sparse MQA for prefill too, as the dense MLA prefill "
                      "backends cannot apply sinks.");
}

}  // namespace mlasim
