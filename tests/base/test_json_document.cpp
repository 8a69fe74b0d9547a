// base/json_document: the JSON conformance corpus (tests/data/json_corpus/, labelled against
// Python's json by tools/conformance/json_corpus_check.py), positions, duplicates and messages.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "base/json_document.h"

using namespace mlasim;

namespace {

std::string read_bytes(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Result<JsonDocument> parse(std::string_view text) {
  JsonDocumentOptions o;
  o.python_constants = true;
  return parse_json_document(text, "c.json", o);
}

}  // namespace

TEST_CASE("json_document: the corpus's y_ files are read, its n_ and i_ files refused", "[json]") {
  const std::filesystem::path dir = std::filesystem::path(MLASIM_SOURCE_DIR) / "tests/data/json_corpus";
  int y = 0, n = 0, i = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".json") continue;
    const auto doc = parse(read_bytes(entry.path()));
    INFO(name << (doc ? std::string() : ": " + doc.error().format()));
    if (name[0] == 'y') {
      ++y;
      CHECK(doc.ok());
    } else {
      name[0] == 'n' ? ++n : ++i;
      REQUIRE_FALSE(doc.ok());
      CHECK(doc.error().file == "c.json");
      CHECK(doc.error().line >= 1);
      CHECK(doc.error().column >= 1);
    }
  }
  CHECK(y == 13);
  CHECK(n == 41);
  CHECK(i == 3);
}

TEST_CASE("json_document: errors name the line, column, key and what was found", "[json]") {
  struct Case {
    const char* text;
    int line, column;
    const char* key_path;
    const char* message;
  };
  const Case cases[] = {
      {"{\"a\": 1,}", 1, 9, "", "a trailing comma before '}'"},
      {"[1, 2,]", 1, 7, "", "a trailing comma before ']'"},
      {"{\"a\": {\"b\": 1 // c\n}}", 1, 15, "a", "a comment"},
      {"{/* c */ \"a\": 1}", 1, 2, "", "a comment"},
      {"{a: 1}", 1, 2, "", "an object key without quotes"},
      {"{'a': 1}", 1, 2, "", "a string in single quotes"},
      {"\xEF\xBB\xBF{}", 1, 1, "", "the text starts with a UTF-8 byte-order mark (EF BB BF)"},
      {"\xFF\xFE{\0}\0", 1, 1, "", "the text is UTF-16 or UTF-32, not UTF-8"},
      {"{\"a\": 1}\n{\"b\": 2}", 2, 1, "", "text after the JSON value (found '{')"},
      {"{\"a\": [1, 01]}", 1, 11, "a[1]", "a number must not have leading zeros"},
      {"{\"a\": \"\\x\"}", 1, 8, "a", "unknown escape \\x"},
      {"{\"a\": \"\\ud800\"}", 1, 8, "a", "unpaired surrogate in a \\u escape"},
      {"{\"a\": \"x\ty\"}", 1, 9, "a", "control character inside a string"},
      {"{\r\"a\": 1,\r\"b\": [1,\r  nan]}", 4, 3, "b[1]", "expected a value, found 'n'"},
      {"{\r\n\"a\": 1\r\n\"b\": 2}", 3, 1, "", "expected ',' or '}' after a member, found '\"'"},
      {"{\"a\": \"\xC3\xA9\xFF\"}", 1, 9, "", "invalid UTF-8 (byte 0xFF)"},
      {"{\"a\": True}", 1, 7, "a", "expected a value, found 'T'"},
      {"{\"a\": -NaN}", 1, 7, "a", "expected a number"},
      {"", 1, 1, "", "expected a value, found the end of the text"},
      {"{\"a\" 1}", 1, 6, "", "expected ':' after the key, found '1'"},
  };
  for (const Case& c : cases) {
    const auto doc = parse(std::string_view(c.text, c.text[0] == '\xFF' ? 6 : std::char_traits<char>::length(c.text)));
    INFO(c.text);
    REQUIRE_FALSE(doc.ok());
    CHECK(doc.error().line == c.line);
    CHECK(doc.error().column == c.column);
    CHECK(doc.error().key_path == c.key_path);
    CHECK(doc.error().message == c.message);
  }
}

