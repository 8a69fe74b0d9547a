// vLLM 0.33.0's MLA backend selection (config/backend_selection.h): priorities, validation reasons in
// vLLM's words, block size, kernel block size, builder thresholds and the runner. Every expected
// value here is one vLLM 0.33.0 itself gives (tools/conformance/vllm_selection.py runs its code
// over the whole grid; tests/data/vllm033_selection.json is that run's table, checked below).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "config/backend_selection.h"
#include "scenario/hf_config.h"
#include "scenario/scenario_loader.h"

using namespace mlasim;
using K = AttentionBackendKind;

namespace {

// DeepSeek-V3's attention (128 heads, 576 = 512 + 64) on a GPU with TP tp.
BackendQuery v3(int major, int tp, KvCacheDtype kv = KvCacheDtype::kAuto) {
  BackendQuery q;
  q.major = major;
  q.num_heads_per_rank = 128 / tp;
  q.kv_cache_dtype = kv;
  return q;
}

std::vector<std::string> names(const std::vector<BackendCandidate>& c) {
  std::vector<std::string> out;
  for (const auto& x : c) out.emplace_back(vllm_backend_name(x.kind));
  return out;
}

BackendSelection select(const BackendQuery& q) {
  SelectionRequest r;
  r.query = q;
  return select_backend(r);
}

}  // namespace

TEST_CASE("priorities follow _get_backend_priorities per compute capability", "[selection]") {
  CHECK(names(select(v3(9, 1)).candidates) ==
        std::vector<std::string>{"FLASH_ATTN_MLA", "FLASHMLA", "FLASHINFER_MLA", "TRITON_MLA", "FLASH_ATTN_MLA_SPARSE",
                                 "FLASHMLA_SPARSE", "FLASHINFER_MLA_SPARSE_SM90"});
  CHECK(names(select(v3(10, 1)).candidates) ==
        std::vector<std::string>{"FLASHINFER_MLA", "TOKENSPEED_MLA", "CUTLASS_MLA", "FLASH_ATTN_MLA", "FLASHMLA",
                                 "TRITON_MLA", "FLASHMLA_SPARSE", "FLASHINFER_MLA_SPARSE"});
  // SM100 with at most 16 heads per rank and a bf16 cache: FA4 leads the sparse tail.
  CHECK(names(select(v3(10, 8)).candidates).at(6) == "FLASH_ATTN_MLA_SPARSE_FA4");
  // A quantized cache: FlashInfer's sparse backend first.
  CHECK(names(select(v3(10, 8, KvCacheDtype::kFp8)).candidates).at(6) == "FLASHINFER_MLA_SPARSE");
  CHECK(names(select(v3(12, 1)).candidates) == std::vector<std::string>{"TRITON_MLA", "FLASHINFER_MLA_SPARSE_SM120"});
}

TEST_CASE("dense DeepSeek-V3: backend, block size and threshold per GPU and KV dtype", "[selection]") {
  struct Cell {
    int major;
    KvCacheDtype kv;
    const char* backend;
    int block, threshold;
  };
  const Cell cells[] = {
      {8, KvCacheDtype::kAuto, "TRITON_MLA", 16, 1},  {8, KvCacheDtype::kFp8, "TRITON_MLA", 16, 1},
      {9, KvCacheDtype::kAuto, "FLASH_ATTN_MLA", 16, 512}, {9, KvCacheDtype::kFp8, "FLASHMLA", 64, 128},
      {10, KvCacheDtype::kAuto, "FLASHINFER_MLA", 32, 1}, {10, KvCacheDtype::kFp8, "FLASHINFER_MLA", 32, 1},
      {12, KvCacheDtype::kAuto, "TRITON_MLA", 16, 1},
  };
  for (const Cell& c : cells) {
    INFO("capability " << c.major << " kv " << to_string(c.kv));
    const BackendSelection s = select(v3(c.major, 8, c.kv));
    REQUIRE(s.error.empty());
    CHECK(std::string(vllm_backend_name(s.backend)) == c.backend);
    CHECK(s.block_size == c.block);
    CHECK(s.kernel_block_size == c.block);
    CHECK(s.card.reorder_batch_threshold == c.threshold);
    CHECK(s.model_runner == ModelRunner::kV2);
  }
}

