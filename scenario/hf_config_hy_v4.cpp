// HY-V4's DSA layers, indexer layers and learnable sink, as vLLM 0.33 reads them.
#include "scenario/hf_config_hy_v4.h"

#include <algorithm>

#include "scenario/hf_config_hybrid.h"

namespace mlasim {
namespace {

using Reader = JsonFieldReader;
const JsonNode* present(const JsonNode& object, const char* key) { return Reader::present(object, key); }

// HYV4Config.__post_init__ (configs/hy_v4.py ~150-160): its own spellings of a DSA layer.
std::string fold_hy_v4_layer_type(const std::string& t) {
  return t == "sparse_attention" || t == "sparse" ? "deepseek_sparse_attention" : t;
}

// compute_skip_topk_layers's checks of indexer_types (attention.py ~80-97), which HYV4Config fills
// when absent (~138-142: "full" for layer 0 and every fourth from layer 1). Which layers build an
// indexer changes the indexer caches' count, not the scheduler or the routing.
void read_indexer_types(const Reader& r, const JsonNode& root, int num_layers) {
  const JsonNode* list = present(root, "indexer_types");
  if (!list) return;
  r.expect_list(*list, "indexer_types");
  if (static_cast<int>(list->items.size()) != num_layers)
    r.fail(*list, "indexer_types",
           "indexer_types must contain one entry per hidden layer: expected " + std::to_string(num_layers) + ", got " +
               std::to_string(list->items.size()) + ". (vLLM 0.33 raises it building a DSA layer, "
               "models/hy_v4/nvidia/attention.py ~81-86)",
           "one \"full\" or \"shared\" per layer");
  for (std::size_t i = 0; i < list->items.size(); ++i) {
    const std::string t = r.read_string(list->items[i], json_index_key("indexer_types", i));
    if (t != "full" && t != "shared")
      r.fail(list->items[i], json_index_key("indexer_types", i),
             "indexer_types only supports 'full' and 'shared', got ['" + t + "']. (models/hy_v4/nvidia/attention.py ~87-91)",
             "\"full\" builds the layer's indexer; \"shared\" reuses the last full layer's top-k");
  }
}

}  // namespace

void read_hy_v4_attention(const Reader& r, const JsonNode& root, const JsonNode& arch_at, ModelConfig& out,
                          std::vector<std::string>& notes) {
  out.learnable_sink = true;
  if (!root.find("q_lora_rank")) out.q_lora_rank = 1536;  // HYV4Config's default (configs/hy_v4.py ~109); null: none
  if (const JsonNode* n = present(root, "learnable_sink")) out.learnable_sink = r.read_bool(*n, "learnable_sink");
  const int n = out.num_hidden_layers;
  int num_sparse = 0;
  const JsonNode* list = present(root, "layer_types");
  if (list && out.index_topk) {
    const auto types = read_transformers_layer_types(r, *list, "layer_types", n, fold_hy_v4_layer_type);
    num_sparse = static_cast<int>(std::count(types.begin(), types.end(), "indexed_attention"));
  } else if (list) {
    read_transformers_layer_types(r, *list, "layer_types", n, fold_hy_v4_layer_type);
  }
  if (num_sparse == 0) {
    if (out.index_topk) {
      const JsonNode* at = present(root, "index_topk") ? present(root, "index_topk") : &root;
      notes.push_back(r.file() + ":" + std::to_string(at->line) + ":" + std::to_string(at->column) +
                      ": index_topk: " + std::to_string(*out.index_topk) + " with no DSA layer (layer_types " +
                      (list ? "names none" : "unset") +
                      "): HY-V4 builds every layer as dense MLA (models/hy_v4/nvidia/attention.py ~323-330)");
    }
    out.unused_index_topk = out.index_topk;
    out.index_topk.reset();
    return;
  }
  if (num_sparse != n)
    r.fail(*list, "layer_types",
           std::to_string(num_sparse) + " of " + std::to_string(n) + " layers are DSA and the rest dense MLA: vLLM 0.33 "
               "gives each kind its own backend (models/hy_v4/nvidia/attention.py ~341-500), and mlasim routes one kind "
               "of MLA layer",
           "make every layer DSA (\"sparse_attention\") or none");
  if (out.q_lora_rank == 0)
    r.fail(arch_at, "q_lora_rank",
           "HYV4 sparse attention requires q_lora_rank to be set (the DSA indexer projects its queries from the q "
           "latent, models/hy_v4/nvidia/attention.py ~431-434)",
           "set q_lora_rank, or make the layers dense MLA");
  read_indexer_types(r, root, n);
}

}  // namespace mlasim
