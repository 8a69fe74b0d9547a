// An engine built in a dropped engine's storage (Engine's donor, as fuzz hands each thread's last
// engine on) replays exactly as one built afresh: every step's record and every finished request,
// in JSON, equal. The donors come from other configurations (every fuzz knob varied, then every
// scenario of the repository: KV cache groups, linear attention, SGLang, sparse MLA), some
// dropped in the middle of their run with requests alive.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "base/formats/json_writer.h"
#include "engine/engine.h"
#include "output/run_json.h"
#include "scenario/scenario_loader.h"
#include "tests/fuzz/fuzz_test_util.h"

namespace mlasim {
namespace {

// Every step and finished request as JSON, the rows' reasons worded from the records.
class JsonTrail : public StepSink {
 public:
  void on_step(const StepRecord& step) override {
    JsonWriter w;
    w.begin_object();
    write_step_fields(w, step, names());
    w.end_object();
    text += w.str();
    text += '\n';
  }
  void on_request_finished(const RequestRecord& request) override {
    JsonWriter w;
    w.begin_object();
    write_request_fields(w, request);
    w.end_object();
    text += w.str();
    text += '\n';
  }
  std::string text;
};

// The replay of `s` to its end (or vLLM's stop), in JSON; `donor` lends its storage and is dropped.
// With `stop_after` >= 0 the engine is kept (in `keep`) after that many steps, its run unfinished.
std::string replay(const Scenario& s, bool audit_every_step, std::unique_ptr<Engine>& donor, std::unique_ptr<Engine>* keep,
                   int stop_after = -1) {
  EngineOptions options;
  options.audit_every_step = audit_every_step;  // fuzz's dry run; else the sampled audit of `run`
  auto engine = std::make_unique<Engine>(s, options, donor.get());
  donor.reset();
  JsonTrail trail;
  engine->add_sink(&trail);
  try {
    for (int n = 0; !engine->done() && n != stop_after; ++n) engine->step();
  } catch (const VllmCannotRun& e) {
    trail.text += "stopped: " + std::string(e.what()) + "\n";
  }
  if (keep) *keep = std::move(engine);
  return trail.text;
}

std::vector<Scenario> repository_scenarios() {
  std::vector<std::string> paths;
  for (const auto& e : std::filesystem::recursive_directory_iterator(std::string(MLASIM_SOURCE_DIR) + "/scenarios"))
    if (e.path().extension() == ".yaml") paths.push_back(e.path().string());
  std::sort(paths.begin(), paths.end());
  std::vector<Scenario> out;
  for (const std::string& p : paths) {
    Result<Scenario> s = load_scenario_file(p);
    if (s.ok() && s.value().requests_file.empty()) out.push_back(s.value());
  }
  return out;
}

TEST_CASE("an engine in a dropped engine's storage replays as a fresh one", "[engine][fuzz]") {
  std::vector<Scenario> traces;
  const TraceDistribution d = test::fuzz_distribution({}, kAllKnobs);
  for (int run = 0; run < 240; ++run) traces.push_back(generate_trace(d, 29, run));
  const std::vector<Scenario> scenarios = repository_scenarios();
  REQUIRE(scenarios.size() >= 40);
  traces.insert(traces.end(), scenarios.begin(), scenarios.end());
  for (const bool audit_every_step : {true, false}) {
    std::unique_ptr<Engine> chain;  // the last engine, handed on
    int compared = 0, stopped_donors = 0;
    for (std::size_t i = 0; i < traces.size(); ++i) {
      const Scenario& s = traces[i];
      INFO(s.name << (audit_every_step ? " audited every step" : ""));
      std::unique_ptr<Engine> none;
      const std::string fresh = replay(s, audit_every_step, none, nullptr);
      REQUIRE(!fresh.empty());
      // Every third donor is left after two steps, its requests alive and its blocks held.
      const bool cut = i % 3 == 2;
      if (cut) {
        replay(s, audit_every_step, chain, &chain, 2);
        ++stopped_donors;
        const std::string again = replay(s, audit_every_step, chain, &chain);
        CHECK(again == fresh);
      } else {
        CHECK(replay(s, audit_every_step, chain, &chain) == fresh);
      }
      ++compared;
    }
    CHECK(compared == static_cast<int>(traces.size()));
    CHECK(stopped_donors == static_cast<int>(traces.size() / 3));
  }
}

}  // namespace
}  // namespace mlasim
