// A step record's routing reasons in words, worded when a writer asks from the codes the record
// keeps (RowRecord's region, verdict and path; StepRecord::wording): the step loop words nothing.
#pragma once

#include <cstddef>
#include <string>

#include "engine/run_record.h"

namespace mlasim {

// The split's rule or SGLang's dispatch, and the notes (the run JSON's split_reason).
std::string split_reason(const StepRecord& step);
// The reason of the row step.rows[pos], ending " -> " and its path; appended to `out`.
void append_row_reason(std::string& out, const StepRecord& step, std::size_t pos);
std::string row_reason(const StepRecord& step, std::size_t pos);

}  // namespace mlasim
