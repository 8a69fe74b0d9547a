// Splitting one CSV line into fields, without copying: each field is a view into the line plus
// the 1-based column where it starts, for error messages.
#pragma once

#include <string_view>
#include <vector>

namespace mlasim {

struct CsvField {
  std::string_view text;  // without surrounding spaces or double quotes
  int column = 0;         // 1-based byte column of the text's first character in the line
};

// Splits `line` at commas into `fields` (cleared first, reused to avoid allocation). Spaces around
// a field are dropped; a field may be wrapped in double quotes (a comma inside is kept) but may not
// contain one. Returns 0, or the 1-based column of a stray or unterminated double quote.
int split_csv_line(std::string_view line, std::vector<CsvField>& fields);

}  // namespace mlasim
