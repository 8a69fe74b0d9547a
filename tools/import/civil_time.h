// Azure trace timestamps ("2023-11-16 18:15:46.6805900", "2024-05-10 00:00:00.009930+00:00")
// to integer nanoseconds since 1970-01-01 00:00 UTC, exactly: no locale, no strptime.
#pragma once

#include <optional>
#include <string_view>

#include "tools/import/field_parse.h"

namespace mlasim {

// Days from 1970-01-01 to the proleptic Gregorian date y-m-d (negative before 1970).
long long days_from_civil(long long y, unsigned m, unsigned d);

// "YYYY-MM-DD HH:MM:SS" (year 1970-2200; or 'T' between date and time), an optional fraction of 1 to 9 digits,
// an optional "Z" or "+HH:MM" / "-HH:MM" offset from UTC (a time without one is taken as UTC).
std::optional<FieldProblem> parse_azure_timestamp(std::string_view text, long long& out_ns);

}  // namespace mlasim
