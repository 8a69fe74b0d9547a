// The output registry: one row per output in OutputRow's order, the rows `run` and `check` ask
// for, and a session writing exactly the files its request names, published as one set.
#include <catch2/catch.hpp>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "harness/command_rows.h"
#include "harness/replay_session.h"
#include "scenario/scenario_loader.h"
#include "tests/file_test_util.h"

using namespace mlasim;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> asked_names(const SessionRequest& r) {
  std::vector<std::string> names;
  for (const OutputRowInfo& info : output_rows())
    if (r.asks(info.row)) names.push_back(info.name);
  return names;
}

Scenario seed_scenario() {
  Result<Scenario> s = load_scenario_file(MLASIM_SOURCE_DIR "/scenarios/seed/lone_one_token_prompt.yaml");
  REQUIRE(s.ok());
  return s.value();
}

ReplayOptions dry_run() {
  ReplayOptions o;
  o.with_model = false;
  return o;
}

}  // namespace

TEST_CASE("the output registry has one row per output, in order, each file row with its flag", "[replay_session]") {
  const std::vector<OutputRowInfo>& rows = output_rows();
  REQUIRE(rows.size() == static_cast<std::size_t>(OutputRow::kRecord) + 1);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    CHECK(rows[i].row == static_cast<OutputRow>(i));
    CHECK(&output_row(rows[i].row) == &rows[i]);
    const bool writes = rows[i].publication == Publication::kSet || rows[i].publication == Publication::kFolder;
    if (writes) CHECK(std::string(rows[i].flag).rfind("--", 0) == 0);
  }
  CHECK(std::string(output_row(OutputRow::kJson).flag) == "--json");
  CHECK(std::string(output_row(OutputRow::kLogitsFiles).flag) == "--logits-dir");
  CHECK(output_row(OutputRow::kLogitsFiles).publication == Publication::kFolder);
  CHECK(output_row(OutputRow::kTimeline).publication == Publication::kMemory);
}

TEST_CASE("run and check ask the registry for different rows", "[replay_session]") {
  RunOutputOptions plain;
  CHECK(asked_names(run_rows(plain)) == std::vector<std::string>{"step_table", "expectations", "progress", "logits_golden"});
  RunOutputOptions files;
  files.json_path = "a.json";
  files.svg_path = "a.svg";
  files.logits_dir = "logits";
  const SessionRequest run = run_rows(files);
  CHECK(asked_names(run) == std::vector<std::string>{"step_table", "expectations", "progress", "logits_golden",
                                                      "logits_files", "json", "svg"});
  CHECK(run.files() == std::vector<std::string>{"a.json", "a.svg", "logits/logits.npy", "logits/logits_index.json"});
  CHECK(asked_names(check_rows("golden", false, false)) == std::vector<std::string>{"expectations", "split_golden"});
  const SessionRequest check = check_rows("g", true, true);
  CHECK(asked_names(check) == std::vector<std::string>{"expectations", "split_golden", "logits_golden_check", "timeline"});
  CHECK(check.path(OutputRow::kSplitGolden) == "g");
  CHECK(check.files().empty());
  CHECK(asked_names(record_rows()) == std::vector<std::string>{"record"});
  CHECK(asked_names(fuzz_rows("")).empty());
}

TEST_CASE("a session writes exactly the files its request names", "[replay_session]") {
  const Scenario s = seed_scenario();
  const fs::path dir = test::fresh_dir("mlasim_replay_session");
  SessionRequest request;
  request.ask(OutputRow::kExpectations).ask_file(OutputRow::kJson, (dir / "run.json").string());
  request.ask_file(OutputRow::kSvg, (dir / "run.svg").string()).ask_file(OutputRow::kJsonl, "");
  std::ostringstream out;
  ReplaySession session(s, request, out);
  REQUIRE(session.start(dry_run()).ok());
  CHECK(test::entries(dir).size() == 1);  // the JSON's temporary, beside its target; the SVG comes at the end
  CHECK_FALSE(session.run(/*finish_at_vllm_stop=*/false));
  REQUIRE(session.publish().ok());
  CHECK(test::entries(dir) == std::vector<std::string>{"run.json", "run.svg"});
  CHECK(test::read_all(dir / "run.json").find("\"steps\"") != std::string::npos);
  CHECK(out.str().empty());  // neither the table nor the verdicts were asked for
  fs::remove_all(dir);
}

TEST_CASE("a session with no file rows writes nothing and keeps what it was asked for", "[replay_session]") {
  const Scenario s = seed_scenario();
  const fs::path dir = test::fresh_dir("mlasim_replay_session_none");
  std::ostringstream out;
  ReplaySession session(s, record_rows(), out);
  REQUIRE(session.start(dry_run()).ok());
  session.run(/*finish_at_vllm_stop=*/false);
  REQUIRE(session.publish().ok());
  CHECK(session.take_record().steps.size() > 0);
  CHECK(test::entries(dir).empty());
  CHECK(out.str().empty());
  fs::remove_all(dir);
}
