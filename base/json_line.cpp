// One-line JSON object parsing with columns, on JsonScanner.
#include "base/json_line.h"

#include "base/json_scanner.h"

namespace mlasim {

void JsonLineParser::parse_value(JsonScanner& sc, JsonLineValue& v) {
  sc.skip_ws();
  v.column = static_cast<int>(sc.offset()) + 1;
  if (sc.at_end()) sc.fail(sc.offset(), "expected a value");
  const char c = sc.peek();
  if (c == '"') {
    v.kind = JsonLineValue::Kind::kString;
    v.text = sc.string(scratch_);
    return;
  }
  if (c == '[') {
    v.kind = JsonLineValue::Kind::kNumberArray;
    v.items.clear();
    v.item_columns.clear();
    sc.expect('[');
    if (sc.consume(']')) return;
    while (true) {
      sc.skip_ws();
      const char d = sc.peek();
      if (d == '"' || d == '[' || d == '{' || d == 't' || d == 'f' || d == 'n')
        sc.fail(sc.offset(), "arrays in a request file hold numbers only");
      v.item_columns.push_back(static_cast<int>(sc.offset()) + 1);
      v.items.push_back(sc.number());
      if (sc.consume(',')) continue;
      if (sc.consume(']')) return;
      sc.fail(sc.offset(), "expected ',' or ']' in the array");
    }
  }
  if (c == '{') sc.fail(sc.offset(), "nested objects are not allowed in a request file");
  v.kind = JsonLineValue::Kind::kBool;
  if (sc.consume_word("true")) {
    v.boolean = true;
  } else if (sc.consume_word("false")) {
    v.boolean = false;
  } else if (sc.consume_word("null")) {
    v.kind = JsonLineValue::Kind::kNull;
  } else {
    v.kind = JsonLineValue::Kind::kNumber;
    v.number = sc.number();
  }
}

void JsonLineParser::parse_fields(JsonScanner& sc) {
  sc.skip_ws();
  if (sc.peek() != '{') sc.fail(sc.offset(), "expected a JSON object ('{') on the line");
  sc.expect('{');
  if (!sc.consume('}')) {
    while (true) {
      sc.skip_ws();
      if (sc.peek() != '"') sc.fail(sc.offset(), "expected a key in double quotes");
      if (fields_.size() <= num_fields_) fields_.emplace_back();
      JsonLineValue& v = fields_[num_fields_];
      v.key_column = static_cast<int>(sc.offset()) + 1;
      v.key = sc.string(scratch_);
      for (std::size_t i = 0; i < num_fields_; ++i)
        if (fields_[i].key == v.key)
          sc.fail(static_cast<std::size_t>(v.key_column - 1), "duplicate key \"" + v.key + "\"");
      sc.skip_ws();
      if (sc.peek() != ':') sc.fail(sc.offset(), "expected ':' after the key");
      sc.expect(':');
      parse_value(sc, v);
      ++num_fields_;
      if (sc.consume(',')) continue;
      if (sc.consume('}')) break;
      sc.fail(sc.offset(), "expected ',' or '}' after the value");
    }
  }
  sc.skip_ws();
  if (!sc.at_end()) sc.fail(sc.offset(), "text after the object; one JSON object per line");
}

bool JsonLineParser::parse(std::string_view line) {
  num_fields_ = 0;
  error_.clear();
  error_column_ = 0;
  JsonScanner sc(line);
  try {
    parse_fields(sc);
  } catch (const JsonSyntaxError& e) {
    error_column_ = static_cast<int>(e.offset) + 1;
    error_ = e.message;
    return false;
  }
  return true;
}

const JsonLineValue* JsonLineParser::find(std::string_view key) const {
  for (const JsonLineValue& v : fields())
    if (v.key == key) return &v;
  return nullptr;
}

}  // namespace mlasim
