// Seeded bf16-exact weights and the Hugging Face DeepSeek-V3 tensor listing.
#include "model/mla_weights.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>
#include <type_traits>

#include "model/bf16_normals.h"
#include "model/cpu_thread_pool.h"
#include "config/seeded_tokens.h"

namespace mlasim {
namespace {

// The tensors of one MLA module with its dense MLP, under prefix `p` ("model.layers.3.") and the
// module's names (`attn` "self_attn.", `norm` "" or ".0" after the norm's name, `mlp` "mlp.").
struct ModuleNames {
  std::string p, attn, norm, mlp;
};

template <typename L, typename Emit>
void module_tensors(const ModelConfig& c, L* l, const ModuleNames& n, const Emit& emit) {
  const int d = c.hidden_size, h = c.num_attention_heads, dqk = c.qk_nope_head_dim + c.qk_rope_head_dim;
  auto f = [l](auto member) { return l ? &(l->*member) : nullptr; };
  using M = MlaLayerWeights;
  const std::string a = n.p + n.attn;
  emit(n.p + "input_layernorm" + n.norm + ".weight", {d}, WeightKind::kNorm, f(&M::input_layernorm));
  if (c.q_lora_rank == 0) {
    emit(a + "q_proj.weight", {h * dqk, d}, WeightKind::kLinear, f(&M::q_proj));
  } else {
    emit(a + "q_a_proj.weight", {c.q_lora_rank, d}, WeightKind::kLinear, f(&M::q_a_proj));
    emit(a + "q_a_layernorm.weight", {c.q_lora_rank}, WeightKind::kNorm, f(&M::q_a_layernorm));
    emit(a + "q_b_proj.weight", {h * dqk, c.q_lora_rank}, WeightKind::kLinear, f(&M::q_b_proj));
  }
  emit(a + "kv_a_proj_with_mqa.weight", {c.kv_lora_rank + c.qk_rope_head_dim, d}, WeightKind::kLinear,
       f(&M::kv_a_proj_with_mqa));
  emit(a + "kv_a_layernorm.weight", {c.kv_lora_rank}, WeightKind::kNorm, f(&M::kv_a_layernorm));
  emit(a + "kv_b_proj.weight", {h * (c.qk_nope_head_dim + c.v_head_dim), c.kv_lora_rank}, WeightKind::kLinear,
       f(&M::kv_b_proj));
  emit(a + "o_proj.weight", {d, h * c.v_head_dim}, WeightKind::kLinear, f(&M::o_proj));
  if (has_dsa_indexer(c)) {  // transformers' DeepseekV32Indexer / GlmMoeDsaIndexer names
    const int nh = c.index_n_heads, D = c.index_head_dim;
    emit(a + "indexer.wq_b.weight", {nh * D, c.q_lora_rank}, WeightKind::kLinear, f(&M::indexer_wq_b));
    emit(a + "indexer.wk.weight", {D, d}, WeightKind::kLinear, f(&M::indexer_wk));
    emit(a + "indexer.k_norm.weight", {D}, WeightKind::kNorm, f(&M::indexer_k_norm));
    emit(a + "indexer.k_norm.bias", {D}, WeightKind::kBias, f(&M::indexer_k_norm_bias));
    emit(a + "indexer.weights_proj.weight", {nh, d}, WeightKind::kLinear, f(&M::indexer_weights_proj));
  }
  emit(n.p + "post_attention_layernorm" + n.norm + ".weight", {d}, WeightKind::kNorm, f(&M::post_attention_layernorm));
  emit(n.p + n.mlp + "gate_proj.weight", {c.intermediate_size, d}, WeightKind::kLinear, f(&M::gate_proj));
  emit(n.p + n.mlp + "up_proj.weight", {c.intermediate_size, d}, WeightKind::kLinear, f(&M::up_proj));
  emit(n.p + n.mlp + "down_proj.weight", {d, c.intermediate_size}, WeightKind::kLinear, f(&M::down_proj));
}

// Enumerates every tensor in listing order; `w` may be null (specs only, the visitor gets null).
template <typename W, typename Visit>
void for_each_tensor(const ModelConfig& c, W* w, const Visit& visit) {
  using L = std::conditional_t<std::is_const_v<W>, const MlaLayerWeights, MlaLayerWeights>;
  const int d = c.hidden_size, modules = c.num_attn_modules;
  auto emit = [&](std::string name, std::vector<int> shape, WeightKind kind, auto* t) {
    visit(WeightSpec{std::move(name), std::move(shape), kind}, t);
  };
  emit("model.embed_tokens.weight", {c.vocab_size, d}, WeightKind::kEmbedding, w ? &w->embed_tokens : nullptr);
  for (int i = 0; i < c.num_hidden_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    auto layer = [&](int j) { return w ? &w->layers[static_cast<size_t>(i * modules + j)] : nullptr; };
    if (modules == 1) {
      module_tensors(c, layer(0), ModuleNames{p, "self_attn.", "", "mlp."}, emit);
      continue;
    }
    for (int j = 0; j < modules; ++j) {
      const std::string k = std::to_string(j);
      module_tensors(c, layer(j), ModuleNames{p, "self_attn." + k + ".", "." + k, "mlps." + k + "."}, emit);
    }
    L* first = layer(0);
    emit(p + "mlp.router.classifier.weight", {kLongcatZeroExperts, d}, WeightKind::kZeros,
         first ? &first->router_classifier : nullptr);
    emit(p + "mlp.router.e_score_correction_bias", {kLongcatZeroExperts}, WeightKind::kZeros,
         first ? &first->router_bias : nullptr);
  }
  emit("model.norm.weight", {d}, WeightKind::kNorm, w ? &w->norm : nullptr);
  emit("lm_head.weight", {c.vocab_size, d}, WeightKind::kLinear, w ? &w->lm_head : nullptr);
}

long long product(const std::vector<int>& shape) {
  long long n = 1;
  for (int s : shape) n *= s;
  return n;
}

WeightTensor draw_new(const WeightSpec& spec, std::uint64_t seed) {
  WeightTensor t;
  t.shape = spec.shape;
  const long long n = product(spec.shape);
  t.values.resize(static_cast<size_t>(n));
  const std::uint64_t stream = splitmix64(seed ^ stable_hash(spec.name));
  double mean = 0.0, std_dev = 1.0;
  if (spec.kind == WeightKind::kLinear) std_dev = 1.0 / std::sqrt(static_cast<double>(spec.shape[1]));
  if (spec.kind == WeightKind::kNorm) mean = 1.0, std_dev = 0.2;
  if (spec.kind == WeightKind::kBias) mean = 0.0, std_dev = 0.2;
  if (spec.kind == WeightKind::kZeros) {
    t.values.assign(static_cast<size_t>(n), 0.0f);
    return t;
  }
  // Each value depends only on (stream, index): pairs are drawn in fixed chunks on the thread pool.
  constexpr long long kChunkPairs = 1 << 16;
  const long long pairs = (n + 1) / 2;
  parallel_for(static_cast<int>((pairs + kChunkPairs - 1) / kChunkPairs), [&](int chunk) {
    draw_bf16_normals(stream, mean, std_dev, chunk * kChunkPairs, std::min(pairs, (chunk + 1) * kChunkPairs), n,
                      t.values.data());
  });
  return t;
}

// Tensors this process has drawn, by (seed, name, kind, shape): the scenarios of one `mlasim check`
// mostly share a preset and seed, and drawing costs more than their replay. Holds at most
// kDrawMemoBytes of values; thread-safe (`check -j`).
class DrawMemo {
 public:
  WeightTensor get(const WeightSpec& spec, std::uint64_t seed) {
    const Key key{seed, spec.name, static_cast<int>(spec.kind), spec.shape};
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      if (auto it = tensors_.find(key); it != tensors_.end()) return it->second;
    }
    WeightTensor t = draw_new(spec, seed);
    const size_t bytes = t.values.size() * sizeof(float);
    const std::lock_guard<std::mutex> lock(mutex_);
    if (bytes_ + bytes <= kDrawMemoBytes && tensors_.emplace(key, t).second) bytes_ += bytes;
    return t;
  }

