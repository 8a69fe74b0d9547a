// A small JSON reader for the files mlasim itself writes (logits_index.json, safetensors
// headers), on base/json_scanner: parse errors name the file, line and column.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "base/status.h"

namespace mlasim {

struct JsonValue {
  using Array = std::vector<JsonValue>;
  using Object = std::vector<std::pair<std::string, JsonValue>>;  // file order
  std::variant<std::nullptr_t, bool, double, std::string, Array, Object> v;

  bool is_object() const { return std::holds_alternative<Object>(v); }
  bool is_array() const { return std::holds_alternative<Array>(v); }
  bool is_number() const { return std::holds_alternative<double>(v); }
  bool is_string() const { return std::holds_alternative<std::string>(v); }
  const Array& array() const { return std::get<Array>(v); }
  const Object& object() const { return std::get<Object>(v); }
  double number() const { return std::get<double>(v); }
  const std::string& string() const { return std::get<std::string>(v); }
  // The member `key` of an object, or nullptr.
  const JsonValue* find(const std::string& key) const;
};

Result<JsonValue> parse_json(const std::string& text, const std::string& path);

}  // namespace mlasim