TEST_CASE("validation reasons are vLLM's, in validate_configuration's order", "[selection]") {
  const BackendSelection s = select(v3(8, 1));  // A100
  REQUIRE(s.candidates.size() == 7);
  CHECK(s.candidates[0].reasons ==
        std::vector<std::string>{"compute capability not supported", "FlashAttention MLA not supported on this device"});
  CHECK(s.candidates[1].reasons ==
        std::vector<std::string>{"compute capability not supported", "FlashMLA Dense is only supported on Hopper devices."});
  CHECK(s.candidates[2].reasons == std::vector<std::string>{"compute capability not supported"});
  CHECK(s.candidates[3].reasons.empty());
  CHECK(s.candidates[4].reasons ==
        std::vector<std::string>{"non-sparse not supported", "compute capability not supported",
                                 "FlashAttention MLA not supported on this device"});  // supports_combination: its first failure
  // TOKENSPEED_MLA reads the model's dims; FlashInfer MLA its qk_nope_head_dim.
  BackendQuery glm = v3(10, 8);
  glm.qk_nope_head_dim = 192;
  glm.v_head_dim = 256;
  const BackendSelection b = select(glm);
  CHECK(b.candidates[1].reasons ==
        std::vector<std::string>{"kv_cache_dtype not supported",
                                 "tokenspeed_mla requires DeepSeek R1 MLA dimensions (qk_nope_head_dim=128, "
                                 "qk_rope_head_dim=64, v_head_dim=128), got (192, 64, 256)"});
}

TEST_CASE("a --block-size validates and can preclude a backend, with vLLM's warning", "[selection]") {
  BackendQuery q = v3(9, 8, KvCacheDtype::kFp8);  // FLASHMLA's [64]
  q.block_size = 16;
  const BackendSelection s = select(q);
  CHECK(std::string(vllm_backend_name(s.backend)) == "TRITON_MLA");
  CHECK(s.candidates[1].reasons == std::vector<std::string>{"block_size not supported"});
  REQUIRE(s.warnings.size() == 1);
  CHECK(s.warnings[0] ==
        "--block-size 16 precluded higher-priority backend(s) FLASHMLA. Using TRITON_MLA instead, which may result in "
        "reduced performance. Consider removing --block-size to auto-select the optimal block size.");
  // A manager block of 128 on FlashMLA: the kernel runs 64-token blocks (select_common_block_size).
  q.block_size = 128;
  const BackendSelection f = select(q);
  CHECK(std::string(vllm_backend_name(f.backend)) == "FLASHMLA");
  CHECK(f.block_size == 128);
  CHECK(f.kernel_block_size == 64);
}

TEST_CASE("sparse models: the sparse backends, their heads-per-rank thresholds, block 64", "[selection]") {
  BackendQuery q = v3(9, 8);
  q.use_sparse = true;
  q.index_topk = 2048;
  const BackendSelection h = select(q);  // H200, 16 heads per rank
  CHECK(std::string(vllm_backend_name(h.backend)) == "FLASH_ATTN_MLA_SPARSE");
  CHECK(h.card.reorder_batch_threshold == 128);
  CHECK(h.block_size == 64);
  q.num_heads_per_rank = 128;
  CHECK(select(q).card.reorder_batch_threshold == 256);
  q.major = 10;  // B200, bf16, 128 heads: FLASHMLA_SPARSE leads the tail, T 1024
  const BackendSelection b = select(q);
  CHECK(std::string(vllm_backend_name(b.backend)) == "FLASHMLA_SPARSE");
  CHECK(b.card.reorder_batch_threshold == 1024);
  CHECK(b.card.require_uniform);
  q.num_speculative_tokens = 3;  // spec-as-decode: max(T, 1 + k)
  q.num_heads_per_rank = 8;
  q.major = 9;
  CHECK(select(q).card.reorder_batch_threshold == 256);
}

TEST_CASE("an explicit backend vLLM refuses is refused with vLLM's message", "[selection]") {
  SelectionRequest r;
  r.query = v3(9, 1);
  r.backend = K::kCutlassMla;
  const BackendSelection s = select_backend(r);
  CHECK(s.error ==
        "Selected backend AttentionBackendEnum.CUTLASS_MLA is not valid for this configuration. Reason: ['compute "
        "capability not supported']");
  r.query.major = 10;
  CHECK(select_backend(r).error.empty());
}