TEST_CASE("json_document: nesting is bounded at 64 levels", "[json]") {
  CHECK(parse(std::string(64, '[') + std::string(64, ']')).ok());
  const auto deep = parse(std::string(65, '[') + std::string(65, ']'));
  REQUIRE_FALSE(deep.ok());
  CHECK(deep.error().column == 65);
  CHECK(deep.error().message == "nested deeper than 64 levels");
}

TEST_CASE("json_document: values keep their line and column, CR, LF and CRLF each ending a line", "[json]") {
  for (const std::string eol : {"\n", "\r\n", "\r"}) {
    const auto doc = parse("{" + eol + "  \"a\": 1," + eol + "  \"b\": {\"c\": \"\xC3\xA9\", \"d\": [true, null]}" + eol + "}");
    REQUIRE(doc.ok());
    const JsonNode& root = doc.value().root;
    REQUIRE(root.is_object());
    REQUIRE(root.members.size() == 2);
    CHECK(root.members[0].key_line == 2);
    CHECK(root.members[0].key_column == 3);
    const JsonNode* b = root.find("b");
    REQUIRE(b != nullptr);
    CHECK(b->line == 3);
    CHECK(b->column == 8);
    CHECK(b->find("c")->text == "\xC3\xA9");
    CHECK(b->find("d")->column == 24);  // "é" counts as one character
    CHECK(b->find("d")->items[0].boolean);
    CHECK(b->find("d")->items[1].is_null());
  }
}

TEST_CASE("json_document: numbers keep their literal, NaN and Infinity only as Python's json reads them", "[json]") {
  const auto doc = parse("[1, -0, 2.50, 1e3, NaN, Infinity, -Infinity]");
  REQUIRE(doc.ok());
  const auto& items = doc.value().root.items;
  CHECK(items[0].is_integer());
  CHECK(items[1].is_integer());
  CHECK_FALSE(items[2].is_integer());
  CHECK(items[2].text == "2.50");
  CHECK_FALSE(items[3].is_integer());
  CHECK(items[4].text == "NaN");
  CHECK(items[6].text == "-Infinity");
  CHECK_FALSE(items[5].is_integer());
  const auto strict = parse_json_document("[NaN]", "c.json");
  REQUIRE_FALSE(strict.ok());
  CHECK(strict.error().message == "NaN and Infinity are not JSON");
}

TEST_CASE("json_document: a key written twice keeps the last value and is listed", "[json]") {
  const auto doc = parse("{\"a\": 1,\n \"b\": {\"x\": 1, \"x\": [2]},\n \"a\": \"last\"}");
  REQUIRE(doc.ok());
  const JsonNode& root = doc.value().root;
  REQUIRE(root.members.size() == 2);  // first-seen order, as a Python dict keeps it
  CHECK(root.members[0].key == "a");
  CHECK(root.members[0].value.text == "last");
  CHECK(root.members[0].value.line == 3);
  CHECK(root.find("b")->find("x")->is_array());
  const auto& dups = doc.value().duplicates;
  REQUIRE(dups.size() == 2);
  CHECK(dups[0].key_path == "b.x");
  CHECK(dups[0].line == 2);
  CHECK(dups[0].column == 16);
  CHECK(dups[0].first_column == 8);
  CHECK(dups[1].key_path == "a");
  CHECK(dups[1].line == 3);
  CHECK(dups[1].column == 2);
  CHECK(dups[1].first_line == 1);
  CHECK(dups[1].first_column == 2);
}

TEST_CASE("json_document: a long minified line costs its length, not its length per value", "[json]") {
  // Quadratic column counting would take minutes here.
  std::string array = "[0";
  for (int i = 1; i < 1000000; ++i) array += ",0";
  array += "]";
  const auto a = parse(array);
  REQUIRE(a.ok());
  CHECK(a.value().root.items.size() == 1000000);
  CHECK(a.value().root.items.back().column == 2 * 1000000);
  std::string object = "{";
  for (int i = 0; i < 100000; ++i) object += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
  object += ",\"k0\":-1}";
  const auto o = parse(object);
  REQUIRE(o.ok());
  CHECK(o.value().root.members.size() == 100000);
  CHECK(o.value().root.members[0].value.text == "-1");
  REQUIRE(o.value().duplicates.size() == 1);
  CHECK(o.value().duplicates[0].column == static_cast<int>(object.size()) - 7);  // the key of ,"k0":-1}
}
