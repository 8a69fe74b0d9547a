// Padded rows (q = 0, as CUDA-graph padding under require_uniform) take no path's tokens, so they
// are never reported as fresh prefills on the decode path.
#include <catch2/catch.hpp>

#include "attention/route.h"
#include "attention/routing_config.h"

using namespace mlasim;

TEST_CASE("a padded q = 0 row is not a fresh prefill on the decode path", "[routing]") {
  const RoutingConfig config = make_routing_config(EngineProfile::kVllm033, AttentionBackendKind::kFlashInferMla);
  const std::vector<RowInput> rows = {{1, 5, 3}, {0, 0, 4}, {1, 0, 1}};
  const BatchRoute r = route_batch(rows, config, /*reorder=*/false);
  REQUIRE(r.rows.size() == 3);
  CHECK(r.counts.num_mqa_tokens == 2);
  CHECK(r.counts.num_mha_tokens == 0);
  CHECK_FALSE(r.rows[1].fresh_on_decode_path);  // q = 0: no token took any path
  CHECK(r.rows[2].fresh_on_decode_path);        // the one-token prompt did
}
