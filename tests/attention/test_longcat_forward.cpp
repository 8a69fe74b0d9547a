// LongCat-Flash on the CPU reference: its tensors under transformers' names, its MLA LoRA scaling
// equal to vLLM's folding of it into the norms' weights, and its decoder layer (two MLA modules,
// each with its MLP, then the shortcut MoE's identity output) against the modules run one by one.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "attention/cpu/cpu_backend.h"
#include "mla_test_util.h"

using namespace mlasim;
using namespace mlasim::test;

namespace {

ModelConfig longcat_config() {
  ModelConfig c = tiny_config(4);
  c.q_lora_rank = 64;  // LongCat always compresses q
  c.num_hidden_layers = 1;
  c.num_attn_modules = 2;
  c.mla_lora_scaling = true;
  return c;
}

CpuBackendOptions options() {
  CpuBackendOptions o;
  o.num_blocks = 64;
  o.block_size = 4;
  return o;
}

// Prefill, decodes and an extend; every step's logits.
std::vector<std::vector<double>> run(Backend& backend) {
  StepDriver d(mla_routing(), 64);
  const int a = d.add_request(seeded_sequence(1, 12, 512), 6);
  const int b = d.add_request(seeded_sequence(2, 9, 512), 5);
  std::vector<std::vector<double>> out;
  for (const auto& batch : std::vector<std::vector<std::pair<int, int>>>{{{a, 6}, {b, 5}}, {{a, 1}, {b, 2}}, {{a, 3}, {b, 1}}})
    for (auto& row : d.run(backend, batch)) out.push_back(std::move(row));
  return out;
}

double worst(const std::vector<std::vector<double>>& x, const std::vector<std::vector<double>>& y) {
  double w = x.size() == y.size() ? 0.0 : 1e300;
  for (size_t i = 0; i < x.size() && i < y.size(); ++i) w = std::max(w, rel_diff(x[i], y[i]));
  return w;
}

}  // namespace

TEST_CASE("longcat: tensors under transformers' LongcatFlashForCausalLM names", "[mla][longcat]") {
  // LongcatFlashForCausalLM(config).state_dict().keys() of transformers 5.20 for one layer.
  const std::set<std::string> transformers = {
      "model.embed_tokens.weight", "model.layers.0.mlp.router.e_score_correction_bias",
      "model.layers.0.mlp.router.classifier.weight", "model.layers.0.self_attn.0.q_a_proj.weight",
      "model.layers.0.self_attn.0.q_a_layernorm.weight", "model.layers.0.self_attn.0.q_b_proj.weight",
      "model.layers.0.self_attn.0.kv_a_proj_with_mqa.weight", "model.layers.0.self_attn.0.kv_a_layernorm.weight",
      "model.layers.0.self_attn.0.kv_b_proj.weight", "model.layers.0.self_attn.0.o_proj.weight",
      "model.layers.0.self_attn.1.q_a_proj.weight", "model.layers.0.self_attn.1.q_a_layernorm.weight",
      "model.layers.0.self_attn.1.q_b_proj.weight", "model.layers.0.self_attn.1.kv_a_proj_with_mqa.weight",
      "model.layers.0.self_attn.1.kv_a_layernorm.weight", "model.layers.0.self_attn.1.kv_b_proj.weight",
      "model.layers.0.self_attn.1.o_proj.weight", "model.layers.0.mlps.0.gate_proj.weight",
      "model.layers.0.mlps.0.up_proj.weight", "model.layers.0.mlps.0.down_proj.weight",
      "model.layers.0.mlps.1.gate_proj.weight", "model.layers.0.mlps.1.up_proj.weight",
      "model.layers.0.mlps.1.down_proj.weight", "model.layers.0.input_layernorm.0.weight",
      "model.layers.0.input_layernorm.1.weight", "model.layers.0.post_attention_layernorm.0.weight",
      "model.layers.0.post_attention_layernorm.1.weight", "model.norm.weight", "lm_head.weight"};
  std::set<std::string> ours;
  for (const WeightSpec& s : weight_specs(longcat_config())) ours.insert(s.name);
  CHECK(ours == transformers);
  const MlaWeights w = seeded_weights(longcat_config());
  CHECK(w.layers.size() == 2);
  CHECK(w.layers[0].router_classifier.shape == std::vector<int>{kLongcatZeroExperts, 256});
  CHECK(std::all_of(w.layers[0].router_classifier.values.begin(), w.layers[0].router_classifier.values.end(),
                    [](float v) { return v == 0.0f; }));
  CHECK(w.layers[1].router_classifier.values.empty());
}

TEST_CASE("longcat: the MLA LoRA scaling == vLLM's folding of it into the norms' weights", "[mla][longcat]") {
  const ModelConfig c = longcat_config();
  const MlaWeights scaled = seeded_weights(c);
  // vLLM's scale_mla_lora_norms_on_load (models/longcat_flash.py ~91-101): the norms' weights times
  // sqrt(hidden_size / rank), and no scaling in the forward.
  MlaWeights folded = seeded_weights(c);
  folded.config.mla_lora_scaling = false;
  for (MlaLayerWeights& l : folded.layers) {
    for (float& v : l.q_a_layernorm.values) v = static_cast<float>(v * std::sqrt(256.0 / 64));
    for (float& v : l.kv_a_layernorm.values) v = static_cast<float>(v * std::sqrt(256.0 / 512));
  }
  CpuBackend<double> a(scaled, options()), b(folded, options());
  CHECK(worst(run(a), run(b)) < 1e-6);  // the folded weights are rounded to float
  // Without either, the logits differ.
  MlaWeights off = seeded_weights(c);
  off.config.mla_lora_scaling = false;
  CpuBackend<double> none(off, options()), again(scaled, options());
  CHECK(worst(run(none), run(again)) > 1e-3);
}

TEST_CASE("longcat: a decoder layer is its two MLA modules, then the shortcut MoE's input added", "[mla][longcat]") {
  // The same weights as two one-module layers (DeepSeek's structure, no shortcut) differ from
  // LongCat's layer by the shortcut only: with module 0's MLP input zero there is none. Zero input
  // comes from a zero post_attention_layernorm weight of module 0, which also zeroes its MLP.
  ModelConfig c = longcat_config();
  MlaWeights longcat = seeded_weights(c);
  std::fill(longcat.layers[0].post_attention_layernorm.values.begin(),
            longcat.layers[0].post_attention_layernorm.values.end(), 0.0f);
  MlaWeights two_layers = longcat;
  two_layers.config.num_attn_modules = 1;
  two_layers.config.num_hidden_layers = 2;
  CpuBackend<double> a(longcat, options()), b(two_layers, options());
  CHECK(worst(run(a), run(b)) < 1e-12);
  // With it, the shortcut adds module 0's MLP input: the logits move.
  MlaWeights with_shortcut = seeded_weights(c);
  MlaWeights no_shortcut = with_shortcut;
  no_shortcut.config.num_attn_modules = 1;
  no_shortcut.config.num_hidden_layers = 2;
  CpuBackend<double> x(with_shortcut, options()), y(no_shortcut, options());
  CHECK(worst(run(x), run(y)) > 1e-3);
}
