// `mlasim golden update` of one or many scenarios, published as one set.
//
// Each scenario's golden folder (split.txt, logits.npy, logits_index.json, meta.yaml) is written
// whole into a staging folder beside it (`.NAME.new.PID`), ending with a marker file. Only when
// every scenario is staged does commit() write a journal (`.golden-update.PID`, the names) and
// swap each folder in (RENAME_EXCHANGE where the file system has it, else two renames), then drop
// the old folders, the markers and the journal. A failure while staging (a full disk) updates
// nothing; a kill while staging leaves staging folders that the next update or check removes; a
// kill while swapping leaves the journal, which the next update or check completes. Either way
// the goldens are all old or all new once that has run.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "base/status.h"
#include "config/scenario.h"
#include "engine/run_record.h"

namespace mlasim {

class GoldenUpdate {
 public:
  GoldenUpdate(std::string golden_dir, std::string generator);
  GoldenUpdate(const GoldenUpdate&) = delete;
  GoldenUpdate& operator=(const GoldenUpdate&) = delete;
  ~GoldenUpdate();  // removes what was staged and not committed

  // Writes the golden folder of the scenario's reference replay (`record`: fp64, TP 1, every token
  // on the prefill path; harness/golden_stage.h) into staging. A write error is an output error.
  Status stage(const Scenario& scenario, const RunRecord& record);
  // Swaps every staged folder into place; returns the folders, in staging order.
  Result<std::vector<std::string>> commit();

 private:
  std::filesystem::path golden_dir_;
  std::string generator_;
  std::vector<std::string> names_;
  std::vector<std::filesystem::path> staged_;
};

// Before an update or a check of `golden_dir`: completes the swap of an update killed while
// swapping (its journal), removes the staging folders and old folders of updates no longer
// running, and puts an old golden moved aside back when its folder is missing. One line per
// action, for a note on stderr.
std::vector<std::string> recover_golden_leftovers(const std::filesystem::path& golden_dir);

}  // namespace mlasim
