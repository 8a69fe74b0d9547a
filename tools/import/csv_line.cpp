// The CSV splitter: commas, optional double quotes around a field, no embedded newlines.
#include "tools/import/csv_line.h"

namespace mlasim {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t'; }

}  // namespace

int split_csv_line(std::string_view line, std::vector<CsvField>& fields) {
  fields.clear();
  std::size_t pos = 0;
  for (;;) {
    while (pos < line.size() && is_space(line[pos])) ++pos;
    CsvField f;
    std::size_t end;  // where the field's text ends
    if (pos < line.size() && line[pos] == '"') {
      const std::size_t close = line.find('"', pos + 1);
      if (close == std::string_view::npos) return static_cast<int>(pos) + 1;
      f.text = line.substr(pos + 1, close - pos - 1);
      f.column = static_cast<int>(pos) + 2;
      end = close + 1;
      while (end < line.size() && is_space(line[end])) ++end;
      if (end < line.size() && line[end] != ',') return static_cast<int>(close) + 1;
    } else {
      end = line.find(',', pos);
      if (end == std::string_view::npos) end = line.size();
      std::size_t last = end;
      while (last > pos && is_space(line[last - 1])) --last;
      f.text = line.substr(pos, last - pos);
      f.column = static_cast<int>(pos) + 1;
      const std::size_t quote = f.text.find('"');
      if (quote != std::string_view::npos) return static_cast<int>(pos + quote) + 1;
    }
    fields.push_back(f);
    if (end >= line.size()) return 0;
    pos = end + 1;  // past the comma
  }
}

}  // namespace mlasim
