// A strict parser for one line of JSONL holding a flat object: string, number, boolean and null
// values, and arrays of numbers. Enough for request files, fast enough for millions of lines, and
// every value keeps its 1-based column for error messages. The lexing is JsonScanner's.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mlasim {

class JsonScanner;

struct JsonLineValue {
  enum class Kind { kNumber, kString, kBool, kNull, kNumberArray };
  std::string key;
  int key_column = 0;
  int column = 0;            // where the value starts
  Kind kind = Kind::kNull;
  std::string_view number;   // kNumber: the literal as written (valid until the next parse)
  std::string text;          // kString: unescaped
  bool boolean = false;
  std::vector<std::string_view> items;  // kNumberArray: the literals
  std::vector<int> item_columns;
};

class JsonLineParser {
 public:
  // Parses `line` (no trailing newline) into fields(). On failure returns false and sets
  // error_column() and error_message(). Keys must be unique.
  bool parse(std::string_view line);
  std::span<const JsonLineValue> fields() const { return {fields_.data(), num_fields_}; }
  const JsonLineValue* find(std::string_view key) const;
  int error_column() const { return error_column_; }
  const std::string& error_message() const { return error_; }

 private:
  void parse_fields(JsonScanner& sc);
  void parse_value(JsonScanner& sc, JsonLineValue& v);

  std::vector<JsonLineValue> fields_;
  std::size_t num_fields_ = 0;
  int error_column_ = 0;
  std::string error_;
  std::string scratch_;
};

}  // namespace mlasim
