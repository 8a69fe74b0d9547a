// Calendar arithmetic after H. Hinnant's days_from_civil: eras of 400 years, March-based years.
#include "tools/import/civil_time.h"

namespace mlasim {
namespace {

bool is_leap(long long y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

unsigned days_in_month(long long y, unsigned m) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : kDays[m - 1];
}

// Reads exactly `n` digits at `pos` into `out`; false when any is missing.
bool digits_at(std::string_view s, std::size_t pos, std::size_t n, unsigned& out) {
  if (pos + n > s.size()) return false;
  out = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    out = out * 10 + static_cast<unsigned>(s[i] - '0');
  }
  return true;
}

FieldProblem bad(std::string_view text, std::size_t offset, const std::string& what) {
  return FieldProblem{what + " in timestamp \"" + std::string(text) + "\"",
                      "expected YYYY-MM-DD HH:MM:SS with an optional fraction and UTC offset, e.g. "
                      "2023-11-16 18:15:46.6805900",
                      static_cast<int>(offset)};
}

}  // namespace

long long days_from_civil(long long y, unsigned m, unsigned d) {
  y -= m <= 2;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);             // [0, 399]
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;  // [0, 365]
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;            // [0, 146096]
  return era * 146097 + static_cast<long long>(doe) - 719468;
}

std::optional<FieldProblem> parse_azure_timestamp(std::string_view s, long long& out_ns) {
  unsigned year, month, day, hour, minute, second;
  if (!digits_at(s, 0, 4, year)) return bad(s, 0, "expected a 4-digit year");
  if (year < 1970 || year > 2200)  // nanoseconds since 1970 in [0, 8e18), as the other formats' times
    return bad(s, 0, "year " + std::to_string(year) + " outside 1970-2200");
  if (s.size() <= 4 || s[4] != '-') return bad(s, 4, "expected '-' after the year");
  if (!digits_at(s, 5, 2, month)) return bad(s, 5, "expected a 2-digit month");
  if (month < 1 || month > 12) return bad(s, 5, "month " + std::to_string(month) + " out of range");
  if (s.size() <= 7 || s[7] != '-') return bad(s, 7, "expected '-' after the month");
  if (!digits_at(s, 8, 2, day)) return bad(s, 8, "expected a 2-digit day");
  if (day < 1 || day > days_in_month(year, month))
    return bad(s, 8, "day " + std::to_string(day) + " out of range for the month");
  if (s.size() <= 10 || (s[10] != ' ' && s[10] != 'T')) return bad(s, 10, "expected ' ' between date and time");
  if (!digits_at(s, 11, 2, hour) || hour > 23) return bad(s, 11, "expected an hour 00-23");
  if (s.size() <= 13 || s[13] != ':') return bad(s, 13, "expected ':' after the hour");
  if (!digits_at(s, 14, 2, minute) || minute > 59) return bad(s, 14, "expected a minute 00-59");
  if (s.size() <= 16 || s[16] != ':') return bad(s, 16, "expected ':' after the minute");
  if (!digits_at(s, 17, 2, second) || second > 59) return bad(s, 17, "expected a second 00-59");
  std::size_t pos = 19;
  long long frac_ns = 0;
  if (pos < s.size() && s[pos] == '.') {
    std::size_t n = 0;
    while (pos + 1 + n < s.size() && s[pos + 1 + n] >= '0' && s[pos + 1 + n] <= '9') {
      if (n == 9) return bad(s, pos + 1 + n, "more than 9 fractional digits");
      frac_ns = frac_ns * 10 + (s[pos + 1 + n] - '0');
      ++n;
    }
    if (n == 0) return bad(s, pos + 1, "expected digits after '.'");
    for (std::size_t i = n; i < 9; ++i) frac_ns *= 10;
    pos += 1 + n;
  }
  long long offset_s = 0;
  if (pos < s.size() && s[pos] == 'Z') {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    unsigned oh, om;
    if (!digits_at(s, pos + 1, 2, oh) || oh > 23 || s.size() <= pos + 3 || s[pos + 3] != ':' ||
        !digits_at(s, pos + 4, 2, om) || om > 59)
      return bad(s, pos, "expected a UTC offset +HH:MM");
    offset_s = (s[pos] == '+' ? 1 : -1) * static_cast<long long>(oh * 3600 + om * 60);
    pos += 6;
  }
  if (pos != s.size()) return bad(s, pos, "unexpected text");
  const long long secs = days_from_civil(year, month, day) * 86400 + hour * 3600LL + minute * 60LL + second - offset_s;
  out_ns = secs * 1'000'000'000 + frac_ns;
  return std::nullopt;
}

}  // namespace mlasim
