// The scenario loader: defaults, seeded prompts, overrides, and the exact message of every
// malformed scenario in tests/data/bad/.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "sim/request.h"
#include "config/request_tokens.h"
#include "scenario/scenario_loader.h"

using namespace mlasim;

namespace {

const std::string kBadDir = std::string(MLASIM_SOURCE_DIR) + "/tests/data/bad";

Scenario load_ok(const std::string& text, const std::vector<std::string>& sets = {}) {
  Result<Scenario> r = load_scenario_text(text, "t.yaml", sets);
  if (!r) FAIL(r.error().format());
  return r.value();
}

Error load_err(const std::string& text, const std::vector<std::string>& sets = {}) {
  Result<Scenario> r = load_scenario_text(text, "t.yaml", sets);
  REQUIRE_FALSE(r.ok());
  return r.error();
}

const char* kMinimal = "version: 1\nrequests:\n  - {id: a, prompt: [5, 6, 7]}\n";

}  // namespace

TEST_CASE("every malformed scenario gives its exact message", "[loader]") {
  std::ifstream table(kBadDir + "/expected.tsv");
  REQUIRE(table);
  std::set<std::string> listed;
  std::string line;
  while (std::getline(table, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string file, message, hint;
    std::getline(fields, file, '\t');
    std::getline(fields, message, '\t');
    std::getline(fields, hint, '\t');
    listed.insert(file);
    const std::string path = kBadDir + "/" + file;
    Result<Scenario> r = load_scenario_file(path);
    INFO(file);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().headline() == path + message);
    CHECK(r.error().hint == hint);
    CHECK(r.error().line > 0);
    CHECK(r.error().column > 0);
  }
  std::set<std::string> on_disk;
  for (const auto& entry : std::filesystem::directory_iterator(kBadDir))
    if (entry.path().extension() == ".yaml") on_disk.insert(entry.path().filename().string());
  CHECK(listed == on_disk);
  CHECK(listed.size() >= 15);
}

TEST_CASE("defaults are vLLM's and the tiny preset's", "[loader]") {
  Scenario s = load_ok(kMinimal);
  CHECK(s.name == "t");
  CHECK(s.model.preset == "tiny");
  CHECK(s.model.vocab_size == 512);
  CHECK(s.model.num_attention_heads == 4);
  CHECK(s.scheduler.max_num_batched_tokens == 2048);
  CHECK(s.scheduler.max_num_seqs == 128);
  CHECK(s.scheduler.max_model_len == 163840);  // the model's max_position_embeddings
  CHECK(s.scheduler.enable_chunked_prefill);
  CHECK(s.scheduler.block_size == 16);
  CHECK(s.scheduler.enable_prefix_caching);
  CHECK(s.scheduler.policy == SchedulingPolicy::kFcfs);
  CHECK(s.engine.profile == EngineProfile::kVllm033);
  CHECK(s.engine.attention_backend == AttentionBackendKind::kFlashAttnMla);
  CHECK(s.parallel.tensor_parallel_size == 1);
  REQUIRE(s.requests.size() == 1);
  CHECK(s.requests[0].output.empty());  // the unlisted outputs are the request's seeded stream
  const RequestSpec r = resolved_request(s.requests[0], s);
  CHECK(r.prompt == std::vector<int>{5, 6, 7});
  CHECK(r.max_tokens == 16);
  CHECK(r.output.size() == 16);  // seeded teacher-forced outputs up to max_tokens
  for (int t : r.output) {
    CHECK(t >= 2);
    CHECK(t < 512);
  }
}

TEST_CASE("prompt_len gives seeded ids that depend on seed and id only", "[loader]") {
  const char* text = "version: 1\nmodel: {seed: 7}\nrequests:\n  - {id: a, prompt_len: 40}\n  - {id: b, prompt_len: 40}\n";
  Scenario s1 = load_ok(text);
  Scenario s2 = load_ok(text);
  // Loaded by length only (drawn when the replay admits the request), 40 ids when asked for.
  CHECK(s1.requests[0].prompt.empty());
  CHECK(s1.requests[0].seeded_prompt_len == 40);
  CHECK(prompt_len(s1.requests[0]) == 40);
  const std::vector<int> a1 = prompt_tokens(s1.requests[0], s1);
  CHECK(a1 == prompt_tokens(s2.requests[0], s2));
  CHECK(a1.size() == 40);
  CHECK(a1 != prompt_tokens(s1.requests[1], s1));
  CHECK(resolved_request(s1.requests[0], s1).prompt == a1);
  // The replay draws the same ids.
  Request admitted = make_request(s1.requests[0], s1.model, 0);
  materialize_prompt(admitted);
  CHECK(admitted.all_token_ids == a1);
  Scenario s3 = load_ok(text, {"model.seed=8"});
  CHECK(prompt_tokens(s3.requests[0], s3) != a1);
}

