// Helpers for the [routing] tests: configs by profile/backend, split tuples, path strings.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "attention/route.h"
#include "attention/routing_config.h"

namespace mlasim::test {

inline RoutingConfig cfg(EngineProfile p, AttentionBackendKind b, int k = 0) { return make_routing_config(p, b, std::nullopt, std::nullopt, k); }
inline RoutingConfig current(AttentionBackendKind b, int k = 0) { return cfg(EngineProfile::kVllm033, b, k); }

inline std::array<int, 4> split_of(const BatchRoute& r) {
  return {r.counts.num_decodes, r.counts.num_prefills, r.counts.num_decode_tokens, r.counts.num_prefill_tokens};
}

// "mqa,mha,..." in reordered order.
inline std::string paths_of(const BatchRoute& r) {
  std::string s;
  for (const RowRoute& row : r.rows) s += (s.empty() ? "" : ",") + std::string(to_string(row.path));
  return s;
}

}  // namespace mlasim::test
