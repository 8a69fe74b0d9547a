// The scenario YAML the importer writes, as an ordered mapping of scalars and mappings, with
// `--set key.path=value` applied to it and emitted in block style.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace mlasim {

class YamlMap {
 public:
  // Sets the scalar at a dotted path (creating mappings on the way), e.g. "scheduler.max_num_seqs".
  // `origin` names where it came from in messages ("" = the importer itself).
  void set(const std::string& dotted, std::string value, std::string origin = "");
  // The scalar at a dotted path, or nullptr; origin_of() where it was set.
  const std::string* find(const std::string& dotted) const;
  const std::string* origin_of(const std::string& dotted) const;
  // Block-style YAML, scalars through yaml_scalar().
  std::string emit(int indent = 0) const;

 private:
  friend Status apply_set(YamlMap& root, const std::string& set);
  struct Entry {
    std::string key;
    std::string value;  // when map is null
    std::string origin;
    std::unique_ptr<YamlMap> map;  // a nested mapping, or null for a scalar
  };
  Entry* entry(const std::string& key);
  const Entry* entry(const std::string& key) const;
  const Entry* find_entry(const std::string& dotted) const;
  std::vector<Entry> entries_;
};

// `value` as a YAML scalar: as is when it is plain-safe (letters, digits, "_.+-/"), else double-quoted.
std::string yaml_scalar(const std::string& value);

// Applies one `--set key.path=value`: the key is a dotted path of names (letters, digits, "_-"),
// not under `requests` or `requests_file`; it may add keys but not replace a mapping by a scalar or
// go through a scalar. Errors name "<--set ...>" with line 1 and the column.
Status apply_set(YamlMap& root, const std::string& set);

}  // namespace mlasim