TEST_CASE("explicit output is kept and continued with seeded tokens avoiding EOS and stop ids", "[loader]") {
  Scenario s = load_ok(
      "version: 1\nrequests:\n  - {id: a, prompt: [5], max_tokens: 300, output: [9, 1], stop_token_ids: [3, 4]}\n");
  CHECK(s.requests[0].output == std::vector<int>{9, 1});
  const RequestSpec r = resolved_request(s.requests[0], s);
  REQUIRE(r.output.size() == 300);
  CHECK(r.output[0] == 9);
  CHECK(r.output[1] == 1);
  CHECK(r.output_given);
  for (std::size_t i = 2; i < r.output.size(); ++i) {
    CHECK(r.output[i] != 1);
    CHECK(r.output[i] != 3);
    CHECK(r.output[i] != 4);
  }
}

TEST_CASE("overrides (--set) replace nested keys, creates sections and indexes lists", "[loader]") {
  Scenario s = load_ok(kMinimal, {"engine.profile=strict", "scheduler.block_size=64", "requests.0.max_tokens=4",
                                  "engine.attention_backend=flashmla"});
  CHECK(s.engine.profile == EngineProfile::kStrict);
  CHECK(s.engine.attention_backend == AttentionBackendKind::kFlashMla);
  CHECK(s.scheduler.block_size == 64);
  CHECK(s.requests[0].max_tokens == 4);
}

TEST_CASE("override (--set) errors point at the override", "[loader]") {
  Error e = load_err(kMinimal, {"scheduler.max_num_seqs=0"});
  CHECK(e.headline() == "<--set scheduler.max_num_seqs=0>:1:24: error: scheduler.max_num_seqs: must be positive (got 0)");
  Error e2 = load_err(kMinimal, {"requests.3.max_tokens=4"});
  CHECK(e2.file == "<--set requests.3.max_tokens=4>");
  CHECK(e2.message == "requests is a list of 1 entries; index 3 is past its end");
  CHECK(e2.hint == "indexes are 0-based: use 0 to 0; --set cannot add list entries, edit the scenario file for that");
  CHECK(load_err(std::string(kMinimal) + "expect: {steps: []}\n", {"expect.steps.0.step=0"}).hint ==
        "the list is empty; --set cannot add list entries, edit the scenario file for that");
  CHECK(load_err(kMinimal, {"requests.x.max_tokens=4"}).message == "requests is a list of 1 entries; \"x\" is not an index");
  Error e3 = load_err(kMinimal, {"engine.profil=strict"});
  CHECK(e3.key_path == "engine.profil");
  CHECK(e3.message == "unknown key");
  CHECK(e3.hint.rfind("did you mean `profile`?", 0) == 0);
  Error e4 = load_err(kMinimal, {"noequals"});
  CHECK(e4.message == "expected key=value");
}

TEST_CASE("max_model_len defaults to the model's and may not exceed it", "[loader]") {
  Scenario s = load_ok(kMinimal, {"model.max_position_embeddings=1000"});
  CHECK(s.scheduler.max_model_len == 1000);
  Error e = load_err(kMinimal, {"model.max_position_embeddings=1000", "scheduler.max_model_len=1001"});
  CHECK(e.key_path == "scheduler.max_model_len");
}

