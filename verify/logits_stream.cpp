// Streaming logits: the golden check, the files and the sink that feeds them.
#include "verify/logits_stream.h"

#include <fmt/format.h>

#include "verify/logits_golden_gate.h"

namespace mlasim {
namespace {

std::string row_label(const LogitsIndexRow& r) { return logits_row_label(r.step, r.id, r.position); }

}  // namespace

LogitsGoldenCheck::LogitsGoldenCheck(const LogitsFiles& golden, const LogitsTolerance& tol, std::string golden_dir)
    : golden_(golden), tol_(tol), dir_(std::move(golden_dir)), comparer_(golden.cols, tol) {}

void LogitsGoldenCheck::add(const LogitsRecord& rows, const RequestNames& names) {
  const std::size_t vocab = static_cast<std::size_t>(rows.vocab_size);
  if (!rows.index.empty() && static_cast<long>(vocab) != golden_.cols) vocab_differs_ = true;
  for (std::size_t k = 0; k < rows.index.size(); ++k) {
    const std::size_t i = rows_++;
    values_ += vocab;
    if (index_difference_) continue;
    const LogitsRow& got = rows.index[k];
    const std::string& id = names[got.index];
    if (i >= golden_.index.size() || golden_.index[i].step != got.step || golden_.index[i].id != id ||
        golden_.index[i].position != got.position) {
      index_difference_ =
          fmt::format("{}/logits_index.json: logits row {} differs: expected {}, got {}", dir_, i,
                      i < golden_.index.size() ? row_label(golden_.index[i]) : std::string("(no more rows)"),
                      logits_row_label(got.step, id, got.position));
      continue;
    }
    if (vocab_differs_) continue;
    row_.resize(vocab);
    for (std::size_t j = 0; j < vocab; ++j)
      row_[j] = rows.values_f64.empty() ? static_cast<double>(rows.values[k * vocab + j]) : rows.values_f64[k * vocab + j];
    comparer_.add_row(row_.data(), golden_.values.data() + i * vocab);
  }
}

LogitsCheck LogitsGoldenCheck::finish() const {
  LogitsCheck c;
  if (!index_difference_ && rows_ < golden_.index.size()) {
    c.pass = false;
    c.message = fmt::format("{}/logits_index.json: logits row {} differs: expected {}, got (no more rows)", dir_, rows_,
                            row_label(golden_.index[rows_]));
    return c;
  }
  if (index_difference_) {
    c.pass = false;
    c.message = *index_difference_;
    return c;
  }
  LogitsComparison cmp;
  if (vocab_differs_) {
    cmp.rows = golden_.rows;
    cmp.cols = golden_.cols;
    cmp.pass = false;
    cmp.shape_error = fmt::format("{} values against a golden of {} ({} rows x {} columns expected)", values_,
                                  golden_.values.size(), golden_.rows, golden_.cols);
  } else {
    cmp = comparer_.result();
  }
  std::vector<std::string> labels;
  for (const LogitsIndexRow& r : golden_.index) labels.push_back(row_label(r));
  c.pass = cmp.pass;
  c.message = cmp.summary(tol_, labels);
  c.compared = true;
  c.comparison = cmp;
  c.tolerance = tol_;
  auto at = [&](long row, long col) {
    return row >= 0 && row < static_cast<long>(labels.size())
               ? fmt::format("{} token {}", labels[static_cast<std::size_t>(row)], col)
               : std::string();
  };
  c.max_abs_at = at(cmp.max_abs_row, cmp.max_abs_col);
  c.max_rel_at = at(cmp.max_rel_row, cmp.max_rel_col);
  if (cmp.first_top1_mismatch_row >= 0 && cmp.first_top1_mismatch_row < static_cast<long>(labels.size()))
    c.first_top1_mismatch_at = labels[static_cast<std::size_t>(cmp.first_top1_mismatch_row)];
  return c;
}

void LogitsStreamSink::on_logits(const LogitsRecord& rows) {
  rows_ += static_cast<long>(rows.index.size());
  vocab_size_ = rows.vocab_size;
  if (golden_) golden_->add(rows, names());
  if (files_) files_->add(rows, names());
}

}  // namespace mlasim
