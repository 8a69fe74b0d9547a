// The one scenario writer: the YAML document's exact text, a Scenario's document, and the round
// trip write -> load -> write (the same bytes, the same replay) over every inline scenario.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>

#include "scenario/scenario_loader.h"
#include "scenario/scenario_writer.h"
#include "scenario/yaml_document.h"
#include "tests/engine/dry_schedule.h"

using namespace mlasim;

namespace {

Scenario load_ok(const std::string& text) {
  Result<Scenario> r = load_scenario_text(text, "t.yaml");
  if (!r) FAIL(r.error().format() + "\n" + text);
  return r.value();
}

}  // namespace

TEST_CASE("the YAML document: block and flow collections, comments, quoting, header lines", "[writer]") {
  using V = YamlValue;
  V doc = V::mapping(V::Style::kBlock);
  doc.set("version", V::number(1));
  doc.set("name", V::str("plain_name-1.2"));
  doc.set("description", V::str("needs: quotes \"and\" a\nnewline\t\x01"));
  V& model = doc.set("model", V::mapping(V::Style::kFlow));
  model.set("preset", V::plain("tiny"));
  model.set("rope_theta", V::number(10000.5));
  V& sched = doc.set("scheduler", V::mapping(V::Style::kBlock));
  sched.set("max_num_seqs", V::number(4)).comment("four");
  sched.set("enable_prefix_caching", V::boolean(false));
  V& reqs = doc.set("requests", V::sequence(V::Style::kBlock)).comment("two");
  V r = V::mapping(V::Style::kFlow);
  r.set("id", V::quoted("a"));
  r.set("prompt", V::list(std::vector<int>{5, 6}));
  reqs.push(r).comment("first");
  reqs.push(V::mapping(V::Style::kFlow));
  doc.set("name", V::str("replaced"));  // in place: the key keeps its position
  CHECK(emit_yaml(doc, "line one\nline two") ==
        "# line one\n"
        "# line two\n"
        "version: 1\n"
        "name: replaced\n"
        "description: \"needs: quotes \\\"and\\\" a\\nnewline\\t\\x01\"\n"
        "model: {preset: tiny, rope_theta: 10000.5}\n"
        "scheduler:\n"
        "  max_num_seqs: 4  # four\n"
        "  enable_prefix_caching: false\n"
        "requests:  # two\n"
        "  - {id: \"a\", prompt: [5, 6]}  # first\n"
        "  - {}\n");
  CHECK(doc.find("name")->text() == "replaced");
  CHECK(doc.find("absent") == nullptr);
}

TEST_CASE("the document of a Scenario keeps how its prompts were given", "[writer]") {
  const Scenario s = load_ok(
      "version: 1\nname: w\nscheduler: {max_num_seqs: 4}\nengine: {profile: strict}\n"
      "requests:\n"
      "  - {id: a, prompt: [5, 6, 7], max_tokens: 3, output: [9]}\n"
      "  - {id: b, arrival_step: 2, prompt_len: 600, prompt_hash_ids: [7, 8], prompt_hash_block_size: 512}\n"
      "  - {id: c, arrival_step: 5, prompt_len: 4, min_tokens: 1, max_tokens: 2, priority: -1, ignore_eos: true}\n"
      "expect: {invariants: [step_invariants]}\n");
  CHECK(scenario_to_yaml(s, "written back") ==
        "# written back\n"
        "version: 1\n"
        "name: \"w\"\n"
        "model: {preset: tiny}\n"
        "scheduler: {max_num_seqs: 4, block_size: 16}\n"
        "engine: {profile: strict, attention_backend: flashattn-mla, model_runner: v2}\n"  // as resolved
        "requests:\n"
        "  - {id: \"a\", prompt: [5, 6, 7], max_tokens: 3, output: [9]}\n"
        "  - {id: \"b\", arrival_step: 2, prompt_len: 600, prompt_hash_ids: [7, 8], max_tokens: 16}\n"
        "  - {id: \"c\", arrival_step: 5, prompt_len: 4, max_tokens: 2, min_tokens: 1, ignore_eos: true, "
        "priority: -1}\n"
        "expect:\n"
        "  invariants: [step_invariants]\n");
}

TEST_CASE("arrival times are written in seconds", "[writer]") {
  const Scenario s = load_ok("version: 1\nrequests:\n  - {id: a, arrival_time: 0.25, prompt: [5]}\n"
                             "  - {id: b, arrival_time: 1.5e-06, prompt: [6]}\n");
  const std::string y = scenario_to_yaml(s, "t");
  CHECK(y.find("  - {id: \"a\", arrival_time: 0.25, prompt: [5], max_tokens: 16}\n") != std::string::npos);
  CHECK(y.find("  - {id: \"b\", arrival_time: 1.5e-06, prompt: [6], max_tokens: 16}\n") != std::string::npos);
  CHECK(scenario_to_yaml(load_ok(y), "t") == y);
}

TEST_CASE("every inline scenario: write, load, write gives the same bytes and the same replay", "[writer]") {
  std::vector<std::string> files;
  for (const char* dir : {"seed", "scheduler", "deploy", "model"})
    for (const auto& e : std::filesystem::directory_iterator(std::string(MLASIM_SOURCE_DIR) + "/scenarios/" + dir))
      if (e.path().extension() == ".yaml") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  int written = 0, from_file = 0;
  for (const std::string& path : files) {
    INFO(path);
    Result<Scenario> s = load_scenario_file(path);
    REQUIRE(s.ok());
    if (!s.value().requests_file.empty()) {  // the writer writes inline requests
      ++from_file;
      continue;
    }
    const std::string once = scenario_to_yaml(s.value(), "round trip");
    const Scenario back = load_ok(once);
    CHECK(scenario_to_yaml(back, "round trip") == once);
    CHECK(test::dry_schedule(back) == test::dry_schedule(s.value()));
    ++written;
  }
  CHECK(written == 57);  // scenarios/{seed,scheduler,deploy,model}: 58 files, one with a requests_file
  CHECK(from_file == 1);
}