TEST_CASE("config.json: the shipped configs read as vLLM reads them", "[selection][hf_config]") {
  const std::string dir = std::string(MLASIM_SOURCE_DIR) + "/scenarios/hf_configs/";
  ModelConfig m;
  REQUIRE(read_hf_config(dir + "deepseek-v3.json", m).ok());
  CHECK(m.architecture == "DeepseekV3ForCausalLM");
  CHECK(m.num_attention_heads == 128);
  CHECK(m.q_lora_rank == 1536);
  CHECK(m.num_hidden_layers == 61);
  CHECK(m.vocab_size == 129280);
  CHECK(m.rope_scaling_factor == 40.0);
  CHECK(m.quant_method == "fp8");
  CHECK_FALSE(m.index_topk.has_value());
  ModelConfig lite;
  REQUIRE(read_hf_config(dir + "deepseek-v2-lite.json", lite).ok());
  CHECK(lite.q_lora_rank == 0);  // null: q_proj
  CHECK(lite.num_attention_heads == 16);
  ModelConfig glm;
  REQUIRE(read_hf_config(dir + "glm-5.json", glm).ok());
  CHECK(glm.architecture == "GlmMoeDsaForCausalLM");
  CHECK(glm.index_topk == 2048);
  CHECK(glm.qk_nope_head_dim == 192);
  CHECK(glm.v_head_dim == 256);
  CHECK(glm.eos_token_id == 154820);      // the first of its list
  CHECK(glm.rope_scaling_factor == 1.0);  // rope_parameters: plain RoPE, theta 1e6
  CHECK(glm.rope_theta == 1e6);
  CHECK(glm.torch_dtype == "bfloat16");   // from `dtype`
  ModelConfig v32;
  const Status refused = read_hf_config(std::string(MLASIM_SOURCE_DIR) + "/tests/data/hf_configs/deepseek-v3.2-no-index-topk.json", v32);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("`assert is_v32`") != std::string::npos);
  CHECK(refused.error().line == 3);
}

TEST_CASE("scenario keys: engine.gpu, cache.kv_cache_dtype, auto backend/runner/block size", "[selection][loader]") {
  const char* text =
      "version: 1\nengine: {profile: vllm-0.33, gpu: b200}\ncache: {kv_cache_dtype: fp8}\n"
      "requests:\n  - {id: a, prompt: [5, 6, 7]}\n";
  Result<Scenario> r = load_scenario_text(text, "t.yaml");
  REQUIRE(r.ok());
  const Scenario& s = r.value();
  CHECK(s.engine.attention_backend == K::kFlashInferMla);
  CHECK(s.scheduler.block_size == 32);
  CHECK(s.engine.model_runner == ModelRunner::kV2);
  CHECK(s.deployment.effective_kv_cache_dtype == KvCacheDtype::kFp8);
  // Older profiles keep their defaults.
  Result<Scenario> old = load_scenario_text(
      "version: 1\nengine: {profile: vllm-0.11}\nrequests:\n  - {id: a, prompt: [5, 6, 7]}\n", "t.yaml");
  REQUIRE(old.ok());
  CHECK(old.value().engine.attention_backend == K::kFlashAttnMla);
  CHECK(old.value().scheduler.block_size == 16);
  CHECK(old.value().engine.model_runner == ModelRunner::kV1);
  // An explicit backend on a named GPU is validated; vLLM's refusal is exit 2 at the key.
  Result<Scenario> bad = load_scenario_text(
      "version: 1\nengine: {profile: vllm-0.33, gpu: h200, attention_backend: cutlass-mla}\n"
      "requests:\n  - {id: a, prompt: [5, 6, 7]}\n",
      "t.yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().line == 2);
  CHECK(bad.error().key_path == "engine.attention_backend");
  CHECK(bad.error().message.find("Reason: ['compute capability not supported']") != std::string::npos);
}

TEST_CASE("model.hf_config errors name the scenario's key or the config's line", "[selection][hf_config]") {
  const std::string dir = std::string(MLASIM_SOURCE_DIR) + "/tests/data/";
  Result<Scenario> missing = load_scenario_text(
      "version: 1\nmodel: {hf_config: no_such_config.json}\nrequests:\n  - {id: a, prompt: [5]}\n", dir + "t.yaml");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().file == dir + "t.yaml");
  CHECK(missing.error().line == 2);
  CHECK(missing.error().key_path == "model.hf_config");
  CHECK(missing.error().message == "cannot read model config: " + dir + "no_such_config.json");
  Result<Scenario> v32 = load_scenario_text(
      "version: 1\nmodel: {hf_config: hf_configs/deepseek-v3.2-no-index-topk.json}\nrequests:\n  - {id: a, prompt: [5]}\n",
      dir + "t.yaml");
  REQUIRE_FALSE(v32.ok());
  CHECK(v32.error().file == dir + "hf_configs/deepseek-v3.2-no-index-topk.json");
  CHECK(v32.error().line == 3);
  CHECK(v32.error().key_path == "model.hf_config: index_topk");
  Result<Scenario> both = load_scenario_text(
      "version: 1\nmodel: {preset: tiny, hf_config: hf_configs/glm-5-no-index-topk.json}\nrequests:\n  - {id: a, prompt: [5]}\n",
      dir + "t.yaml");
  REQUIRE_FALSE(both.ok());
  CHECK(both.error().message == "both `preset` and `hf_config`");
  // model.num_layers caps the layers run and remembers the config's count.
  Result<Scenario> capped = load_scenario_text(
      "version: 1\nmodel: {hf_config: ../../scenarios/hf_configs/deepseek-v2-lite.json, num_layers: 1, vocab_size: 4096}\n"
      "requests:\n  - {id: a, prompt: [5]}\n",
      dir + "t.yaml");
  REQUIRE(capped.ok());
  CHECK(capped.value().model.num_hidden_layers == 1);
  CHECK(capped.value().model.config_num_hidden_layers == 27);
  CHECK(capped.value().model.vocab_size == 4096);
  CHECK(capped.value().engine.attention_backend == K::kFlashAttnMla);  // H200 default, 16 heads
}

