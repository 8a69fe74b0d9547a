// The logits golden check shared by `run` and `check`.
#include "verify/logits_golden_gate.h"

namespace mlasim {

Status LogitsGoldenGate::open(const std::string& golden_dir, const Scenario& scenario) {
  Result<LogitsGoldenLookup> found = find_logits_golden(golden_dir, scenario);
  if (!found) return found.error();
  lookup_ = std::move(found.value());
  return Status::Ok();
}

void LogitsGoldenGate::start(PrecisionClass precision) {
  if (lookup_.found && lookup_.golden.stale.empty())
    check_.emplace(lookup_.golden.files, logits_tolerance(precision), lookup_.dir);
}

void LogitsGoldenGate::add(const LogitsRecord& rows, const RequestNames& names) {
  if (check_) check_->add(rows, names);
}

LogitsGoldenVerdict LogitsGoldenGate::finish() const {
  LogitsGoldenVerdict v;
  v.dir = lookup_.dir;
  v.found = lookup_.found;
  if (lookup_.found) v.stale = lookup_.golden.stale;
  if (check_) v.check = check_->finish();
  return v;
}

}  // namespace mlasim
