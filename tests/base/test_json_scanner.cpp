// The one JSON scanner (base/json_scanner) and the three readers on it: request-file lines
// (JsonLineParser), imported Mooncake lines and mlasim's own files (parse_json).
#include <catch2/catch.hpp>

#include <string>
#include <tuple>
#include <vector>

#include "base/json_line.h"
#include "base/json_scanner.h"
#include "base/formats/json_value.h"

using namespace mlasim;

TEST_CASE("the JSON scanner checks JSON's grammar and reports offsets", "[json]") {
  std::string scratch;
  JsonScanner sc(R"( {"a\"b\u00e9": -12.5e3, "x": [true, {"y": null}], "z": "w"} )");
  sc.expect('{');
  CHECK(sc.string(scratch) == "a\"b\xC3\xA9");
  sc.expect(':');
  CHECK(sc.number() == "-12.5e3");
  CHECK(sc.consume(','));
  CHECK(sc.string(scratch) == "x");
  sc.expect(':');
  sc.skip_value();
  CHECK(sc.consume(','));
  CHECK(sc.string(scratch) == "z");
  sc.expect(':');
  sc.skip_value();
  sc.expect('}');
  sc.skip_ws();
  CHECK(sc.at_end());

  auto error_at = [](const char* text, auto&& action) -> std::size_t {
    JsonScanner s(text);
    try {
      action(s);
    } catch (const JsonSyntaxError& e) {
      return e.offset;
    }
    return std::string::npos;
  };
  CHECK(error_at("  012", [](JsonScanner& s) { s.number(); }) == 2);  // leading zero
  CHECK(error_at("1.e5", [](JsonScanner& s) { s.number(); }) == 2);
  CHECK(error_at("\"abc", [](JsonScanner& s) {
          std::string t;
          s.string(t);
        }) == 0);
  CHECK(error_at("\"a\\qb\"", [](JsonScanner& s) {
          std::string t;
          s.string(t);
        }) == 2);
  CHECK(error_at("[1, 2", [](JsonScanner& s) { s.skip_value(); }) == 5);
  CHECK(error_at("nul", [](JsonScanner& s) { s.skip_value(); }) == 0);
}

TEST_CASE("the JSON scanner decodes surrogate pairs and refuses unpaired halves", "[json]") {
  std::string scratch;
  JsonScanner pair(R"("\ud83d\ude00 ok")");
  CHECK(pair.string(scratch) == "\xF0\x9F\x98\x80 ok");
  auto error = [](const char* text) -> std::pair<std::size_t, std::string> {
    JsonScanner s(text);
    std::string t;
    try {
      s.string(t);
    } catch (const JsonSyntaxError& e) {
      return {e.offset, e.message};
    }
    return {std::string::npos, ""};
  };
  CHECK(error(R"("a\ud83d")") == std::pair<std::size_t, std::string>{2, "unpaired surrogate in a \\u escape"});
  CHECK(error(R"("a\ude00")") == std::pair<std::size_t, std::string>{2, "unpaired surrogate in a \\u escape"});
  CHECK(error(R"("\ud83d\u0041")") == std::pair<std::size_t, std::string>{1, "unpaired surrogate in a \\u escape"});
  CHECK(error(R"("\u12g4")") == std::pair<std::size_t, std::string>{1, "expected 4 hex digits after \\u"});
}

TEST_CASE("the JSON scanner nests 64 deep and no deeper", "[json]") {
  const std::string ok = std::string(64, '[') + std::string(64, ']');
  JsonScanner a(ok);
  a.skip_value();
  CHECK(a.at_end());
  const std::string deep = std::string(65, '[') + std::string(65, ']');
  JsonScanner b(deep);
  try {
    b.skip_value();
    FAIL("65 levels scanned");
  } catch (const JsonSyntaxError& e) {
    CHECK(e.offset == 64);
    CHECK(e.message == "nested deeper than 64 levels");
  }
  CHECK(parse_json(ok, "f.json").ok());
  CHECK(parse_json(deep, "f.json").error().headline() == "f.json:1:65: error: invalid JSON: nested deeper than 64 levels");
}

TEST_CASE("request lines and mlasim's files report a lexical error in the same words", "[json]") {
  // The same bad number, string and escape through JsonLineParser and parse_json: one scanner,
  // so one message and one column.
  const std::vector<std::tuple<std::string, int, std::string>> cases = {
      {R"({"a": -01})", 7, "a number must not have leading zeros"},
      {R"({"a": 1.5e})", 11, "expected digits in the exponent"},
      {R"({"a": "x\q"})", 9, "unknown escape \\q"},
      {"{\"a\": \"x\ty\"}", 9, "control character inside a string"},
      {R"({"a": "\ud800"})", 8, "unpaired surrogate in a \\u escape"},
  };
  for (const auto& [text, column, message] : cases) {
    INFO(text);
    JsonLineParser line;
    REQUIRE_FALSE(line.parse(text));
    CHECK(line.error_column() == column);
    CHECK(line.error_message() == message);
    Result<JsonValue> doc = parse_json(text, "f.json");
    REQUIRE_FALSE(doc.ok());
    CHECK(doc.error().headline() == "f.json:1:" + std::to_string(column) + ": error: invalid JSON: " + message);
  }
  JsonLineParser line;
  REQUIRE(line.parse(R"({"id": "\u00e9\ud83d\ude00", "n": [1, 2]})"));
  CHECK(line.find("id")->text == "\xC3\xA9\xF0\x9F\x98\x80");
  CHECK(parse_json(R"({"id": "\u00e9\ud83d\ude00"})", "f.json").value().find("id")->string() == "\xC3\xA9\xF0\x9F\x98\x80");
}
