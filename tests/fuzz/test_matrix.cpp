// The routing matrix: every cell present once, the current rules' lone 1-token prompt, strict
// clean, and the three outputs agreeing on the cells.
#include <catch2/catch.hpp>

#include "tools/fuzz/finding.h"
#include "tools/fuzz/matrix.h"
#include "base/formats/json_value.h"

namespace mlasim {
namespace {

TEST_CASE("the routing matrix: 7 profiles x 6 backends x k in {0, 1, 3} x chunked on/off", "[fuzz]") {
  MatrixOptions options;
  options.runs = 100;
  const std::vector<MatrixCell> cells = routing_matrix(options);
  REQUIRE(cells.size() == 252);
  int strict_found = 0, current_lone = 0;
  for (const MatrixCell& c : cells) {
    if (c.profile == EngineProfile::kStrict) strict_found += c.smallest.has_value();
    if (c.profile == EngineProfile::kVllm033) {
      REQUIRE(c.smallest);
      CHECK(c.smallest->engine.attention_backend == c.backend);
      CHECK(c.smallest->scheduler.num_speculative_tokens == c.num_speculative_tokens);
      CHECK(c.smallest->scheduler.enable_chunked_prefill == c.chunked_prefill);
      current_lone += describe_batch(*c.smallest).rfind("1 request: P=1 max_tokens=1", 0) == 0;
    }
    if (!c.smallest) CHECK(c.runs == 100);
  }
  CHECK(strict_found == 0);
  CHECK(current_lone == 36);
  const std::string text = matrix_text(cells, options), md = matrix_markdown(cells, options);
  CHECK(text.find("vllm-0.33        flashinfer-mla  0 on      1 request: P=1 max_tokens=1\n") != std::string::npos);
  CHECK(text.find("strict           flashinfer-mla  3 off     none found in 100 runs\n") != std::string::npos);
  CHECK(md.find("| vllm-0.33 | flashinfer-mla | 0 | on | 1 request: P=1 max_tokens=1 |\n") != std::string::npos);
  Result<JsonValue> json = parse_json(matrix_json(cells, options), "matrix.json");
  REQUIRE(json.ok());
  REQUIRE(json.value().find("cells"));
  CHECK(json.value().find("cells")->array().size() == 252);
  // The same options, the same matrix.
  CHECK(matrix_json(routing_matrix(options), options) == matrix_json(cells, options));
}

}  // namespace
}  // namespace mlasim
