// The replay loop, its records and its outputs: exact steps of small scenarios, arrival gaps,
// byte-identical JSON, expectation failures, atomic writes.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "scenario/scenario_loader.h"
#include "base/atomic_file.h"
#include "base/hash.h"
#include "engine/engine.h"
#include "verify/expectations.h"
#include "base/formats/json_writer.h"
#include "output/run_json.h"

using namespace mlasim;

namespace {

Scenario load(const std::string& text) {
  Result<Scenario> r = load_scenario_text(text, "t.yaml");
  if (!r) FAIL(r.error().format());
  return r.value();
}

}  // namespace

TEST_CASE("a lone one-token prompt runs one token per step until max_tokens", "[engine]") {
  Scenario s = load("version: 1\nscheduler: {max_num_batched_tokens: 64, max_num_seqs: 4, max_model_len: 64}\n"
                    "requests:\n  - {id: hello, prompt: [17], max_tokens: 3, output: [5, 6, 7]}\n");
  RunRecord run = Engine(s).run();
  REQUIRE(run.steps.size() == 3);
  for (int i = 0; i < 3; ++i) {
    const StepRecord& st = run.steps[static_cast<std::size_t>(i)];
    CHECK(st.step == i);
    CHECK(st.total_num_scheduled_tokens == 1);
    REQUIRE(st.rows.size() == 1);
    CHECK(run.names[st.rows[0].index] == "hello");
    CHECK(st.rows[0].q == 1);
    CHECK(st.rows[0].nct == i);
    CHECK(st.rows[0].prompt_len == 1);
  }
  CHECK(run.steps[0].new_reqs == std::vector<int>{0});  // hello is the scenario's request 0
  CHECK(run.steps[2].finished == std::vector<int>{0});
  CHECK(run.names[0] == "hello");
  REQUIRE(run.requests.size() == 1);
  CHECK(run.requests[0].status == "finished_length_capped");
  CHECK(run.requests[0].token_ids == std::vector<int>{17, 5, 6, 7});
}

TEST_CASE("a long replay audits its first steps' changes, then samples the whole pool", "[engine]") {
  // One request decoding 600 tokens: 600 steps. The first kAuditEveryStepUntil (256) are checked
  // in full (block tables, metadata with its token arrays) and the pool by the incremental audit;
  // then only every kAuditInterval-th step is. With audit_every_step, every step.
  const Scenario s = load(
      "version: 1\nname: long\nmodel: {preset: tiny}\nscheduler: {max_model_len: 1024, num_gpu_blocks: 128}\n"
      "requests:\n  - {id: a, prompt_len: 5, max_tokens: 600, ignore_eos: true}\n");
  for (const bool every_step : {false, true}) {
    EngineOptions options;
    options.audit_every_step = every_step;
    Engine e(s, options);
    std::vector<int> unchecked, incremental;
    while (!e.done()) {
      const int step = e.step().step;
      if (!e.attention_metadata().has_token_arrays) unchecked.push_back(step);
      if (e.scheduler().audits_changes()) incremental.push_back(step);
    }
    INFO("audit_every_step " << every_step);
    if (every_step) {
      CHECK(unchecked.empty());
      CHECK(incremental.size() == 600);
    } else {
      REQUIRE(unchecked.size() == 600 - 256);
      CHECK(unchecked.front() == 256);
      CHECK(unchecked.back() == 599);
      REQUIRE(incremental.size() == 256);
      CHECK(incremental.back() == 255);
    }
  }
}

TEST_CASE("steps with nothing alive are skipped so step numbers follow arrival_step", "[engine]") {
  Scenario s = load("version: 1\nscheduler: {max_num_batched_tokens: 64, max_num_seqs: 4, max_model_len: 64}\n"
                    "requests:\n  - {id: a, prompt: [3, 4], max_tokens: 1}\n"
                    "  - {id: b, prompt: [3, 5], max_tokens: 1, arrival_step: 10}\n");
  RunRecord run = Engine(s).run();
  REQUIRE(run.steps.size() == 2);
  CHECK(run.steps[0].step == 0);
  CHECK(run.steps[1].step == 10);
  CHECK(run.steps[1].new_reqs == std::vector<int>{1});  // b
}

