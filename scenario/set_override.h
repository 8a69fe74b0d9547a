// `--set key.path=value`, parsed and walked once: the scenario loader applies it to the scenario's
// YAML tree (scenario/scenario_loader.cpp), `mlasim import` to the document it writes
// (tools/import/). Each applies it through a SetTarget over its own tree; the rules and messages
// are here.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "base/status.h"

namespace mlasim {

struct SetArgument {
  std::string label;                // "<--set key.path=value>": the file name of its errors (line 1)
  std::string key;                  // "key.path"
  std::vector<std::string> parts;   // the key's segments
  std::vector<int> columns;         // each segment's first column
  std::string value;
  int value_column = 0;
};

// Splits one --set: "expected key=value" without a key and '=', "no value after '='", an empty
// segment, or a character other than letters, digits, '_' and '-' in a segment (each at its
// column). `example` is the hint of the first two.
Result<SetArgument> parse_set(const std::string& set, const std::string& example);
Error set_error(const SetArgument& a, int column, std::string message, std::string hint = {});

// The tree a --set walks, as seen from the node the walk stands on (first the root mapping).
class SetTarget {
 public:
  enum class Kind { kAbsent, kNull, kScalar, kMapping, kSequence };
  virtual ~SetTarget() = default;
  virtual Kind kind() const = 0;
  virtual std::size_t size() const = 0;  // a sequence's entries
  virtual Kind child_kind(const std::string& key) const = 0;
  virtual Kind item_kind(std::size_t index) const = 0;
  // Steps to the key's (entry's) value, made this edit's own: a collection is copied first (so
  // the edit reaches this path only, never another alias of the node), an absent or null value
  // becomes a new mapping, a scalar stays as it is (the next segment reports it).
  virtual void enter(const std::string& key) = 0;
  virtual void enter(std::size_t index) = 0;
  // Puts the value at the key (entry) of the current collection.
  virtual void assign(const std::string& key) = 0;
  virtual void assign(std::size_t index) = 0;
  virtual bool value_is_collection() const = 0;
};

// Walks a's key through t and assigns its value there. Missing mappings on the way are created;
// a list entry is addressed by its 0-based index and must exist; a scalar has no keys and a mapping
// is replaced only by a collection. Returns the key path set, list entries as "[i]"
// ("requests[0].max_tokens").
Result<std::string> apply_set(SetTarget& t, const SetArgument& a);

}  // namespace mlasim
