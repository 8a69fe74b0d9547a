// Strict, located reads of YAML nodes for the scenario loader: every failure becomes an Error
// naming file, line, column and key path. Internal to sim/ (the only yaml-cpp user).
#pragma once


#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "scenario/yaml_tree.h"

namespace mlasim {

// Thrown inside the loader only; load_scenario_* turns it into a Result.
struct LoadError {
  Error error;
};

// Where a key path's value came from when a `--set key=value` replaced it.
struct OverrideOrigin {
  std::string label;  // "<--set key=value>"
  int value_column;   // 1-based column of the value inside `key=value`
};

class YamlReader {
 public:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}

  const std::string& file() const { return file_; }
  void add_override(const std::string& key_path, OverrideOrigin origin) { overrides_[key_path] = std::move(origin); }

  Error error_at(const YamlNode& node, const std::string& key_path, std::string message, std::string hint = {}) const;
  [[noreturn]] void fail(const YamlNode& node, const std::string& key_path, std::string message,
                         std::string hint = {}) const;

  // The node must be a mapping whose keys are all in `allowed` and appear once each.
  void expect_map(const YamlNode& node, const std::string& key_path, const std::vector<std::string>& allowed) const;
  void expect_sequence(const YamlNode& node, const std::string& key_path) const;

  std::string read_string(const YamlNode& node, const std::string& key_path) const;
  long long read_integer(const YamlNode& node, const std::string& key_path, long long min, long long max) const;
  int read_int(const YamlNode& node, const std::string& key_path, long long min, long long max = 1LL << 31) const;
  double read_double(const YamlNode& node, const std::string& key_path, double min) const;
  bool read_bool(const YamlNode& node, const std::string& key_path) const;
  std::vector<int> read_int_list(const YamlNode& node, const std::string& key_path, long long min,
                                 long long max) const;
  std::vector<long long> read_integer_list(const YamlNode& node, const std::string& key_path, long long min,
                                           long long max) const;
  std::vector<std::string> read_string_list(const YamlNode& node, const std::string& key_path) const;

 private:
  std::string file_;
  std::map<std::string, OverrideOrigin> overrides_;
};

// An Error at a parse failure's mark (1-based line and column; the start when it has none).
Error syntax_error_at(const std::string& file, const YamlSyntaxError& ex, std::string message, std::string hint = {});

std::string join_key(const std::string& parent, const std::string& key);
std::string index_key(const std::string& parent, std::size_t index);

}  // namespace mlasim
