// `mlasim run --resolved`: the header's resolved configuration and each request as admitted.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "base/formats/json_value.h"
#include "output/resolved_trace.h"
#include "scenario/scenario_loader.h"

using namespace mlasim;

namespace {

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<int> ints(const JsonValue& v) {
  std::vector<int> out;
  for (const JsonValue& e : v.array()) out.push_back(static_cast<int>(e.number()));
  return out;
}

}  // namespace

TEST_CASE("the resolved trace lists the configuration, then each request as the engine admitted it", "[resolved]") {
  // b is listed first but arrives second (50 ms); a's prompt is drawn from prompt_len.
  Result<Scenario> loaded = load_scenario_text(R"(version: 1
name: resolved
model: {preset: tiny}
scheduler: {max_num_batched_tokens: 8, max_num_seqs: 4, max_model_len: 64, num_speculative_tokens: 1}
requests:
  - {id: b, arrival_time: 0.05, prompt: [5, 6, 7], max_tokens: 2, output: [9], accepted_drafts: [0]}
  - {id: a, arrival_time: 0.0, prompt_len: 4, max_tokens: 3, stop_token_ids: [3], priority: 1}
)", "resolved.yaml");
  REQUIRE(loaded.ok());
  const Scenario& s = loaded.value();
  const std::string path =
      (std::filesystem::temp_directory_path() / ("mlasim_resolved_" + std::to_string(getpid()) + ".jsonl")).string();
  ResolvedTraceSink sink;
  REQUIRE(sink.open(path, s, make_routing_config(s)).ok());
  Engine engine(s);
  engine.add_sink(&sink);
  const RunRecord run = engine.run();
  REQUIRE(sink.finish().ok());
  REQUIRE(sink.publish().ok());

  const std::vector<std::string> lines = lines_of(path);
  std::filesystem::remove(path);
  REQUIRE(lines.size() == 3);
  // Every value resolved: the tiny preset (vocab 512), vLLM 0.33's auto backend, block size and
  // runner for an H200 (FlashAttention-MLA: T = 512, varlen), the default timing model.
  CHECK(lines[0] ==
        R"({"type": "header", "format": "mlasim-resolved-trace", "version": 1, )"
        R"("scenario": "resolved", "model": {"vocab_size": 512, "eos_token_id": 1, )"
        R"("max_position_embeddings": 163840, "sparse_mla": false}, )"
        R"("scheduler": {"max_num_batched_tokens": 8, "max_num_seqs": 4, "max_model_len": 64, )"
        R"("enable_chunked_prefill": true, "long_prefill_token_threshold": 0, "block_size": 16, )"
        R"("num_gpu_blocks": 8192, "enable_prefix_caching": true, "policy": "fcfs", )"
        R"("num_speculative_tokens": 1, "speculative_method": "mtp", )"
        R"("scheduler_reserve_full_isl": true}, "engine": {"profile": "vllm-0.33", )"
        R"("attention_backend": "flashattn-mla", "model_runner": "v2", "decode_threshold": 512, )"
        R"("query_len_support": "varlen", "require_uniform": false, "decode_threshold_given": false, )"
        R"("query_len_support_given": false}, "timing": {"fixed_us": 20000.0, )"
        R"("per_scheduled_token_us": 12.0, "per_context_token_us": 0.017999999999999999, )"
        R"("per_request_us": 25.0}, "timed_arrivals": true, "num_requests": 2})");

  Result<JsonValue> a = parse_json(lines[1], "a");
  Result<JsonValue> b = parse_json(lines[2], "b");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a.value().find("id")->string() == "a");
  CHECK(a.value().find("index")->number() == 1);
  CHECK(a.value().find("arrival_time_ns")->number() == 0);
  CHECK(a.value().find("admitted_step")->number() == 0);
  CHECK(a.value().find("priority")->number() == 1);
  CHECK(ints(*a.value().find("stop_token_ids")) == std::vector<int>{3});
  CHECK(ints(*a.value().find("accepted_drafts")).empty());
  // The prompt and outputs are the tokens the replay used: prompt + the first max_tokens outputs
  // are the run's record; the output runs 2k = 2 tokens past max_tokens, for an engine whose
  // drafts run past the end before it stops.
  const RequestRecord& ra = run.requests[1];
  REQUIRE(ra.id == "a");
  const std::vector<int> a_prompt = ints(*a.value().find("prompt"));
  const std::vector<int> a_output = ints(*a.value().find("output"));
  CHECK(a_prompt.size() == 4);
  REQUIRE(a_output.size() == 5);
  std::vector<int> a_tokens = a_prompt;
  a_tokens.insert(a_tokens.end(), a_output.begin(), a_output.begin() + 3);
  CHECK(ra.token_ids == a_tokens);

  // a finishes in two steps (its draft accepted), about 40.1 ms: nothing is alive, so the clock
  // jumps to b's 50 ms and the next step (2) admits it.
  CHECK(b.value().find("id")->string() == "b");
  CHECK(b.value().find("index")->number() == 0);
  CHECK(b.value().find("arrival_time_ns")->number() == 50000000);
  CHECK(b.value().find("admitted_step")->number() == 2);
  CHECK(ints(*b.value().find("prompt")) == std::vector<int>{5, 6, 7});
  CHECK(ints(*b.value().find("accepted_drafts")) == std::vector<int>{0});
  const std::vector<int> b_output = ints(*b.value().find("output"));
  REQUIRE(b_output.size() == 4);
  CHECK(b_output[0] == 9);
  CHECK(run.requests[0].token_ids == std::vector<int>{5, 6, 7, 9, b_output[1]});
}
