// JSON documents as JsonValue trees, on JsonScanner.
#include "base/formats/json_value.h"

#include <charconv>

#include "base/json_scanner.h"

namespace mlasim {
namespace {

// `depth`: the arrays and objects around the value (at most JsonScanner::kMaxDepth, so a hostile
// file cannot exhaust the stack; mlasim's own files nest 3 deep).
JsonValue parse_value(JsonScanner& sc, int depth, std::string& scratch) {
  sc.skip_ws();
  if (sc.at_end()) sc.fail(sc.offset(), "expected a value");
  const char c = sc.peek();
  if ((c == '{' || c == '[') && depth >= JsonScanner::kMaxDepth) sc.fail(sc.offset(), "nested deeper than 64 levels");
  if (c == '{') {
    sc.expect('{');
    JsonValue::Object members;
    if (sc.consume('}')) return JsonValue{members};
    do {
      sc.skip_ws();
      if (sc.peek() != '"') sc.fail(sc.offset(), "expected a string key");
      std::string key(sc.string(scratch));
      sc.expect(':');
      members.emplace_back(std::move(key), parse_value(sc, depth + 1, scratch));
    } while (sc.consume(','));
    sc.expect('}');
    return JsonValue{members};
  }
  if (c == '[') {
    sc.expect('[');
    JsonValue::Array items;
    if (sc.consume(']')) return JsonValue{items};
    do items.push_back(parse_value(sc, depth + 1, scratch));
    while (sc.consume(','));
    sc.expect(']');
    return JsonValue{items};
  }
  if (c == '"') return JsonValue{std::string(sc.string(scratch))};
  if (sc.consume_word("null")) return JsonValue{nullptr};
  if (sc.consume_word("true")) return JsonValue{true};
  if (sc.consume_word("false")) return JsonValue{false};
  if (c != '-' && (c < '0' || c > '9')) sc.fail(sc.offset(), "expected a value");
  const std::string_view text = sc.number();
  double d = 0;
  std::from_chars(text.data(), text.data() + text.size(), d);  // JSON's grammar, so it parses
  return JsonValue{d};
}

}  // namespace

const JsonValue* JsonValue::find(const std::string& key) const {
  if (!is_object()) return nullptr;
  for (const auto& [k, val] : object())
    if (k == key) return &val;
  return nullptr;
}

Result<JsonValue> parse_json(const std::string& text, const std::string& path) {
  JsonScanner sc(text);
  try {
    std::string scratch;
    JsonValue v = parse_value(sc, 0, scratch);
    sc.skip_ws();
    if (!sc.at_end()) sc.fail(sc.offset(), "unexpected text after the JSON value");
    return v;
  } catch (const JsonSyntaxError& f) {
    Error e;
    e.file = path;
    e.line = 1;
    e.column = 1;
    for (std::size_t i = 0; i < f.offset && i < text.size(); ++i) {
      if (text[i] == '\n')
        ++e.line, e.column = 1;
      else
        ++e.column;
    }
    e.message = "invalid JSON: " + f.message;
    e.hint = "this file is written by mlasim; regenerate it rather than editing it by hand";
    return e;
  }
}

}  // namespace mlasim
