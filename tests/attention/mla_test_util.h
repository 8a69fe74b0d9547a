// Helpers for the [mla] tests: the tiny model config, a routing config, and a step driver that
// keeps requests' computed tokens and block tables, routes and builds the metadata of each step
// as the engine would, and runs a backend on it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "attention/attention_metadata.h"
#include "attention/backend.h"
#include "attention/route.h"
#include "attention/routing_config.h"
#include "config/model_config.h"
#include "config/seeded_tokens.h"

namespace mlasim::test {

inline ModelConfig tiny_config(int heads = 4, unsigned long long seed = 7) {
  ModelConfig c = *model_preset("tiny");
  c.num_attention_heads = heads;
  c.seed = seed;
  return c;
}

// vllm-current with FlashMLA and an explicit T (q <= T with context is a decode), varlen queries.
inline RoutingConfig mla_routing(int threshold = 4, int block_size = 4, int max_model_len = 4096, int max_num_seqs = 8,
                                 EngineProfile profile = EngineProfile::kVllm033) {
  RoutingOptions o;
  o.profile = profile;
  o.backend = AttentionBackendKind::kFlashMla;
  o.reorder_batch_threshold = threshold;
  o.query_len_support = QueryLenSupport::kVarlen;
  o.block_size = block_size;
  o.max_model_len = max_model_len;
  o.max_num_seqs = max_num_seqs;
  return make_routing_config(o);
}

inline std::vector<int> seeded_sequence(std::uint64_t stream, int len, int vocab) {
  std::vector<int> t;
  for (int i = 0; i < len; ++i) t.push_back(seeded_token(11, stream, static_cast<std::uint64_t>(i), vocab));
  return t;
}

// Largest |a - b| over max(|b|) (0 when both empty).
inline double rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    num = std::max(num, std::abs(a[i] - b[i]));
    den = std::max(den, std::abs(b[i]));
  }
  return a.size() != b.size() ? 1e300 : (den > 0 ? num / den : num);
}

class StepDriver {
 public:
  struct Request {
    std::vector<int> tokens;  // the whole sequence (prompt + outputs)
    int prompt_len = 0;
    std::vector<int> blocks;  // block table; unused trailing entries are a huge id
    int nct = 0;
  };
  static constexpr int kUnusedBlockId = 2147480000;

  // Block ids are a seeded permutation of [1, num_blocks) (0 is the null block), so neighbours in a
  // sequence are far apart in the cache.
  StepDriver(RoutingConfig config, int num_blocks, std::uint64_t seed = 5) : config_(config) {
    free_.resize(static_cast<size_t>(num_blocks - 1));
    std::iota(free_.begin(), free_.end(), 1);
    for (size_t i = free_.size(); i > 1; --i) std::swap(free_[i - 1], free_[splitmix64(seed + i) % i]);
  }

  int add_request(std::vector<int> tokens, int prompt_len) {
    Request r;
    const int nblocks = (static_cast<int>(tokens.size()) + config_.block_size - 1) / config_.block_size;
    for (int i = 0; i < nblocks; ++i) r.blocks.push_back(take());
    r.blocks.push_back(kUnusedBlockId);
    r.tokens = std::move(tokens);
    r.prompt_len = prompt_len;
    reqs_.push_back(std::move(r));
    return static_cast<int>(reqs_.size()) - 1;
  }

  struct Step {
    BatchRoute route;
    AttentionMetadata md;
    std::vector<int> token_ids;
    std::vector<int> reqs;  // request of each reordered row
  };

  // Routes one step: (request, q) in persistent-batch order. Does not advance nct.
  Step plan(const std::vector<std::pair<int, int>>& batch) const {
    Step s;
    std::vector<RowInput> rows;
    for (auto [id, q] : batch) rows.push_back({q, reqs_[static_cast<size_t>(id)].nct, reqs_[static_cast<size_t>(id)].prompt_len});
    s.route = route_batch(rows, config_);
    std::vector<std::vector<int>> tables;
    for (const RowRoute& rr : s.route.rows) {
      const int id = batch[static_cast<size_t>(rr.input_index)].first;
      const Request& r = reqs_[static_cast<size_t>(id)];
      s.reqs.push_back(id);
      tables.push_back(r.blocks);
      for (int j = 0; j < rr.q; ++j) s.token_ids.push_back(r.tokens[static_cast<size_t>(r.nct + j)]);
    }
    s.md = build_attention_metadata(s.route, config_, tables);
    return s;
  }

  // Runs one step; returns per request of `batch` (input order) its last `sample_k` tokens' logits.
  std::vector<std::vector<double>> run(Backend& backend, const std::vector<std::pair<int, int>>& batch,
                                       bool force_prefill = false, int sample_k = 1, Step* step_out = nullptr) {
    Step s = plan(batch);
    StepInputs in;
    in.metadata = &s.md;
    in.token_ids = s.token_ids;
    in.force_prefill_path = force_prefill;
    for (size_t i = 0; i < batch.size(); ++i) {
      const auto pos = std::find(s.route.order.begin(), s.route.order.end(), static_cast<int>(i)) - s.route.order.begin();
      in.sample_rows.push_back(static_cast<int>(pos));
      in.num_sample_tokens.push_back(std::min(sample_k, batch[i].second));
    }
    const StepOutputs out = backend.run_step(in);
    std::vector<std::vector<double>> per_req;
    size_t at = 0;
    for (size_t i = 0; i < batch.size(); ++i) {
      const size_t len = static_cast<size_t>(in.num_sample_tokens[i]) * static_cast<size_t>(out.vocab_size);
      if (!out.logits_f64.empty()) {
        per_req.emplace_back(out.logits_f64.begin() + static_cast<long>(at), out.logits_f64.begin() + static_cast<long>(at + len));
      } else {
        per_req.emplace_back(out.logits.begin() + static_cast<long>(at), out.logits.begin() + static_cast<long>(at + len));
      }
      at += len;
    }
    for (auto [id, q] : batch) reqs_[static_cast<size_t>(id)].nct += q;
    if (step_out) *step_out = std::move(s);
    return per_req;
  }

  void set_computed(int id, int nct) { reqs_[static_cast<size_t>(id)].nct = nct; }
  const Request& request(int id) const { return reqs_[static_cast<size_t>(id)]; }
  const RoutingConfig& config() const { return config_; }

 private:
  int take() {
    const int b = free_.back();
    free_.pop_back();
    return b;
  }
  RoutingConfig config_;
  std::vector<int> free_;
  std::vector<Request> reqs_;
};

}  // namespace mlasim::test
