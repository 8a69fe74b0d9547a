// The reference replay of one golden.
#include "harness/golden_stage.h"

#include <iostream>

#include "engine/replay.h"
#include "harness/command_rows.h"
#include "harness/replay_session.h"
#include "scenario/scenario_loader.h"

namespace mlasim {

Status stage_golden(GoldenUpdate& update, const std::string& scenario_path) {
  Result<Scenario> loaded = load_scenario_file(scenario_path);
  if (!loaded) return loaded.error();
  const Scenario& s = loaded.value();
  if (Status st = model_memory_check(s, CpuPrecision::kDouble); !st) return st;
  ReplaySession session(s, record_rows(), std::cout);
  if (Status st = session.start(golden_replay_options()); !st) return st;
  session.run(/*finish_at_vllm_stop=*/false);
  return update.stage(s, session.take_record());
}

}  // namespace mlasim
