// CSV header and row checks shared by the Azure and BurstGPT readers.
#include "tools/import/csv_trace_reader.h"
#include "base/file_read.h"

namespace mlasim {
namespace {

// The format a header line seems to belong to, for the hint of a wrong header ("" if none).
std::string guess_format(std::string_view header) {
  if (!header.empty() && header.front() == '{') return "mooncake";
  if (header.find("ContextTokens") != std::string_view::npos) return "azure";
  if (header.find("Request tokens") != std::string_view::npos) return "burstgpt";
  return "";
}

}  // namespace

CsvTraceReader::CsvTraceReader(std::string path, std::string format, std::vector<std::string> columns)
    : lines_(std::move(path)), format_(std::move(format)), columns_(std::move(columns)) {}

std::string CsvTraceReader::expected_header() const {
  std::string out;
  for (const std::string& c : columns_) out += (out.empty() ? "" : ",") + c;
  return out;
}

Error CsvTraceReader::header_error(int column, std::string key, std::string message, std::string_view header) const {
  std::string hint = format_ + " traces start with the header " + expected_header();
  const std::string guess = guess_format(header);
  if (!guess.empty() && guess != format_) hint += "; this looks like a " + guess + " trace: use mlasim import " + guess;
  return trace_error(path(), line_number(), column, std::move(key), std::move(message), std::move(hint));
}

Status CsvTraceReader::open() {
  if (Status st = lines_.open(); !st) return st;
  std::string_view header;
  do {
    if (!lines_.next(header)) {
      if (!lines_.status()) return lines_.status();
      return trace_error(path(), 0, 0, "", "the trace is empty",
                         format_ + " traces start with the header " + expected_header());
    }
  } while (is_blank(header));
  if (header.front() == '{')
    return header_error(1, "", "wrong header for the " + format_ + " format: the first line is a JSON object", header);
  if (int bad = split_csv_line(header, fields_); bad != 0)
    return header_error(bad, "", "stray double quote in the header", header);
  const std::string_view first = fields_.front().text;
  if (!first.empty() && first.front() >= '0' && first.front() <= '9')
    return header_error(1, "", "missing header: the first line holds data", header);
  index_.assign(columns_.size(), fields_.size());
  std::size_t found = 0;
  for (std::size_t f = 0; f < fields_.size(); ++f) {
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      if (fields_[f].text != columns_[c]) continue;
      if (index_[c] != fields_.size())
        return header_error(fields_[f].column, columns_[c], "column named twice in the header", header);
      index_[c] = f;
      ++found;
    }
  }
  if (found == 0)
    return header_error(1, "", "wrong header for the " + format_ + " format: \"" + excerpt(header) + "\"", header);
  for (std::size_t c = 0; c < columns_.size(); ++c)
    if (index_[c] == fields_.size()) return header_error(1, columns_[c], "missing column in the header", header);
  num_fields_ = fields_.size();
  picked_.assign(columns_.size(), nullptr);
  return Status::Ok();
}

Status CsvTraceReader::next(TraceRecord& rec, bool& done) {
  std::string_view line;
  do {
    if (!lines_.next(line)) {
      if (!lines_.status()) return lines_.status();
      done = true;
      return Status::Ok();
    }
  } while (is_blank(line));
  if (int bad = split_csv_line(line, fields_); bad != 0)
    return trace_error(path(), line_number(), bad, "", "stray double quote",
                       "fields may be wrapped in double quotes but not contain one");
  if (fields_.size() != num_fields_) {
    const int column = fields_.size() < num_fields_ ? static_cast<int>(line.size()) + 1 : fields_[num_fields_].column;
    return trace_error(
        path(), line_number(), column, "",
        "expected " + std::to_string(num_fields_) + " fields as in the header, found " + std::to_string(fields_.size()),
        "each row has one value per header column, separated by commas");
  }
  for (std::size_t c = 0; c < columns_.size(); ++c) picked_[c] = &fields_[index_[c]];
  rec.line = line_number();
  return parse_row(picked_, rec);
}

Error CsvTraceReader::field_error(std::size_t i, const CsvField& field, const FieldProblem& problem) const {
  return trace_error(path(), line_number(), field.column + problem.offset, columns_[i], problem.message, problem.hint);
}

}  // namespace mlasim
