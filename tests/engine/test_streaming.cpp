// The streaming sinks against the collected record: the run JSON byte for byte and the
// expectation results for every scenario in scenarios/, JSONL, the table's auto mode, the summary,
// simulated time, histograms, the scenario-order spill and atomic streamed files.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "scenario/scenario_loader.h"
#include "base/atomic_file.h"
#include "harness/check_runner.h"
#include "engine/engine.h"
#include "verify/expectations.h"
#include "output/histogram.h"
#include "base/formats/json_value.h"
#include "output/progress_line.h"
#include "output/run_json.h"
#include "output/run_json_sink.h"
#include "output/run_summary.h"
#include "output/scenario_order_spill.h"
#include "verify/split_golden.h"
#include "verify/split_golden_checker.h"
#include "output/step_table_sink.h"

using namespace mlasim;

namespace {

Scenario load(const std::string& text) {
  Result<Scenario> r = load_scenario_text(text, "t.yaml");
  if (!r) FAIL(r.error().format());
  return r.value();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string tmp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("mlasim_stream_" + std::to_string(::getpid()) + "_" + name)).string();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

TEST_CASE("streamed run JSON and expectations equal the collected ones for every scenario", "[stream]") {
  Result<std::vector<std::string>> files = collect_scenarios({std::string(MLASIM_SOURCE_DIR) + "/scenarios"});
  REQUIRE(files.ok());
  REQUIRE(files.value().size() >= 30);
  for (const std::string& path : files.value()) {
    INFO(path);
    Result<Scenario> loaded = load_scenario_file(path);
    REQUIRE(loaded.ok());
    const Scenario& s = loaded.value();
    Engine engine(s);
    RunFileSink json(RunFileFormat::kJson);
    RunFileSink jsonl(RunFileFormat::kJsonl);
    ExpectationChecker checker(s);
    const std::string json_path = tmp_path("run.json"), jsonl_path = tmp_path("run.jsonl");
    REQUIRE(json.open(json_path, s.name).ok());
    REQUIRE(jsonl.open(jsonl_path, s.name).ok());
    engine.add_sink(&json);
    engine.add_sink(&jsonl);
    engine.add_sink(&checker);
    const RunRecord record = engine.run();
    REQUIRE(json.commit().ok());
    REQUIRE(jsonl.commit().ok());
    CHECK(read_file(json_path) == run_record_to_json(record));
    std::vector<std::string> streamed, collected;
    for (const auto& f : checker.failures()) streamed.push_back(f.format());
    for (const auto& f : check_expectations(s, record)) collected.push_back(f.format());
    CHECK(streamed == collected);
    // JSONL: the header, one line per step in order, then one per request in scenario order.
    const std::vector<std::string> lines = lines_of(read_file(jsonl_path));
    REQUIRE(lines.size() == 1 + record.steps.size() + record.requests.size());
    for (std::size_t i = 0; i < lines.size(); ++i) {
      Result<JsonValue> v = parse_json(lines[i], jsonl_path);
      REQUIRE(v.ok());
      const std::string type = v.value().find("type")->string();
      if (i == 0) {
        CHECK(type == "header");
        CHECK(v.value().find("scenario")->string() == s.name);
      } else if (i <= record.steps.size()) {
        CHECK(type == "step");
        CHECK(v.value().find("step")->number() == record.steps[i - 1].step);
        CHECK(v.value().find("num_mqa_tokens")->number() == record.steps[i - 1].counts.num_mqa_tokens);
      } else {
        CHECK(type == "request");
        CHECK(v.value().find("id")->string() == record.requests[i - 1 - record.steps.size()].id);
      }
    }
    std::filesystem::remove(json_path);
    std::filesystem::remove(jsonl_path);
  }
}

TEST_CASE("the table in auto mode prints every step of a short run and the summary past 500 steps", "[stream]") {
  const std::string head = "version: 1\nscheduler: {max_num_batched_tokens: 64, max_num_seqs: 4, max_model_len: 1024}\n"
                           "requests:\n  - {id: a, prompt_len: 3, ignore_eos: true, max_tokens: ";
  for (const auto& [max_tokens, truncated] : {std::pair{500, false}, std::pair{501, true}}) {
    Scenario s = load(head + std::to_string(max_tokens) + "}\n");
    std::ostringstream out;
    Engine engine(s);
    RunSummary summary(s);
    StepTablePrinter printer(out, TableMode::kAuto, false, summary);
    engine.add_sink(&summary);
    engine.add_sink(&printer);
    engine.run_to_end();
    const std::vector<std::string> lines = lines_of(out.str());
    int step_lines = 0;
    for (const std::string& l : lines) step_lines += l.rfind("step ", 0) == 0;
    CHECK(step_lines == 500);
    const bool has_marker = out.str().find("the step table stops after 500 steps") != std::string::npos;
    CHECK(has_marker == truncated);
    CHECK((out.str().find("steps; requests:") != std::string::npos) == !truncated);
    CHECK((out.str().find(std::to_string(max_tokens) + " steps, 1 requests finished") != std::string::npos) == truncated);
  }
}

TEST_CASE("the summary counts the run exactly", "[stream]") {
  // Two one-token prompts beside a decode (T = 1): vllm-0.33 sends both fresh prompts down the
  // decode path; the 3-token prompt of step 0 takes the prefill path.
  Scenario s = load(
      "version: 1\nscheduler: {max_num_batched_tokens: 64, max_num_seqs: 4, max_model_len: 64}\n"
      "engine: {reorder_batch_threshold: 1}\n"
      "timing: {fixed_us: 1000, per_scheduled_token_us: 10, per_context_token_us: 0, per_request_us: 0}\n"
      "requests:\n  - {id: a, prompt: [5, 6, 7], max_tokens: 3, ignore_eos: true}\n"
      "  - {id: b, arrival_step: 1, prompt: [9], max_tokens: 2, ignore_eos: true}\n"
      "  - {id: c, arrival_step: 1, prompt: [8], max_tokens: 1, ignore_eos: true}\n");
  Engine engine(s);
  RunSummary summary(s);
  engine.add_sink(&summary);
  const RunRecord record = engine.run();
  CHECK(summary.num_steps() == static_cast<int>(record.steps.size()));
  CHECK(summary.num_steps() == 3);
  CHECK(summary.num_finished() == 3);
  CHECK(summary.num_output_tokens() == 6);
  CHECK(summary.num_fresh_on_decode_path() == 2);
  REQUIRE(summary.fresh_examples().size() == 2);
  CHECK(summary.fresh_examples()[0].step == 1);
  CHECK(summary.fresh_examples()[0].id == "b");
  CHECK(summary.fresh_examples()[1].id == "c");
  CHECK(summary.num_mqa_tokens() == 5);  // step 1: a, b, c; step 2: a, b
  CHECK(summary.num_mha_tokens() == 3);  // step 0: a's prompt
  CHECK(summary.scheduled_tokens().percentile(0.5) == 3);
  CHECK(summary.batch_size().max() == 3);
  CHECK(summary.format_misrouting() == "fresh prefills on the decode path: 2 (step 1 b (q=1), step 1 c (q=1))\n");
  // Simulated time: step 0 = 1000 + 3 x 10 us, step 1 = 1000 + 3 x 10, step 2 = 1000 + 2 x 10.
  CHECK(record.steps[0].time_ns == 0);
  CHECK(record.steps[0].duration_ns == 1'030'000);
  CHECK(record.steps[1].time_ns == 1'030'000);
  CHECK(record.steps[2].time_ns == 2'060'000);
  CHECK(record.steps[2].duration_ns == 1'020'000);
  const RequestRecord& a = record.requests[0];
  CHECK(a.arrival_ns == 0);
  CHECK(a.first_token_ns == 1'030'000);
  CHECK(a.finish_ns == 3'080'000);
  const RequestRecord& c = record.requests[2];
  CHECK(c.arrival_ns == 1'030'000);
  CHECK(c.first_token_ns == 2'060'000);
  CHECK(c.finish_ns == 2'060'000);
  CHECK(summary.ttft().count() == 3);
  CHECK(summary.ttft().min() == 1'030'000);
  CHECK(summary.tpot().count() == 2);  // a and b have two or more outputs
}

TEST_CASE("wall-clock arrivals are admitted by the simulated clock", "[stream]") {
  // Step 0 runs a alone (1000 + 4 x 10 us); b arrives at 1.5 ms, during step 1, so step 2 admits
  // it; c arrives at 10 ms when nothing is alive, so the clock jumps to 10 ms.
  Scenario s = load(
      "version: 1\nscheduler: {max_num_batched_tokens: 64, max_num_seqs: 4, max_model_len: 64}\n"
      "timing: {fixed_us: 1000, per_scheduled_token_us: 10, per_context_token_us: 0, per_request_us: 0}\n"
      "requests:\n  - {id: a, arrival_time: 0, prompt: [5, 6, 7, 8], max_tokens: 3, ignore_eos: true}\n"
      "  - {id: b, arrival_time: 0.0015, prompt: [9], max_tokens: 1, ignore_eos: true}\n"
      "  - {id: c, arrival_time: 0.010, prompt: [3, 4], max_tokens: 1, ignore_eos: true}\n");
  CHECK(s.timed_arrivals);
  const RunRecord record = Engine(s).run();
  REQUIRE(record.steps.size() == 4);
  CHECK(record.steps[1].time_ns == 1'040'000);
  CHECK(record.steps[1].new_reqs.empty());
  CHECK(record.steps[2].time_ns == 2'050'000);
  CHECK(record.steps[2].new_reqs == std::vector<int>{1});  // b
  CHECK(record.steps[3].step == 3);
  CHECK(record.steps[3].time_ns == 10'000'000);
  CHECK(record.steps[3].new_reqs == std::vector<int>{2});  // c
  CHECK(record.requests[1].arrival_ns == 1'500'000);
  CHECK(record.requests[1].first_token_ns == 2'050'000 + 1'020'000);
  // Timed and stepped arrivals do not mix in one scenario.
  Result<Scenario> mixed = load_scenario_text(
      "version: 1\nrequests:\n  - {id: a, arrival_time: 0, prompt: [5]}\n  - {id: b, arrival_step: 2, prompt: [5]}\n",
      "m.yaml");
  REQUIRE_FALSE(mixed.ok());
  CHECK(mixed.error().message == "missing arrival_time");
  CHECK(mixed.error().line == 4);
}

TEST_CASE("histograms give exact counts and bucketed durations", "[stream]") {
  ValueCounts v;
  for (int x : {5, 1, 3, 3, 9, 7, 3, 2, 8, 4}) v.add(x);
  CHECK(v.count() == 10);
  CHECK(v.min() == 1);
  CHECK(v.max() == 9);
  CHECK(v.mean() == Approx(4.5));
  CHECK(v.percentile(0.5) == 3);   // nearest rank 5 of 1 2 3 3 3 4 5 7 8 9
  CHECK(v.percentile(0.9) == 8);   // rank 9
  CHECK(v.percentile(0.99) == 9);  // rank 10
  // Values outside the flat array's range [0, 65536) (negative, large) keep their order.
  ValueCounts wide;
  for (long long x : {70000LL, -5LL, 3LL, 65536LL, 65535LL, -5LL, 1LL << 40}) wide.add(x);
  CHECK(wide.min() == -5);
  CHECK(wide.max() == 1LL << 40);
  CHECK(wide.percentile(0.2) == -5);   // rank 2 of -5 -5 3 65535 65536 70000 2^40
  CHECK(wide.percentile(0.4) == 3);    // rank 3
  CHECK(wide.percentile(0.5) == 65535);  // rank 4
  CHECK(wide.percentile(0.7) == 65536);  // rank 5
  CHECK(wide.percentile(0.8) == 70000);  // rank 6
  CHECK(wide.percentile(1.0) == 1LL << 40);
  LogHistogram h;
  for (int i = 1; i <= 1000; ++i) h.add(static_cast<std::int64_t>(i) * 1'000'000);  // 1..1000 ms
  CHECK(h.count() == 1000);
  CHECK(h.min() == 1'000'000);
  CHECK(h.max() == 1'000'000'000);
  // 128 buckets per power of two: within 1/128 of the exact nearest-rank value.
  CHECK(h.percentile(0.5) == Approx(500e6).epsilon(1.0 / 128));
  CHECK(h.percentile(0.99) == Approx(990e6).epsilon(1.0 / 128));
  LogHistogram small;
  small.add(3);
  small.add(100);
  CHECK(small.percentile(0.5) == 3);  // exact below 128 ns
}

TEST_CASE("the spill gives texts back in scenario order", "[stream]") {
  ScenarioOrderSpill spill;
  spill.add(3, "three");
  spill.add(0, "zero");
  spill.add(5, "five!");
  std::vector<std::string> got;
  spill.for_each([&](std::string_view t) { got.emplace_back(t); });
  CHECK(got == std::vector<std::string>{"zero", "three", "five!"});
}

TEST_CASE("a streamed file appears only on commit", "[stream]") {
  const std::string path = tmp_path("atomic.txt");
  std::ofstream(path) << "old";
  {
    AtomicOutputFile f;
    REQUIRE(f.open(path).ok());
    f.write("partial");
  }  // abandoned: the old file stays, no temporary is left
  CHECK(read_file(path) == "old");
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::path(path).parent_path()))
    CHECK(entry.path().string().rfind(path + ".tmp.", 0) != 0);
  AtomicOutputFile f;
  REQUIRE(f.open(path).ok());
  f.write("new ");
  f.write("text");
  REQUIRE(f.commit().ok());
  CHECK(read_file(path) == "new text");
  std::filesystem::remove(path);
  AtomicOutputFile bad;
  CHECK_FALSE(bad.open("/nonexistent-dir/x.json").ok());
}

