// Number fields: digits only, range-checked, with a message naming what was found.
#include "tools/import/field_parse.h"
#include "base/file_read.h"

#include <charconv>

namespace mlasim {
namespace {

// Times stay at most 8e18 ns (253 years), so differences of two and their rounding never overflow.
constexpr long long kMaxTimeNs = 8'000'000'000'000'000'000LL;
// A request's max_tokens at most (scenario/request_reader.cpp).
constexpr long long kMaxTokenCount = 1LL << 30;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string quoted(std::string_view s) { return "\"" + excerpt(s, 40) + "\""; }
// A number as found, for a message: whole up to 40 characters, else its start and its length.
std::string shown(std::string_view s) { return excerpt(s, 40); }

// Parses all of `digits` (known to be only digits) into `out`; false on overflow.
bool parse_digits(std::string_view digits, long long& out) {
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
  return ec == std::errc() && ptr == digits.data() + digits.size();
}

std::size_t count_digits(std::string_view s, std::size_t from) {
  std::size_t i = from;
  while (i < s.size() && is_digit(s[i])) ++i;
  return i - from;
}

// A whole number >= 0 named `what` ("count", "timestamp"); common to counts and milliseconds.
std::optional<FieldProblem> parse_whole(std::string_view text, long long& out, const char* what, const char* unit) {
  if (text.empty())
    return FieldProblem{std::string("empty ") + what, std::string("expected a whole number of ") + unit, 0};
  if (text[0] == '-' && text.size() > 1 && count_digits(text, 1) == text.size() - 1)
    return FieldProblem{std::string("negative ") + what + " " + shown(text),
                        std::string(what) + "s are whole numbers >= 0", 0};
  const std::size_t n = count_digits(text, 0);
  if (n != text.size())
    return FieldProblem{"expected a whole number of " + std::string(unit) + ", found " + quoted(text),
                        "use digits only, e.g. 512", static_cast<int>(n)};
  if (!parse_digits(text, out))
    return FieldProblem{std::string(what) + " " + shown(text) + " is too large", "", 0};
  return std::nullopt;
}

}  // namespace

std::optional<FieldProblem> parse_count(std::string_view text, long long& out) {
  if (auto p = parse_whole(text, out, "count", "tokens")) return p;
  // What a request file may hold (scenario/request_reader.cpp: max_tokens <= 2^30; prompt_len
  // below max_model_len <= 2^24), so `run` takes every request `import` writes.
  if (out > kMaxTokenCount)
    return FieldProblem{"count " + shown(text) + " is more tokens than a request can have (at most " +
                            std::to_string(kMaxTokenCount) + ")",
                        "is this the right column? token counts of real requests are far smaller", 0};
  return std::nullopt;
}

std::optional<FieldProblem> parse_milliseconds(std::string_view text, long long& out_ns) {
  long long ms = 0;
  if (auto p = parse_whole(text, ms, "timestamp", "milliseconds")) return p;
  if (ms > kMaxTimeNs / 1'000'000) return FieldProblem{"timestamp " + shown(text) + " ms is too large", "", 0};
  out_ns = ms * 1'000'000;
  return std::nullopt;
}

std::optional<FieldProblem> parse_decimal_seconds(std::string_view text, long long& out_ns) {
  const char* hint = "expected seconds as digits with an optional fraction, e.g. 45 or 12.250";
  if (text.empty()) return FieldProblem{"empty timestamp", hint, 0};
  if (text[0] == '-') return FieldProblem{"negative timestamp " + shown(text), "timestamps are seconds >= 0", 0};
  const std::size_t whole = count_digits(text, 0);
  if (whole == 0) return FieldProblem{"expected a number of seconds, found " + quoted(text), hint, 0};
  long long frac_ns = 0;
  if (whole < text.size()) {
    if (text[whole] != '.')
      return FieldProblem{"expected a number of seconds, found " + quoted(text), hint, static_cast<int>(whole)};
    const std::size_t frac = count_digits(text, whole + 1);
    if (frac == 0 || whole + 1 + frac != text.size())
      return FieldProblem{"expected a number of seconds, found " + quoted(text), hint,
                          static_cast<int>(whole + 1 + frac)};
    if (frac > 9)
      return FieldProblem{"more than 9 fractional digits in " + quoted(text), "nanoseconds are the finest resolution",
                          static_cast<int>(whole + 10)};
    parse_digits(text.substr(whole + 1, frac), frac_ns);
    for (std::size_t i = frac; i < 9; ++i) frac_ns *= 10;
  }
  long long secs = 0;
  if (!parse_digits(text.substr(0, whole), secs) || secs > (kMaxTimeNs - frac_ns) / 1'000'000'000)
    return FieldProblem{"timestamp " + shown(text) + " s is too large", "", 0};
  out_ns = secs * 1'000'000'000 + frac_ns;
  return std::nullopt;
}

}  // namespace mlasim
