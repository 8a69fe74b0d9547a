// The importer's field parsers: calendar days, Azure timestamps, seconds, counts, CSV splitting
// and the JSON-line scanner, each with the exact value or the exact offset of a problem.
#include <catch2/catch.hpp>

#include "tools/import/civil_time.h"
#include "tools/import/csv_line.h"
#include "tools/import/field_parse.h"

using namespace mlasim;

TEST_CASE("days_from_civil counts days from 1970-01-01 across leap years and centuries", "[import]") {
  // Values from Python's datetime.date arithmetic.
  CHECK(days_from_civil(1970, 1, 1) == 0);
  CHECK(days_from_civil(1969, 12, 31) == -1);
  CHECK(days_from_civil(2000, 3, 1) == 11017);
  CHECK(days_from_civil(2023, 11, 16) == 19677);
  CHECK(days_from_civil(2024, 2, 29) == 19782);
  CHECK(days_from_civil(1900, 1, 1) == -25567);
  CHECK(days_from_civil(2200, 12, 31) == 84370);
  CHECK(days_from_civil(2023, 12, 1) - days_from_civil(2023, 11, 30) == 1);
  CHECK(days_from_civil(2024, 3, 1) - days_from_civil(2024, 2, 28) == 2);
  CHECK(days_from_civil(2100, 3, 1) - days_from_civil(2100, 2, 28) == 1);  // 2100 is not a leap year
}

