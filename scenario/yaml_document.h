// The one writer of scenario YAML: an ordered document of scalars, lists and mappings, each
// collection in block or flow style, with trailing comments. `mlasim import`, `fuzz`, `shrink`
// and `deploy` build one (scenario_document() builds a Scenario's) and emit it with emit_yaml.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace mlasim {

class YamlValue {
 public:
  enum class Kind { kScalar, kMapping, kSequence };
  enum class Style { kBlock, kFlow };

  // Scalars. plain: numbers, booleans and names, written as they are; str: a string, plain when
  // it is plain-safe (letters, digits, "_.+-/") and double-quoted otherwise; quoted: a string,
  // always double-quoted (ids and names, which must stay strings whatever they hold).
  static YamlValue plain(std::string text);
  template <class T>
  static YamlValue number(T v) {
    return plain(fmt::format("{}", v));
  }
  static YamlValue boolean(bool v) { return plain(v ? "true" : "false"); }
  static YamlValue str(const std::string& s);
  static YamlValue quoted(const std::string& s);
  // Collections, empty. A flow collection is written on its key's line ({a: 1} or [1, 2]); a
  // block one below it, indented by two.
  static YamlValue mapping(Style style);
  static YamlValue sequence(Style style);
  // A flow list of numbers.
  template <class T>
  static YamlValue list(const std::vector<T>& v) {
    YamlValue out = sequence(Style::kFlow);
    for (const T& x : v) out.push(number(x));
    return out;
  }

  Kind kind() const { return kind_; }
  bool is_mapping() const { return kind_ == Kind::kMapping; }
  bool empty() const { return entries_.empty() && items_.empty(); }
  const std::string& text() const { return text_; }  // a scalar's value, unquoted

  // A mapping's entry: replaced in place when the key is there, appended otherwise.
  YamlValue& set(const std::string& key, YamlValue v);
  YamlValue* find(const std::string& key);
  const YamlValue* find(const std::string& key) const;
  // Removes a mapping's entry; false when the key is not there.
  bool erase(const std::string& key);
  const std::vector<std::pair<std::string, YamlValue>>& entries() const { return entries_; }
  // A sequence's item.
  YamlValue& push(YamlValue v);
  const std::vector<YamlValue>& items() const { return items_; }

  // Written after the value's line as "  # comment" (a block entry, a block sequence's item).
  YamlValue& comment(std::string c) {
    comment_ = std::move(c);
    return *this;
  }
  // Where a scalar came from, for messages about it ("" = the writer itself).
  YamlValue& origin(std::string o) {
    origin_ = std::move(o);
    return *this;
  }
  const std::string& origin() const { return origin_; }

  // The value on one line: a scalar's text, "{k: v, ...}" or "[a, ...]".
  std::string flow_text() const;
  // The entries of a mapping as block lines at `indent`.
  std::string block_text(int indent) const;

 private:
  enum class Quoting { kPlain, kWhenNeeded, kAlways };
  static YamlValue scalar(std::string text, Quoting q);

  Kind kind_ = Kind::kScalar;
  Style style_ = Style::kFlow;
  Quoting quoting_ = Quoting::kPlain;
  std::string text_;
  std::vector<std::pair<std::string, YamlValue>> entries_;
  std::vector<YamlValue> items_;
  std::string comment_;
  std::string origin_;
};

// A whole document: each line of `header` as "# line", then the root mapping in block style.
std::string emit_yaml(const YamlValue& root, const std::string& header = "");

// `s` double-quoted with YAML's escapes (\", \\, \n, \t, \xNN for other control characters).
std::string yaml_quoted(const std::string& s);

}  // namespace mlasim