TEST_CASE("the progress line stays off when stderr is not a terminal", "[stream]") {
  std::FILE* f = std::tmpfile();
  REQUIRE(f != nullptr);
  ProgressLine off(f, 10);
  CHECK_FALSE(off.enabled());
  ProgressLine forced(f, 10, /*force=*/true);
  CHECK(forced.enabled());
  StepRecord st;
  for (int i = 0; i < 64; ++i) off.on_step(st);
  off.on_end(RunTotals{});
  CHECK(std::ftell(f) == 0);  // nothing written, not even the clearing sequence
  std::fclose(f);
}

TEST_CASE("the streaming split golden check reports what the whole-text comparison reports", "[stream]") {
  Scenario s = load("version: 1\nscheduler: {max_num_batched_tokens: 64, max_num_seqs: 4, max_model_len: 64}\n"
                    "requests:\n  - {id: a, prompt: [5, 6, 7], max_tokens: 3}\n  - {id: b, prompt: [9], max_tokens: 2}\n");
  const RunRecord record = Engine(s).run();
  const std::string good = format_split_golden(s, record, "test");
  const std::vector<std::string> lines = lines_of(good);
  auto join = [](const std::vector<std::string>& v) {
    std::string out;
    for (const auto& l : v) out += l + "\n";
    return out;
  };
  std::vector<std::string> changed = lines, dropped = lines, added = lines, stale = lines, header_only;
  changed[6] += " x";
  dropped.pop_back();
  added.push_back("step 9 | extra");
  for (auto& l : stale)
    if (l.rfind("# fingerprint: ", 0) == 0) l = "# fingerprint: 0000000000000000";
  stale[5] += " y";
  for (const auto& l : lines)
    if (l[0] == '#') header_only.push_back(l);
  const std::string path = tmp_path("split.txt");
  for (const std::string& golden : {good, join(changed), join(dropped), join(added), join(stale), join(header_only)}) {
    std::ofstream(path, std::ios::binary) << golden;
    SplitGoldenChecker checker(path, s);
    checker.on_start(record.names);
    for (const StepRecord& st : record.steps) checker.on_step(st);
    checker.on_end(RunTotals{});
    const GoldenComparison whole = compare_split_golden(path, golden, format_split_golden(s, record, ""));
    INFO(golden);
    CHECK(checker.result().match == whole.match);
    CHECK(checker.result().stale == whole.stale);
    CHECK(checker.result().message == whole.message);
  }
  std::filesystem::remove(path);
}