TEST_CASE("Azure timestamps parse exactly to nanoseconds since the epoch", "[import]") {
  long long ns = 0;
  REQUIRE_FALSE(parse_azure_timestamp("2023-11-16 18:15:46.6805900", ns));
  CHECK(ns == 1700158546'680590000LL);  // 1700158546 s from Python's datetime
  REQUIRE_FALSE(parse_azure_timestamp("2023-11-16 18:15:46", ns));
  CHECK(ns == 1700158546'000000000LL);
  REQUIRE_FALSE(parse_azure_timestamp("2023-11-16T18:15:46.5Z", ns));
  CHECK(ns == 1700158546'500000000LL);
  REQUIRE_FALSE(parse_azure_timestamp("2024-05-10 00:00:00.009930+00:00", ns));  // the 2024 release
  CHECK(ns == 1715299200'009930000LL);
  REQUIRE_FALSE(parse_azure_timestamp("2024-05-09 19:00:00.009930-05:00", ns));  // the same instant
  CHECK(ns == 1715299200'009930000LL);
  REQUIRE_FALSE(parse_azure_timestamp("2024-02-29 00:00:00.000000001", ns));
  CHECK(ns == days_from_civil(2024, 2, 29) * 86400'000000000LL + 1);
}

TEST_CASE("a malformed Azure timestamp names the offending character", "[import]") {
  long long ns = 0;
  struct Case {
    const char* text;
    int offset;
    const char* message_start;
  };
  const Case cases[] = {
      {"2023-02-29 00:00:00", 8, "day 29 out of range for the month"},
      {"2023-13-01 00:00:00", 5, "month 13 out of range"},
      {"2023-11-16 24:00:00", 11, "expected an hour 00-23"},
      {"2023-11-16 18:60:00", 14, "expected a minute 00-59"},
      {"2023-11-16 18:15:46.", 20, "expected digits after '.'"},
      {"2023-11-16 18:15:46.1234567890", 29, "more than 9 fractional digits"},
      {"2023-11-16 18:15:46.68 PM", 22, "unexpected text"},
      {"2023/11/16 18:15:46", 4, "expected '-' after the year"},
      {"16-11-2023 18:15:46", 0, "expected a 4-digit year"},
      {"1969-12-31 23:59:59", 0, "year 1969 outside 1970-2200"},
      {"2023-11-16 18:15:46+5", 19, "expected a UTC offset +HH:MM"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    std::optional<FieldProblem> p = parse_azure_timestamp(c.text, ns);
    REQUIRE(p);
    CHECK(p->offset == c.offset);
    CHECK(p->message.rfind(c.message_start, 0) == 0);
  }
}

TEST_CASE("decimal seconds and milliseconds parse to exact nanoseconds", "[import]") {
  long long ns = 0;
  REQUIRE_FALSE(parse_decimal_seconds("45", ns));
  CHECK(ns == 45'000000000LL);
  REQUIRE_FALSE(parse_decimal_seconds("12.250", ns));
  CHECK(ns == 12'250000000LL);
  REQUIRE_FALSE(parse_decimal_seconds("0.000000001", ns));
  CHECK(ns == 1);
  REQUIRE_FALSE(parse_milliseconds("3052", ns));
  CHECK(ns == 3'052000000LL);
  std::optional<FieldProblem> p = parse_decimal_seconds("-1", ns);
  REQUIRE(p);
  CHECK(p->message == "negative timestamp -1");
  p = parse_decimal_seconds("1.", ns);
  REQUIRE(p);
  CHECK(p->offset == 2);
  p = parse_decimal_seconds("1e3", ns);
  REQUIRE(p);
  CHECK(p->offset == 1);
  p = parse_decimal_seconds("1.0000000001", ns);
  REQUIRE(p);
  CHECK(p->message == "more than 9 fractional digits in \"1.0000000001\"");
  p = parse_decimal_seconds("8000000001", ns);  // past the 8e18 ns (253 years) bound
  REQUIRE(p);
  CHECK(p->message == "timestamp 8000000001 s is too large");
  p = parse_milliseconds("-5", ns);
  REQUIRE(p);
  CHECK(p->message == "negative timestamp -5");
}

TEST_CASE("counts are whole numbers 0..2^30 and say what is wrong otherwise", "[import]") {
  long long n = -1;
  REQUIRE_FALSE(parse_count("0", n));
  CHECK(n == 0);
  REQUIRE_FALSE(parse_count("163840", n));
  CHECK(n == 163840);
  std::optional<FieldProblem> p = parse_count("-230", n);
  REQUIRE(p);
  CHECK(p->message == "negative count -230");
  p = parse_count("12.0", n);
  REQUIRE(p);
  CHECK(p->message == "expected a whole number of tokens, found \"12.0\"");
  CHECK(p->offset == 2);
  p = parse_count("", n);
  REQUIRE(p);
  CHECK(p->message == "empty count");
  p = parse_count("+5", n);
  REQUIRE(p);
  CHECK(p->offset == 0);
  p = parse_count("99999999999999999999", n);
  REQUIRE(p);
  CHECK(p->message == "count 99999999999999999999 is too large");
  // At most what a request file may hold (max_tokens <= 2^30), so `run` takes what `import` writes.
  REQUIRE_FALSE(parse_count("1073741824", n));
  CHECK(n == 1073741824);
  p = parse_count("1073741825", n);
  REQUIRE(p);
  CHECK(p->message == "count 1073741825 is more tokens than a request can have (at most 1073741824)");
  p = parse_count("2147483648", n);
  REQUIRE(p);
  p = parse_count("9223372036854775807", n);
  REQUIRE(p);
  CHECK(p->message == "count 9223372036854775807 is more tokens than a request can have (at most 1073741824)");
}

TEST_CASE("CSV lines split into fields with their columns", "[import]") {
  std::vector<CsvField> f;
  REQUIRE(split_csv_line("5,ChatGPT,472,18,490,Conversation log", f) == 0);
  REQUIRE(f.size() == 6);
  CHECK(f[1].text == "ChatGPT");
  CHECK(f[2].column == 11);
  CHECK(f[5].text == "Conversation log");
  REQUIRE(split_csv_line(" \"a, b\" , 7,", f) == 0);
  REQUIRE(f.size() == 3);
  CHECK(f[0].text == "a, b");
  CHECK(f[0].column == 3);
  CHECK(f[1].text == "7");
  CHECK(f[1].column == 11);
  CHECK(f[2].text.empty());
  CHECK(f[2].column == 13);
  CHECK(split_csv_line("1,ab\"c,3", f) == 5);    // a quote inside an unquoted field
  CHECK(split_csv_line("1,\"abc", f) == 3);      // unterminated
  CHECK(split_csv_line("1,\"ab\"c,3", f) == 6);  // text after the closing quote
}
