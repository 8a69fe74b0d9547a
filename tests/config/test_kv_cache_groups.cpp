// config/kv_cache_plan: the KV cache groups vLLM 0.33 builds for each hybrid MLA family on an H200
// (exact layer counts, block sizes, page bytes), a plain MLA model's one group, and the spec and
// grouping arithmetic underneath (config/kv_cache_specs.h, config/kv_cache_groups.h).
#include <catch2/catch.hpp>

#include "config/kv_cache_plan.h"
#include "scenario/hf_config.h"

using namespace mlasim;

namespace {

using SK = KvCacheSpecKind;

ModelConfig shipped(const std::string& name) {
  ModelConfig m;
  REQUIRE(read_hf_config(std::string(MLASIM_SOURCE_DIR) + "/scenarios/hf_configs/" + name, m).ok());
  return m;
}

KvCachePlanInputs h200(AttentionBackendKind mla, const ModelConfig& m) {
  KvCachePlanInputs in;
  in.gpu = GpuKind::kH200;
  in.mla_backend = mla;
  in.mla_query.major = 9;
  in.mla_query.head_size = m.kv_lora_rank + m.qk_rope_head_dim;
  in.mla_query.use_sparse = m.index_topk.has_value();
  in.max_model_len = 1 << 20;
  return in;
}

struct Expected {
  SK kind;
  std::size_t layers;
  int block_size;
  long long group_page;
};

void check_groups(const KvCachePlan& p, const std::vector<Expected>& want) {
  REQUIRE(p.groups.size() == want.size());
  REQUIRE(p.layout.groups.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("group " << i);
    const KvCacheGroup& g = p.layout.groups[i];
    CHECK(g.kind == want[i].kind);
    CHECK(g.layer_names.size() == want[i].layers);
    CHECK(g.block_size == want[i].block_size);
    CHECK(g.group_page_size_bytes == want[i].group_page);
    CHECK(g.layer_page_size_bytes.size() == want[i].layers);
  }
}

}  // namespace

TEST_CASE("DeepSeek-V4 on an H200: five KV cache groups, packed block-outermost", "[kv_groups]") {
  const ModelConfig m = shipped("deepseek-v4.json");
  auto plan = plan_kv_cache(m, h200(AttentionBackendKind::kFlashMlaSparseDsv4, m));
  REQUIRE(plan.ok());
  const KvCachePlan& p = plan.value();
  CHECK(p.block_size == 256);  // FLASHMLA_SPARSE_DSV4 and the indexer take 256-token kernel blocks
  CHECK(p.cache_dtype == "fp8_ds_mla");
  CHECK(p.tensor_layout == KvTensorLayout::kBLHNC);
  check_groups(p, {{SK::kSlidingWindowMla, 22, 64, 823680},   // SWA caches, layers 0, 2, ..., 42
                   {SK::kSlidingWindowMla, 21, 64, 786240},   // 1, 3, ..., 41
                   {SK::kMlaAttention, 63, 256, 961344},      // compressed caches (43) and indexer K (20)
                   {SK::kSlidingWindowMla, 23, 8, 755136},    // C128 compressor states
                   {SK::kSlidingWindowMla, 40, 4, 829440}});  // C4 and indexer compressor states
  const KvCacheGroup& mla = p.layout.groups[2];
  CHECK(mla.uniform_type);
  CHECK(mla.layer_names[0] == "model.layers.0.attn");
  CHECK(mla.layer_tokens_per_state[0] == 128);
  CHECK(mla.layer_page_size_bytes[0] == 1728);  // 2 states x 584 B, rounded up to 576
  CHECK(p.layout.groups[0].sliding_window == 128);
  CHECK(p.layout.groups[4].sliding_window == 8);
  CHECK(p.layout.num_blocks == 8192);
  CHECK(p.layout.scheduler_block_size == 256);
  CHECK(p.layout.hash_block_size == 4);
  CHECK(p.layout.hybrid());
}

TEST_CASE("Kimi-Linear on an H200: three KDA groups and one MLA group of 1920-token blocks", "[kv_groups]") {
  const ModelConfig m = shipped("kimi-linear.json");
  auto plan = plan_kv_cache(m, h200(AttentionBackendKind::kFlashAttnMla, m));
  REQUIRE(plan.ok());
  const KvCachePlan& p = plan.value();
  // 128 x cdiv(KDA state 2,170,880 B, 128 x 1152 B per MLA token) = 1920 (interface.py ~1090).
  CHECK(p.block_size == 1920);
  CHECK(p.mamba_block_size == 1920);
  CHECK(p.mamba_page_size_padded == 2211840);
  CHECK(p.tensor_layout == KvTensorLayout::kLBNHC);
  check_groups(p, {{SK::kMamba, 7, 1920, 2211840},
                   {SK::kMamba, 7, 1920, 2211840},
                   {SK::kMamba, 6, 1920, 2211840},
                   {SK::kMlaAttention, 7, 1920, 2211840}});
  CHECK(p.layout.groups[0].layer_names[1] == "model.layers.4.self_attn");  // layers[i::3] of the KDA layers
  CHECK(p.layout.groups[0].mamba_cache_mode == "align");
  CHECK(p.layout.scheduler_block_size == 1920);
  CHECK(p.layout.hash_block_size == 1920);
}