TEST_CASE("batch rows follow the persistent batch, then the profile's reorder", "[engine]") {
  // a finishes at step 1, leaving a hole at row 0 that the new request c fills at step 2.
  const std::string text =
      "version: 1\nscheduler: {max_num_batched_tokens: 64, max_num_seqs: 4, max_model_len: 64}\n"
      "requests:\n  - {id: a, prompt: [3], max_tokens: 2}\n"
      "  - {id: b, prompt: [4], max_tokens: 5}\n"
      "  - {id: c, prompt: [5], max_tokens: 2, arrival_step: 2}\n";
  // Requests a, b, c are the scenario's 0, 1, 2.
  auto ids = [](const StepRecord& st) {
    std::vector<int> out;
    for (const auto& r : st.rows) out.push_back(r.index);
    return out;
  };
  // SGLang does not reorder: the rows are the persistent batch as the model runner keeps it.
  Result<Scenario> sglang = load_scenario_text(text, "t.yaml", {"engine.profile=sglang"});
  REQUIRE(sglang.ok());
  RunRecord run = Engine(sglang.value()).run();
  REQUIRE(run.steps.size() >= 3);
  CHECK(ids(run.steps[1]) == std::vector<int>{0, 1});
  CHECK(run.steps[1].finished == std::vector<int>{0});
  // Scheduling order is running-first (b, then the new c); the batch puts c into a's old row 0.
  CHECK(run.steps[2].num_scheduled_tokens == std::vector<std::pair<int, int>>{{1, 1}, {2, 1}});
  CHECK(ids(run.steps[2]) == std::vector<int>{2, 1});
  CHECK(run.names[2] == "c");
  // vllm-current (4 regions) with model runner V1: the decode b (region 0) is swapped ahead of the
  // fresh c (region 3) in the persistent batch.
  Result<Scenario> v1 = load_scenario_text(text, "t.yaml", {"engine.model_runner=v1"});
  REQUIRE(v1.ok());
  RunRecord current = Engine(v1.value()).run();
  CHECK(ids(current.steps[2]) == std::vector<int>{1, 2});
  CHECK(current.steps[2].reorder_modified);
  CHECK(current.steps[2].rows[1].region == Region::kPrefill);
  CHECK(current.steps[2].rows[1].path == MlaPath::kMqa);  // T = 512 (FlashAttn-MLA): every row decodes
  CHECK(current.steps[2].rows[1].fresh_on_decode_path);
}

TEST_CASE("the run JSON is byte-identical across runs and names docs/design.md's fields", "[engine]") {
  Scenario s = load("version: 1\nmodel: {seed: 3}\nscheduler: {max_num_batched_tokens: 64, max_num_seqs: 4, "
                    "max_model_len: 256, num_speculative_tokens: 2}\n"
                    "requests:\n  - {id: a, prompt_len: 40, max_tokens: 5, accepted_drafts: [1]}\n"
                    "  - {id: b, prompt_len: 30, max_tokens: 4}\n");
  std::string j1 = run_record_to_json(Engine(s).run());
  std::string j2 = run_record_to_json(Engine(s).run());
  CHECK(j1 == j2);
  for (const char* field : {"\"steps\"", "\"num_scheduled_tokens\"", "\"total_num_scheduled_tokens\"", "\"rows\"",
                            "\"prompt_len\"", "\"new\"", "\"resumed\"", "\"preempted\"", "\"finished\"",
                            "\"new_block_ids\"", "\"requests\"", "\"token_ids\"", "\"num_preemptions\""})
    CHECK(j1.find(field) != std::string::npos);
}

