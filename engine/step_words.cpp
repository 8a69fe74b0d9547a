// A step record's reasons, worded from its codes by attention/route_explain's words.
#include "engine/step_words.h"

#include "base/check.h"

namespace mlasim {

std::string split_reason(const StepRecord& step) {
  std::string out;
  word_batch_reason(out, step.wording);
  return out;
}

void append_row_reason(std::string& out, const StepRecord& step, std::size_t pos) {
  MLASIM_CHECK(pos < step.rows.size(), "row_reason of a row the step does not have");
  const RowRecord& r = step.rows[pos];
  word_row_reason(out, step.wording, {r.q, r.nct, r.prompt_len, r.region, r.is_decode, r.path}, static_cast<int>(pos));
}

std::string row_reason(const StepRecord& step, std::size_t pos) {
  std::string out;
  append_row_reason(out, step, pos);
  return out;
}

}  // namespace mlasim
