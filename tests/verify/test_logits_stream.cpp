// Streaming logits: the files written step by step are the bytes of the whole record written at
// once (with the npy written independently here), and the golden check fed step by step says what
// the whole-record check says, index differences included; the gate `run` and `check` share
// gives their verdicts.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "engine/replay.h"
#include "verify/logits_golden_gate.h"
#include "verify/logits_stream.h"
#include "base/formats/npy.h"
#include "scenario/scenario_loader.h"

using namespace mlasim;
namespace fs = std::filesystem;

namespace {

// The two requests the rows name: 0 is "a", 1 is "b\"q".
RequestNames names() {
  RequestNames n;
  n.add(0, "a");
  n.add(1, "b\"q");
  return n;
}

// The golden's index rows of a record: its rows with the requests' ids.
std::vector<LogitsIndexRow> index_rows(const LogitsRecord& r, const RequestNames& names) {
  std::vector<LogitsIndexRow> out;
  for (const LogitsRow& row : r.index) out.push_back({row.step, names[row.index], row.position});
  return out;
}

// Three steps: 2, 0 and 3 rows of a 5-token vocabulary.
std::vector<LogitsRecord> steps() {
  std::vector<LogitsRecord> out;
  int value = 0;
  for (int n : {2, 0, 3}) {
    LogitsRecord r;
    r.vocab_size = 5;
    for (int i = 0; i < n; ++i) {
      r.index.push_back({static_cast<int>(out.size()), i == 0 ? 0 : 1, 10 + i});
      for (int j = 0; j < 5; ++j) r.values.push_back(0.25f * static_cast<float>(value++ % 17) - 1.0f);
    }
    out.push_back(r);
  }
  return out;
}

LogitsRecord whole(const std::vector<LogitsRecord>& parts) {
  LogitsRecord all;
  all.vocab_size = 5;
  for (const LogitsRecord& p : parts) {
    all.index.insert(all.index.end(), p.index.begin(), p.index.end());
    all.values.insert(all.values.end(), p.values.begin(), p.values.end());
  }
  return all;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("mlasim_test_logits_stream_" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST_CASE("logits files written step by step equal the whole record's bytes", "[logits][stream]") {
  const std::vector<LogitsRecord> parts = steps();
  const RequestNames ids = names();
  const fs::path streamed = fresh_dir("streamed"), at_once = fresh_dir("at_once");
  LogitsFilesStream files;
  REQUIRE(files.open(streamed.string(), 5));
  for (const LogitsRecord& p : parts) files.add(p, ids);
  REQUIRE(files.finish());
  CHECK_FALSE(fs::exists(streamed / "logits.npy"));  // nothing in place before publish()
  REQUIRE(files.publish());
  const LogitsRecord all = whole(parts);
  REQUIRE(write_logits_files(at_once.string(), all, ids));
  CHECK(slurp(streamed / "logits.npy") == npy_float32_bytes(5, 5, all.values));
  CHECK(slurp(streamed / "logits.npy") == slurp(at_once / "logits.npy"));
  CHECK(slurp(streamed / "logits_index.json") == slurp(at_once / "logits_index.json"));
  Result<LogitsFiles> back = read_logits_files(streamed.string());  // the fingerprint binds the pair
  REQUIRE(back);
  CHECK(back.value().rows == 5);
  CHECK(back.value().index[4].id == "b\"q");
  CHECK(back.value().values[24] == static_cast<double>(all.values[24]));
  fs::remove_all(streamed);
  fs::remove_all(at_once);
}

TEST_CASE("the golden check fed step by step gives the whole record's verdict", "[logits][stream]") {
  const std::vector<LogitsRecord> parts = steps();
  const LogitsRecord all = whole(parts);
  const RequestNames ids = names();
  LogitsFiles golden;
  golden.index = index_rows(all, ids);
  golden.rows = 5;
  golden.cols = 5;
  golden.values.assign(all.values.begin(), all.values.end());
  golden.values[13] += 0.5;  // row 2 (step 2, "a"), token 3
  const LogitsTolerance tol = logits_tolerance(PrecisionClass::kFp32);
  auto streamed = [&](const std::vector<LogitsRecord>& ps) {
    LogitsGoldenCheck check(golden, tol, "g");
    for (const LogitsRecord& p : ps) check.add(p, ids);
    return check.finish();
  };
  const LogitsCheck once = check_logits_against(golden, all, ids, tol, "g"), stepwise = streamed(parts);
  CHECK_FALSE(stepwise.pass);
  CHECK(stepwise.message == once.message);
  CHECK(stepwise.max_abs_at == "step 2 a position 10 token 3");
  CHECK(stepwise.comparison.num_failing == 1);

  // A run that stops a row short names the missing row; one that differs names the row.
  std::vector<LogitsRecord> short_run = parts;
  short_run.back().index.pop_back();
  short_run.back().values.resize(10);
  CHECK(streamed(short_run).message ==
        "g/logits_index.json: logits row 4 differs: expected step 2 b\"q position 12, got (no more rows)");
  std::vector<LogitsRecord> moved = parts;
  moved[0].index[1].position = 12;
  CHECK(streamed(moved).message ==
        "g/logits_index.json: logits row 1 differs: expected step 0 b\"q position 11, got step 0 b\"q position 12");
}

namespace {

// The seed scenario replayed on the CPU (float) with its rows streamed into `gate`, which learns
// the backend's class from the replay.
void replay_into(LogitsGoldenGate& gate, const Scenario& s, FaultSet faults = {}) {
  LogitsStreamSink sink(&gate, nullptr);
  ReplayOptions options;
  options.faults = faults;
  options.on_backend = [&](PrecisionClass p) { gate.start(p); };
  REQUIRE(replay(s, options, {&sink}) == PrecisionClass::kFp32);
  CHECK(sink.rows() == 3);
}

}  // namespace

TEST_CASE("the logits golden gate: no golden, a stale one, a pass and a fault, as run and check see them",
          "[logits][stream]") {
  const std::string root = MLASIM_SOURCE_DIR;
  Result<Scenario> loaded = load_scenario_file(root + "/scenarios/seed/lone_one_token_prompt.yaml");
  REQUIRE(loaded.ok());
  const Scenario& s = loaded.value();
  const fs::path golden = fresh_dir("gate");
  fs::copy(root + "/golden/" + s.name, golden / s.name);

  LogitsGoldenGate none;
  REQUIRE(none.open((golden / "nowhere").string(), s));
  replay_into(none, s);
  LogitsGoldenVerdict v = none.finish();
  CHECK_FALSE(v.found);
  CHECK_FALSE(v.check);
  CHECK(v.pass());  // run prints nothing; check reports the missing golden itself

  LogitsGoldenGate good;
  REQUIRE(good.open(golden.string(), s));
  replay_into(good, s);
  v = good.finish();
  REQUIRE(v.check);
  INFO(v.check->message);
  CHECK(v.pass());
  CHECK(v.check->comparison.rows == 3);  // the golden's 3 rows (steps 0, 1, 2 of "hello")
  CHECK(v.check->tolerance.name == "fp32");

  // The decode path's softmax scale 1/sqrt(576): step 0 already runs on the decode path.
  LogitsGoldenGate faulty;
  REQUIRE(faulty.open(golden.string(), s));
  replay_into(faulty, s, {Fault::kDecodeScale1OverSqrt576});
  v = faulty.finish();
  REQUIRE(v.check);
  CHECK_FALSE(v.pass());
  CHECK(v.check->first_top1_mismatch_at == "step 1 hello position 1");

  // A golden written for another model is stale: nothing compared, and the run fails.
  const fs::path meta = golden / s.name / "meta.yaml";
  std::string text = slurp(meta);
  const std::size_t at = text.find("model_hash: ");
  REQUIRE(at != std::string::npos);
  text.replace(at, text.find('\n', at) - at, "model_hash: deadbeef");
  std::ofstream(meta, std::ios::binary) << text;
  LogitsGoldenGate stale;
  REQUIRE(stale.open(golden.string(), s));
  replay_into(stale, s);
  v = stale.finish();
  CHECK(v.found);
  CHECK_FALSE(v.check);
  CHECK(v.stale.find("model_hash deadbeef") != std::string::npos);
  CHECK_FALSE(v.pass());

  // A golden that cannot be read is bad input naming the file.
  std::ofstream(golden / s.name / "logits_index.json", std::ios::binary) << "garbage\n";
  LogitsGoldenGate bad;
  const Status st = bad.open(golden.string(), s);
  REQUIRE_FALSE(st);
  CHECK(st.error().format().find("logits_index.json:1:1: error: invalid JSON") != std::string::npos);
  fs::remove_all(golden);
}