TEST_CASE("expectation failures name the line and show expected and actual", "[engine]") {
  Scenario s = load("version: 1\nscheduler: {max_num_batched_tokens: 64, max_num_seqs: 4, max_model_len: 64}\n"
                    "requests:\n  - {id: a, prompt: [3, 4], max_tokens: 2}\n"
                    "expect:\n  num_steps: 3\n  steps:\n    - {step: 0, num_scheduled_tokens: {a: 1}, new: [a]}\n"
                    "  requests:\n    - {id: a, status: finished_stopped}\n");
  RunRecord run = Engine(s).run();
  std::vector<ExpectationFailure> f = check_expectations(s, run);
  REQUIRE(f.size() == 3);
  CHECK(f[0].format() == "t.yaml: expect num_steps: expected 3, got 2");
  CHECK(f[1].format() == "t.yaml:8:7: expect step 0 num_scheduled_tokens: expected {a: 1}, got {a: 2}");
  CHECK(f[2].format() == "t.yaml:10:7: expect request a status: expected finished_stopped, got finished_length_capped");
  CHECK(count_expectation_checks(s) == 4);
}

TEST_CASE("JsonWriter escapes strings and nests deterministically", "[engine]") {
  JsonWriter w;
  w.begin_object().key("a\"b").value("x\ny\\").key("n").int_array({1, 2}).key("e").begin_array().end_array().end_object();
  CHECK(w.str() == "{\n  \"a\\\"b\": \"x\\ny\\\\\",\n  \"n\": [1, 2],\n  \"e\": []\n}\n");
}

TEST_CASE("JsonWriter escapes every string as a char-by-char escaper does", "[engine]") {
  // The writer looks through strings 8 bytes at a time; a plain escaper, one char at a time,
  // is the reference. Random strings put quotes, backslashes, control and high bytes at every
  // offset of a word.
  auto reference = [](const std::string& s) {
    std::string out = "\"";
    for (const char c : s) {
      if (c == '"')
        out += "\\\"";
      else if (c == '\\')
        out += "\\\\";
      else if (c == '\n')
        out += "\\n";
      else if (c == '\t')
        out += "\\t";
      else if (c == '\r')
        out += "\\r";
      else if (static_cast<unsigned char>(c) < 0x20)
        out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
      else
        out += c;
    }
    return out + "\"";
  };
  const std::string alphabet = std::string("ab \"\\\n\t\r\x01\x1f\x7f\x80\xc3\xa9~") + '\0';
  std::uint64_t state = 7;
  int escaped = 0;
  for (int n = 0; n < 4000; ++n) {
    std::string s;
    state = splitmix64(state);
    const int len = static_cast<int>(state % 40);
    for (int i = 0; i < len; ++i) {
      state = splitmix64(state);
      // Mostly plain letters, so that long runs skip whole words.
      s += state % 4 != 0 ? static_cast<char>('a' + state % 26) : alphabet[(state >> 8) % alphabet.size()];
    }
    JsonWriter w(0, JsonWriter::Layout::kOneLine);
    w.value(s);
    REQUIRE(std::string(w.text()) == reference(s));
    escaped += reference(s).size() != s.size() + 2 ? 1 : 0;
  }
  CHECK(escaped > 1000);
  JsonWriter ints(0, JsonWriter::Layout::kOneLine);
  ints.begin_array()
      .value(0)
      .value(-7)
      .value(static_cast<long long>(INT64_MIN))
      .int_array({-1, 2147483647, 0})
      .end_array();
  CHECK(ints.text() == "[0, -7, -9223372036854775808, [-1, 2147483647, 0]]");
}

TEST_CASE("atomic writes replace the file whole and leave nothing behind on failure", "[engine]") {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("mlasim_atomic_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::string path = (dir / "out.json").string();
  REQUIRE(write_file_atomically(path, "first").ok());
  REQUIRE(write_file_atomically(path, "second").ok());
  std::ifstream in(path);
  std::stringstream buf;
  buf << in.rdbuf();
  CHECK(buf.str() == "second");
  Status st = write_file_atomically((dir / "missing" / "x.json").string(), "data");
  CHECK_FALSE(st.ok());
  CHECK(st.error().message.find("cannot create temporary file") == 0);
  int entries = 0;
  for (const auto& e : fs::directory_iterator(dir)) (void)e, ++entries;
  CHECK(entries == 1);
  fs::remove_all(dir);
}