TEST_CASE("a modelopt quantization_config resolves kv_cache_dtype auto, as vLLM does", "[selection][hf_config]") {
  // DeepSeek-V3's config with an NVFP4 checkpoint's quantization_config (kv_cache_quant_algo FP8):
  // `auto` becomes fp8_e4m3 (utils/torch_utils.py ~443-516), which FLASH_ATTN_MLA cannot hold, so
  // an H200 serves it with FLASHMLA (T 128, block 64).
  const std::string dir = std::string(MLASIM_SOURCE_DIR) + "/tests/data/";
  ModelConfig m;
  REQUIRE(read_hf_config(dir + "hf_configs/deepseek-r1-modelopt-fp8-kv.json", m).ok());
  CHECK(m.quant_method == "modelopt");
  CHECK(m.quant_kv_cache_dtype == "fp8_e4m3");
  Result<Scenario> s = load_scenario_text(
      "version: 1\nmodel: {hf_config: hf_configs/deepseek-r1-modelopt-fp8-kv.json, num_layers: 1, vocab_size: 4096}\n"
      "engine: {gpu: h200}\nparallel: {tensor_parallel_size: 8}\nrequests:\n  - {id: a, prompt: [5]}\n",
      dir + "t.yaml");
  REQUIRE(s.ok());
  CHECK(s.value().deployment.effective_kv_cache_dtype == KvCacheDtype::kFp8E4m3);
  CHECK(s.value().engine.attention_backend == K::kFlashMla);
  CHECK(s.value().scheduler.block_size == 64);
  // An explicit --kv-cache-dtype wins over the checkpoint's.
  Result<Scenario> given = load_scenario_text(
      "version: 1\nmodel: {hf_config: hf_configs/deepseek-r1-modelopt-fp8-kv.json, num_layers: 1, vocab_size: 4096}\n"
      "engine: {gpu: h200}\ncache: {kv_cache_dtype: bfloat16}\nparallel: {tensor_parallel_size: 8}\n"
      "requests:\n  - {id: a, prompt: [5]}\n",
      dir + "t.yaml");
  REQUIRE(given.ok());
  CHECK(given.value().engine.attention_backend == K::kFlashAttnMla);
  // DeepSeek's own fp8 block quantization names no KV dtype.
  ModelConfig v3;
  REQUIRE(read_hf_config(std::string(MLASIM_SOURCE_DIR) + "/scenarios/hf_configs/deepseek-v3.json", v3).ok());
  CHECK(v3.quant_kv_cache_dtype.empty());
}

TEST_CASE("config.json of a model that is not MLA, or not known, is refused naming it", "[selection][hf_config]") {
  const std::string dir = std::string(MLASIM_SOURCE_DIR) + "/tests/data/hf_configs/";
  ModelConfig m;
  const Status llama = read_hf_config(dir + "llama-3-8b.json", m);
  REQUIRE_FALSE(llama.ok());
  CHECK(llama.error().message == "architecture LlamaForCausalLM does not use MLA (vLLM serves it with standard attention)");
  CHECK(llama.error().line == 2);
  CHECK(llama.error().key_path == "architectures[0]");
}
