// Parsing the numbers of a trace field exactly (std::from_chars, no locale): token counts,
// decimal seconds and integer milliseconds, the times as integer nanoseconds up to 8e18.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace mlasim {

// Why a field did not parse: the message, a hint, and the 0-based offset of the offending
// character within the field (added to the field's column in the Error).
struct FieldProblem {
  std::string message;
  std::string hint;
  int offset = 0;
};

// A token count: a whole number 0..2^30 ("12"; not "-1", "1.0", "+1", "" or 2^31).
std::optional<FieldProblem> parse_count(std::string_view text, long long& out);
// A non-negative decimal number of seconds ("45", "12.250", up to 9 fractional digits) as ns.
std::optional<FieldProblem> parse_decimal_seconds(std::string_view text, long long& out_ns);
// A non-negative whole number of milliseconds as ns.
std::optional<FieldProblem> parse_milliseconds(std::string_view text, long long& out_ns);

}  // namespace mlasim
