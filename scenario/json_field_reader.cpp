// Typed, located reads of JSON values.
#include "scenario/json_field_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace mlasim {

Error JsonFieldReader::error_at(const JsonNode& node, const std::string& key_path, std::string message,
                                std::string hint) const {
  Error e;
  e.file = file_;
  e.line = node.line;
  e.column = node.column;
  e.key_path = key_path;
  e.message = std::move(message);
  e.hint = std::move(hint);
  return e;
}

void JsonFieldReader::fail(const JsonNode& node, const std::string& key_path, std::string message,
                           std::string hint) const {
  throw LoadError{error_at(node, key_path, std::move(message), std::move(hint))};
}

const JsonNode* JsonFieldReader::present(const JsonNode& object, const char* key) {
  const JsonNode* n = object.find(key);
  return n && !n->is_null() ? n : nullptr;
}

const JsonNode& JsonFieldReader::required(const JsonNode& object, const char* key, const std::string& parent) const {
  expect_object(object, parent);
  const JsonNode* n = object.find(key);
  if (!n) fail(object, json_join_key(parent, key), "missing", "write the key \"" + std::string(key) + "\" here");
  return *n;
}

void JsonFieldReader::expect_object(const JsonNode& node, const std::string& key_path) const {
  if (!node.is_object()) fail(node, key_path, "expected an object, got " + json_kind_name(node), "write {\"key\": value, ...} here");
}

void JsonFieldReader::expect_list(const JsonNode& node, const std::string& key_path) const {
  if (!node.is_array()) fail(node, key_path, "expected a list, got " + json_kind_name(node), "write [value, ...] here");
}

std::string JsonFieldReader::read_string(const JsonNode& node, const std::string& key_path) const {
  if (!node.is_string())
    fail(node, key_path, "expected a string, got " + json_kind_name(node), "write a string in double quotes here");
  return node.text;
}

bool JsonFieldReader::read_bool(const JsonNode& node, const std::string& key_path) const {
  if (node.kind != JsonNode::Kind::kBool)
    fail(node, key_path, "expected true or false, got " + json_kind_name(node), "write true or false here");
  return node.boolean;
}

long long JsonFieldReader::read_integer(const JsonNode& node, const std::string& key_path, long long min,
                                        long long max) const {
  if (!node.is_integer())
    fail(node, key_path, "expected an integer, got " + json_kind_name(node), "write a whole number without quotes, e.g. 16");
  long long value = 0;
  const char* end = node.text.data() + node.text.size();
  const auto [ptr, ec] = std::from_chars(node.text.data(), end, value);
  if (ec == std::errc::result_out_of_range || ptr != end || value > max)
    fail(node, key_path, "must be <= " + std::to_string(max) + " (got " + node.text + ")",
         "this key takes integers <= " + std::to_string(max));
  if (value < min) {
    const std::string what =
        min == 1 ? "must be positive" : min == 0 ? "must not be negative" : "must be >= " + std::to_string(min);
    fail(node, key_path, what + " (got " + node.text + ")", "this key takes integers >= " + std::to_string(min));
  }
  return value;
}

int JsonFieldReader::read_int(const JsonNode& node, const std::string& key_path, long long min, long long max) const {
  return static_cast<int>(read_integer(node, key_path, min, std::min<long long>(max, std::numeric_limits<int>::max())));
}

double JsonFieldReader::read_double(const JsonNode& node, const std::string& key_path, double min) const {
  if (!node.is_number()) fail(node, key_path, "expected a number, got " + json_kind_name(node), "write a number, e.g. 1e-6");
  const double value = std::strtod(node.text.c_str(), nullptr);
  if (!std::isfinite(value))
    fail(node, key_path, "expected a finite number, got " + node.text, "NaN and Infinity are not values of this key");
  if (!(value >= min)) {
    char shown[32];
    std::snprintf(shown, sizeof shown, "%g", min);
    fail(node, key_path, std::string("must be >= ") + shown + " (got " + node.text + ")",
         std::string("this key takes numbers >= ") + shown);
  }
  return value;
}

}  // namespace mlasim
