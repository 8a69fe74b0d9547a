// HY-V4's attention class after vLLM's selector (config/hy_v4_attention.h): the sink backend it
// binds, the refusal of a DSA layer with no sparse backend, forced sparse MQA. Every expected
// backend, block size and threshold is one vLLM 0.33.0 gives for the same deployment
// (tools/conformance/vllm_selection.py runs HYV4MLAAttention._resolve_sink_backend and
// _force_sparse_mqa; tests/data/vllm033_selection_hyv4.json is that run's table, checked in
// tests/deploy/test_vllm033_selection_table.cpp).
#include <catch2/catch.hpp>

#include <string>

#include "config/hy_v4_attention.h"

using namespace mlasim;
using K = AttentionBackendKind;

namespace {

// HYV4Config's attention: 32 heads, 576 = 512 + 64, qk_nope 192, v 256, index_topk 2048.
SelectionRequest hy_v4(int major, bool sparse, int tp = 1) {
  SelectionRequest r;
  r.query.major = major;
  r.query.use_sparse = sparse;
  r.query.num_heads_per_rank = 32 / tp;
  r.query.qk_nope_head_dim = 192;
  r.query.v_head_dim = 256;
  r.query.index_topk = 2048;
  return r;
}

BackendSelection resolve(const SelectionRequest& r, bool sink = true) {
  BackendSelection sel = select_backend(r);
  apply_hy_v4_attention(r, sink, sel);
  return sel;
}

}  // namespace

TEST_CASE("HY-V4: DSA layers get the sink-capable FLASHMLA_SPARSE and forced sparse MQA", "[selection][hy_v4]") {
  // H200: the selector's FLASH_ATTN_MLA_SPARSE takes no sink; HY-V4's FLASHMLA_SPARSE subclass does.
  BackendSelection h200 = resolve(hy_v4(9, true));
  CHECK(h200.candidates.front().kind == K::kFlashAttnMla);   // the selector's list, as it was
  CHECK(h200.backend == K::kFlashMlaSparse);
  CHECK(h200.block_size == 64);
  CHECK(h200.kernel_block_size == 64);
  CHECK(h200.card.reorder_batch_threshold == 128);
  CHECK(h200.learnable_sink_applied);
  CHECK(h200.sparse_mla_force_mqa);
  CHECK(h200.warnings.empty());
  REQUIRE(h200.notes.size() == 2);
  CHECK(h200.notes[0] == "HYV4 learnable sink enabled: using the sink-capable FLASHMLA_SPARSE impl instead of "
                         "FLASH_ATTN_MLA_SPARSE, which cannot apply sinks.");
  // TP 8 on B200: 4 heads per rank, so the selector's pick is FA4's sparse backend; bound the same.
  BackendSelection b200 = resolve(hy_v4(10, true, 8));
  CHECK(b200.backend == K::kFlashMlaSparse);
  CHECK(b200.card.reorder_batch_threshold == 1024);
  CHECK(b200.sparse_mla_force_mqa);
  // Without the sink: the selector's backend, no forced MQA.
  BackendSelection off = resolve(hy_v4(9, true), false);
  CHECK(off.backend == K::kFlashAttnMlaSparse);
  CHECK_FALSE(off.sparse_mla_force_mqa);
  CHECK_FALSE(off.learnable_sink_applied);
  CHECK(off.notes.empty());
}

TEST_CASE("HY-V4: the sink disabled where FLASHMLA_SPARSE does not validate", "[selection][hy_v4]") {
  // SM120: FLASHMLA_SPARSE is Hopper / Blackwell DC only.
  BackendSelection rtx = resolve(hy_v4(12, true));
  CHECK(rtx.backend == K::kFlashInferMlaSparseSm120);
  CHECK_FALSE(rtx.sparse_mla_force_mqa);
  REQUIRE(rtx.warnings.size() == 1);
  CHECK(rtx.warnings[0].find("(compute capability not supported)") != std::string::npos);
  // Dense layers (the class default: no layer_types): no sparse backend takes them.
  BackendSelection dense = resolve(hy_v4(9, false));
  CHECK(dense.backend == K::kFlashAttnMla);
  CHECK(dense.block_size == 16);
  CHECK_FALSE(dense.sparse_mla_force_mqa);
  REQUIRE(dense.warnings.size() == 1);
  CHECK(dense.warnings[0].find("the selected backend FLASH_ATTN_MLA cannot apply sinks") != std::string::npos);
  CHECK(dense.warnings[0].find("(non-sparse not supported)") != std::string::npos);
}

TEST_CASE("HY-V4: a DSA layer with no sparse backend is refused, not made dense", "[selection][hy_v4]") {
  BackendSelection a100 = resolve(hy_v4(8, true));
  REQUIRE_FALSE(a100.error.empty());
  CHECK(a100.error.rfind(kHyV4NoSparseBackend, 0) == 0);
  CHECK(a100.error.find("(the selector: No valid attention backend found for cuda") != std::string::npos);
  // --block-size 16 on an H200: every sparse backend takes multiples of 64 only.
  SelectionRequest bs16 = hy_v4(9, true);
  bs16.query.block_size = 16;
  CHECK(resolve(bs16).error.rfind(kHyV4NoSparseBackend, 0) == 0);
  // A dense layer's refusal stays the selector's own (a float32 model serves on no MLA backend).
  SelectionRequest fp32 = hy_v4(9, false);
  fp32.query.dtype_is_bf16 = false;
  fp32.query.dtype_is_fp32 = true;
  BackendSelection dense = resolve(fp32);
  REQUIRE_FALSE(dense.error.empty());
  CHECK(dense.error.rfind("No valid attention backend found", 0) == 0);
}

TEST_CASE("HY-V4 on ROCm: ROCM_AITER_MLA_SPARSE applies the sink itself", "[selection][hy_v4]") {
  SelectionRequest r = hy_v4(9, true);
  r.query.vendor = GpuVendor::kAmd;
  r.query.minor = 4;
  BackendSelection sel = resolve(r);
  CHECK(sel.backend == K::kRocmAiterMlaSparse);
  CHECK(sel.learnable_sink_applied);
  CHECK(sel.sparse_mla_force_mqa);
  CHECK(sel.notes.size() == 1);  // no rebinding, only the forced MQA
}