 private:
  static constexpr size_t kDrawMemoBytes = size_t(128) << 20;
  using Key = std::tuple<std::uint64_t, std::string, int, std::vector<int>>;
  std::mutex mutex_;
  std::map<Key, WeightTensor> tensors_;
  size_t bytes_ = 0;
};

WeightTensor draw(const WeightSpec& spec, std::uint64_t seed) {
  static DrawMemo memo;
  return memo.get(spec, seed);
}

std::string shape_string(const std::vector<int>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

long long WeightTensor::numel() const { return product(shape); }

std::vector<WeightSpec> weight_specs(const ModelConfig& config) {
  std::vector<WeightSpec> specs;
  for_each_tensor(config, static_cast<const MlaWeights*>(nullptr),
                  [&](const WeightSpec& s, const WeightTensor*) { specs.push_back(s); });
  return specs;
}

std::vector<NamedWeight> MlaWeights::tensors() const {
  std::vector<NamedWeight> out;
  for_each_tensor(config, this, [&](const WeightSpec& s, const WeightTensor* t) { out.push_back({s.name, t}); });
  return out;
}

MlaWeights seeded_weights(const ModelConfig& config) {
  MlaWeights w;
  w.config = config;
  w.layers.resize(static_cast<size_t>(config.num_hidden_layers) * static_cast<size_t>(config.num_attn_modules));
  for_each_tensor(config, &w, [&](const WeightSpec& s, WeightTensor* t) { *t = draw(s, config.seed); });
  return w;
}

Result<MlaWeights> weights_from_tensors(const ModelConfig& config, std::map<std::string, WeightTensor> tensors) {
  MlaWeights w;
  w.config = config;
  w.layers.resize(static_cast<size_t>(config.num_hidden_layers) * static_cast<size_t>(config.num_attn_modules));
  std::string problem, where;
  for_each_tensor(config, &w, [&](const WeightSpec& s, WeightTensor* t) {
    if (!problem.empty()) return;
    auto it = tensors.find(s.name);
    if (it == tensors.end()) {
      problem = "missing tensor (want shape " + shape_string(s.shape) + ")", where = s.name;
    } else if (it->second.shape != s.shape || static_cast<long long>(it->second.values.size()) != product(s.shape)) {
      problem = "shape " + shape_string(it->second.shape) + " with " + std::to_string(it->second.values.size()) +
                " values, want " + shape_string(s.shape);
      where = s.name;
    } else {
      *t = std::move(it->second);
      tensors.erase(it);
    }
  });
  if (problem.empty() && !tensors.empty()) problem = "unexpected tensor for this model config", where = tensors.begin()->first;
  if (!problem.empty()) {
    Error e;
    e.key_path = where;
    e.message = problem;
    e.hint = "tensor names and shapes follow Hugging Face DeepSeek-V3 for the model config (see weight_specs)";
    return e;
  }
  return w;
}

}  // namespace mlasim
