// Strict, located reads of a JSON document's values (base/json_document.h) for the readers of JSON
// files a user hands mlasim (a model's config.json): a value of the wrong JSON type is an error
// naming the file, line, column and key, never read as something else (no number as a string, no
// string as a number, no fraction as an integer).
#pragma once

#include <string>

#include "base/json_document.h"
#include "scenario/yaml_reader.h"  // LoadError

namespace mlasim {

class JsonFieldReader {
 public:
  explicit JsonFieldReader(std::string file) : file_(std::move(file)) {}

  const std::string& file() const { return file_; }
  Error error_at(const JsonNode& node, const std::string& key_path, std::string message, std::string hint = {}) const;
  [[noreturn]] void fail(const JsonNode& node, const std::string& key_path, std::string message,
                         std::string hint = {}) const;

  // The member `key` of `object`, or nullptr when it is absent or null (Python's None).
  static const JsonNode* present(const JsonNode& object, const char* key);
  // The member `key` of `object` (an object: else the error at `parent`), null included; throws
  // when it is absent.
  const JsonNode& required(const JsonNode& object, const char* key, const std::string& parent) const;

  // Throws unless `node` is of that kind: "expected an object, got a string".
  void expect_object(const JsonNode& node, const std::string& key_path) const;
  void expect_list(const JsonNode& node, const std::string& key_path) const;

  std::string read_string(const JsonNode& node, const std::string& key_path) const;
  bool read_bool(const JsonNode& node, const std::string& key_path) const;
  // An integer literal (Python's json makes it an int) in [min, max].
  long long read_integer(const JsonNode& node, const std::string& key_path, long long min, long long max) const;
  int read_int(const JsonNode& node, const std::string& key_path, long long min, long long max = 1LL << 31) const;
  // Any finite number >= min (an integer or not).
  double read_double(const JsonNode& node, const std::string& key_path, double min) const;

 private:
  std::string file_;
};

}  // namespace mlasim