TEST_CASE("an empty file, a missing file and a directory are clear errors", "[loader]") {
  Error e = load_err("");
  CHECK(e.headline() == "t.yaml:1:1: error: the scenario is empty");
  Result<Scenario> r = load_scenario_file("/nonexistent/x.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().headline() == "/nonexistent/x.yaml: error: cannot read the scenario file");
  CHECK(r.error().hint == "no such file; check the path");
  Result<Scenario> dir = load_scenario_file(std::string(MLASIM_SOURCE_DIR) + "/scenarios");
  REQUIRE_FALSE(dir.ok());
  CHECK(dir.error().message == "is a directory, not a scenario file");
  CHECK(dir.error().hint == "give one .yaml file; `mlasim check DIR` runs every scenario under a directory");
}

TEST_CASE("expectations are read with their locations", "[loader]") {
  Scenario s = load_ok(
      "version: 1\nrequests:\n  - {id: a, prompt: [5]}\nexpect:\n  num_steps: 3\n  steps:\n"
      "    - {step: 0, num_mqa_tokens: 1, num_mha_tokens: 0, num_scheduled_tokens: {a: 1}, order: [a]}\n"
      "  requests:\n    - {id: a, status: finished_length_capped, num_output_tokens: 16}\n"
      "  invariants: [no_fresh_prefill_on_decode_path]\n");
  REQUIRE(s.expect.steps.size() == 1);
  const StepExpectation& st = s.expect.steps[0];
  CHECK(st.line == 7);
  CHECK(st.column == 7);
  CHECK(st.num_mqa_tokens == 1);
  CHECK(st.num_mha_tokens == 0);
  REQUIRE(st.num_scheduled_tokens);
  CHECK(*st.num_scheduled_tokens == std::vector<std::pair<std::string, int>>{{"a", 1}});
  CHECK(*st.order == std::vector<std::string>{"a"});
  CHECK(s.expect.num_steps == 3);
  REQUIRE(s.expect.requests.size() == 1);
  CHECK(s.expect.requests[0].status == "finished_length_capped");
  CHECK(s.expect.invariants == std::vector<std::string>{"no_fresh_prefill_on_decode_path"});
}

TEST_CASE("the scenario files shipped in scenarios/ all load", "[loader]") {
  int count = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(std::string(MLASIM_SOURCE_DIR) + "/scenarios")) {
    if (entry.path().extension() != ".yaml") continue;
    Result<Scenario> r = load_scenario_file(entry.path().string());
    INFO(entry.path().string());
    CHECK(r.ok());
    if (!r) WARN(r.error().format());
    ++count;
  }
  CHECK(count >= 1);
}

TEST_CASE("a scenario name that cannot be a golden folder is an error", "[loader]") {
  // The default name is the file's stem: a hidden file's stem starts with '.'.
  Result<Scenario> hidden = load_scenario_text(kMinimal, ".hidden.yaml", {});
  REQUIRE_FALSE(hidden.ok());
  CHECK(hidden.error().headline() == ".hidden.yaml:1:1: error: name: scenario name \".hidden\" starts with '.'");
  CHECK(load_err(kMinimal, {"name=a\\b"}).message == "scenario name \"a\\b\" contains a path separator");
  CHECK(load_err(std::string(kMinimal) + "name: \"x\\ny\"\n").headline() ==
        "t.yaml:4:7: error: name: the scenario name contains a control character");
  CHECK(load_ok(kMinimal, {"name=ünïcode name"}).name == "ünïcode name");
}

TEST_CASE("a huge max_tokens seeds only the outputs max_model_len leaves room for", "[loader]") {
  Scenario s = load_ok("version: 1\nscheduler: {max_model_len: 64}\nrequests:\n"
                       "  - {id: a, prompt: [5, 6, 7], max_tokens: 1073741824}\n");
  CHECK(s.requests[0].max_tokens == 1073741824);
  CHECK(resolved_request(s.requests[0], s).output.size() == 61u);
}

TEST_CASE("profile vllm-current is an alias of vllm-0.33, the profile picks its release's scheduler rules", "[loader]") {
  const Scenario alias = load_ok(kMinimal, {"engine.profile=vllm-current"});
  CHECK(alias.engine.profile == EngineProfile::kVllm033);
  CHECK(std::string(to_string(alias.engine.profile)) == "vllm-0.33");
  CHECK(alias.scheduler.rules.scheduler_reserve_full_isl);
  CHECK(alias.scheduler.rules.free_unhashed_blocks_first);
  const Scenario old = load_ok(kMinimal, {"engine.profile=vllm-0.11"});
  CHECK_FALSE(old.scheduler.rules.scheduler_reserve_full_isl);
  CHECK_FALSE(old.scheduler.rules.lone_request_skips_long_prefill_threshold);
  CHECK_FALSE(old.scheduler.rules.pad_one_token_spec_admission);
  // The explicit key wins over the profile, either way.
  CHECK(load_ok(kMinimal, {"engine.profile=vllm-0.11", "scheduler.scheduler_reserve_full_isl=true"})
            .scheduler.rules.scheduler_reserve_full_isl);
  CHECK_FALSE(load_ok(kMinimal, {"scheduler.scheduler_reserve_full_isl=false"}).scheduler.rules.scheduler_reserve_full_isl);
}
