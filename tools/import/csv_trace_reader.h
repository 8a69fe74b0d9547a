// The part of the CSV trace readers that Azure and BurstGPT share: the header (columns found by
// name), the field count of every row, and turning a field's problem into a located Error.
#pragma once

#include <string>
#include <vector>

#include "tools/import/csv_line.h"
#include "tools/import/field_parse.h"
#include "base/line_reader.h"
#include "tools/import/trace_reader.h"

namespace mlasim {

class CsvTraceReader : public TraceReader {
 public:
  // `columns`: the names the header must have, in the order parse_row() receives their fields;
  // `format` names the format in messages. Other columns are allowed and ignored.
  CsvTraceReader(std::string path, std::string format, std::vector<std::string> columns);
  Status open() override;
  Status next(TraceRecord& rec, bool& done) override;

 protected:
  // Fills `rec` from the row's fields, `fields[i]` being the column named `columns[i]`.
  virtual Status parse_row(const std::vector<const CsvField*>& fields, TraceRecord& rec) = 0;
  // The Error for `problem` in the field of column `i` on the current line.
  Error field_error(std::size_t i, const CsvField& field, const FieldProblem& problem) const;
  const std::string& path() const { return lines_.path(); }
  int line_number() const { return lines_.line_number(); }

 private:
  std::string expected_header() const;
  Error header_error(int column, std::string key, std::string message, std::string_view header) const;

  LineReader lines_;
  std::string format_;
  std::vector<std::string> columns_;
  std::vector<std::size_t> index_;  // index_[i]: position of columns_[i] in the header
  std::size_t num_fields_ = 0;      // fields per row, as in the header
  std::vector<CsvField> fields_;
  std::vector<const CsvField*> picked_;
};

}  // namespace mlasim