TEST_CASE("GLM-5-Next on an H200: KDA, MLA with its kpool indexer, and the tail rings", "[kv_groups]") {
  const ModelConfig m = shipped("glm-5-next.json");
  auto plan = plan_kv_cache(m, h200(AttentionBackendKind::kFlashInferMlaSparseSm90, m));
  REQUIRE(plan.ok());
  const KvCachePlan& p = plan.value();
  CHECK(p.block_size == 4608);
  CHECK(p.tensor_layout == KvTensorLayout::kBLHNC);
  check_groups(p, {{SK::kMamba, 9, 4608, 42467328},
                   {SK::kMamba, 9, 4608, 42467328},
                   {SK::kMamba, 8, 4608, 37748736},
                   {SK::kMamba, 8, 4608, 37748736},
                   {SK::kMlaAttention, 22, 4608, 52322688},
                   {SK::kCircularBuffer, 11, 16, 90112}});
  CHECK(p.layout.groups[4].layer_tokens_per_state[0] == 16);  // one indexer state per index_kpool tokens
  CHECK_FALSE(p.layout.groups[5].prefix_cacheable);           // rings take no part in the hash block size
  CHECK(p.layout.hash_block_size == 4608);
}

TEST_CASE("A plain MLA model has one MLA group, the sparse one with its indexer caches", "[kv_groups]") {
  ModelConfig m = *model_preset("v3-attn");
  KvCachePlanInputs in = h200(AttentionBackendKind::kFlashAttnMla, m);
  in.selected_block_size = 16;
  auto plan = plan_kv_cache(m, in);
  REQUIRE(plan.ok());
  REQUIRE(plan.value().groups.size() == 1);
  const KvCacheGroup& g = plan.value().layout.groups[0];
  CHECK(g.kind == SK::kMlaAttention);
  CHECK(static_cast<int>(g.layer_names.size()) == m.num_hidden_layers);
  CHECK(g.block_size == 16);
  CHECK(g.page_size_bytes == 16 * 576 * 2);
  CHECK_FALSE(g.uniform_type);
  CHECK_FALSE(plan.value().layout.hybrid());

  const ModelConfig v32 = shipped("deepseek-v3.2.json");
  in = h200(AttentionBackendKind::kFlashMlaSparse, v32);
  in.selected_block_size = 64;
  plan = plan_kv_cache(v32, in);
  REQUIRE(plan.ok());
  REQUIRE(plan.value().groups.size() == 1);
  CHECK(plan.value().groups[0].uniform_type);
  CHECK(plan.value().groups[0].layer_names.size() == 2u * 61);
}

TEST_CASE("DeepSeek-V4 with blocks smaller than a compressed state is refused as vLLM fails", "[kv_groups]") {
  const ModelConfig m = shipped("deepseek-v4.json");
  KvCachePlanInputs in = h200(AttentionBackendKind::kFlashMlaSparseDsv4, m);
  in.block_size = 64;
  auto plan = plan_kv_cache(m, in);
  REQUIRE_FALSE(plan.ok());
  CHECK_THAT(plan.error().message, Catch::Contains("integer division or modulo by zero"));
  in.block_size.reset();
  in.kv_cache_dtype = KvCacheDtype::kBfloat16;
  plan = plan_kv_cache(m, in);
  REQUIRE_FALSE(plan.ok());
  CHECK_THAT(plan.error().message, Catch::Contains("DeepseekV4 fp8_ds_mla layout only supports fp8 kv-cache, got bfloat16"));
}

TEST_CASE("KV cache specs: pages, alignment padding, merging and uniform types", "[kv_groups]") {
  KvCacheSpec mla;
  mla.block_size = 256;
  mla.head_size = 512;
  mla.dtype = torch_dtype("uint8");
  mla.state_content_bytes = 584;
  mla.tokens_per_state = 4;
  mla.alignment = 576;
  apply_alignment_padding(mla);
  CHECK(mla.real_page_size_bytes() == 64 * 584);
  CHECK(mla.page_size_bytes() == 37440);  // rounded up to 576
  // dataclasses.replace runs __post_init__ again: the new page is padded anew (kv_cache_interface.py ~649).
  CHECK(mla.with_block_size(512).page_size_bytes() == 74880);
  KvCacheSpec other = mla;
  other.tokens_per_state = 128;
  CHECK_FALSE(specs_merge({&mla, &other}));
  CHECK(is_uniform_type({&mla, &other}));  // both full attention (MLAAttentionSpec) at one block size
  // SlidingWindowMLASpec.merge compares windows, not head sizes.
  KvCacheSpec a;
  a.kind = SK::kSlidingWindowMla;
  a.block_size = 4, a.head_size = 512, a.sliding_window = 8;
  KvCacheSpec b = a;
  b.head_size = 2048;
  CHECK(specs_merge({&a, &b}));
  b.sliding_window = 128;
  CHECK_FALSE(specs_merge({&a, &b}));
  CHECK_FALSE(is_uniform_type({&a, &b}));
}

TEST_CASE("approximate_gcd: least upward padding, ties to the larger chunk", "[kv_groups]") {
  CHECK(approximate_gcd({20, 20}, 20) == 20);
  CHECK(approximate_gcd({10, 20}, 1) == 10);  // no padding at 1, 2, 5 or 10: the largest
  CHECK(approximate_gcd({7, 14}, 1) == 7);
  CHECK(approximate_gcd({6, 9}, 4) == 9);     // 6 and 9 both pad 3; the larger wins
  CHECK(approximate_gcd({3}, 5) == 5);  // lower bound above every value
}
