// Typed, located YAML reads with strict key checking.
#include "scenario/yaml_reader.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace mlasim {

namespace {

int edit_distance(const std::string& a, const std::string& b) {
  std::vector<int> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = static_cast<int>(j);
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = static_cast<int>(i);
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string list_of(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

const char* kind_name(const YamlNode& node) {
  switch (node.Type()) {
    case YamlType::Map: return "a mapping";
    case YamlType::Sequence: return "a list";
    case YamlType::Null: return "null";
    case YamlType::Scalar: return "a scalar";
    default: return "nothing";
  }
}

}  // namespace

std::string join_key(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string index_key(const std::string& parent, std::size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

Error YamlReader::error_at(const YamlNode& node, const std::string& key_path, std::string message,
                           std::string hint) const {
  Error e;
  e.key_path = key_path;
  e.message = std::move(message);
  e.hint = std::move(hint);
  // A value that came from --set is reported at the --set argument, not in the file.
  for (std::string prefix = key_path; !prefix.empty();) {
    auto it = overrides_.find(prefix);
    if (it != overrides_.end()) {
      e.file = it->second.label;
      e.line = 1;
      int inner = (node.IsDefined() && prefix == key_path) ? node.Mark().column : 0;
      e.column = it->second.value_column + std::max(inner, 0);
      return e;
    }
    std::size_t cut = prefix.find_last_of(".[");
    prefix = cut == std::string::npos ? std::string() : prefix.substr(0, cut);
  }
  // A key that --set created on the way to its value (an unknown or wrong-case section): at the
  // --set argument's key.
  if (!key_path.empty() && (!node.IsDefined() || node.Mark().is_null()))
    for (const auto& [path, origin] : overrides_)
      if (path.size() > key_path.size() && path.compare(0, key_path.size(), key_path) == 0 &&
          (path[key_path.size()] == '.' || path[key_path.size()] == '[')) {
        e.file = origin.label;
        e.line = 1;
        e.column = 1;
        return e;
      }
  e.file = file_;
  if (node.IsDefined() && !node.Mark().is_null()) {
    e.line = node.Mark().line + 1;
    e.column = node.Mark().column + 1;
  }
  return e;
}

void YamlReader::fail(const YamlNode& node, const std::string& key_path, std::string message,
                      std::string hint) const {
  throw LoadError{error_at(node, key_path, std::move(message), std::move(hint))};
}

void YamlReader::expect_map(const YamlNode& node, const std::string& key_path,
                            const std::vector<std::string>& allowed) const {
  if (!node.IsMap())
    fail(node, key_path, std::string("expected a mapping, got ") + kind_name(node),
         "write `key: value` pairs here; see scenarios/README.md");
  std::set<std::string> seen;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const YamlNode key = node.key_at(i);
    if (!key.IsScalar()) fail(key, key_path, "keys must be plain names", "use a plain word as the key");
    std::string name = key.Scalar();
    std::string path = join_key(key_path, name);
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      std::string best;
      int best_d = 4;
      for (const auto& a : allowed) {
        int d = edit_distance(name, a);
        if (d < best_d) best_d = d, best = a;
      }
      std::string hint = best.empty() ? "allowed keys here: " + list_of(allowed)
                                      : "did you mean `" + best + "`? allowed keys here: " + list_of(allowed);
      fail(key, path, "unknown key", hint);
    }
    if (!seen.insert(name).second) fail(key, path, "duplicate key", "each key may appear once in a mapping");
  }
}

void YamlReader::expect_sequence(const YamlNode& node, const std::string& key_path) const {
  if (!node.IsSequence())
    fail(node, key_path, std::string("expected a list, got ") + kind_name(node), "write a YAML list: [a, b] or `- a` lines");
}

std::string YamlReader::read_string(const YamlNode& node, const std::string& key_path) const {
  if (!node.IsScalar()) fail(node, key_path, std::string("expected a string, got ") + kind_name(node), "write a single value here");
  return node.Scalar();
}

namespace {

// Whether a scalar may be read as the YAML type `type` ("int", "float", "bool"): a plain scalar
// (tag "?"), or one tagged explicitly with that type (`!!int 16`). A quoted scalar (tag "!") is a
// string, and so is `!!str 16`; any other tag is not read as a number or a boolean either.
bool scalar_is(const YamlNode& node, const std::string& type) {
  const std::string& tag = node.Tag();
  return tag == "?" || tag.empty() || tag == "tag:yaml.org,2002:" + type;
}

// `"16"`, or `"16" (tagged !!str)` when the scalar carries an explicit tag.
std::string shown(const YamlNode& node) {
  std::string tag = node.Tag();
  if (tag == "?" || tag == "!" || tag.empty()) return "\"" + node.Scalar() + "\"";
  if (tag.rfind("tag:yaml.org,2002:", 0) == 0) tag = "!!" + tag.substr(18);
  return "\"" + node.Scalar() + "\" (tagged " + tag + ")";
}

}  // namespace

long long YamlReader::read_integer(const YamlNode& node, const std::string& key_path, long long min,
                                   long long max) const {
  if (!node.IsScalar())
    fail(node, key_path, std::string("expected an integer, got ") + kind_name(node), "write a whole number, e.g. 16");
  const std::string& s = node.Scalar();
  long long value = 0;
  std::size_t used = 0;
  bool parsed = false;
  if (scalar_is(node, "int")) {  // a quoted scalar is a string, never a number
    try {
      value = std::stoll(s, &used, 10);
      parsed = used == s.size();
    } catch (const std::exception&) {
      parsed = false;
    }
  }
  if (!parsed) fail(node, key_path, "expected an integer, got " + shown(node), "write a whole number without quotes, e.g. 16");
  if (value < min) {
    std::string what = min == 1 ? "must be positive" : min == 0 ? "must not be negative" : "must be >= " + std::to_string(min);
    fail(node, key_path, what + " (got " + s + ")", "this key takes integers >= " + std::to_string(min));
  }
  if (value > max)
    fail(node, key_path, "must be <= " + std::to_string(max) + " (got " + s + ")",
         "this key takes integers <= " + std::to_string(max));
  return value;
}

int YamlReader::read_int(const YamlNode& node, const std::string& key_path, long long min, long long max) const {
  long long hi = std::min<long long>(max, std::numeric_limits<int>::max());
  return static_cast<int>(read_integer(node, key_path, min, hi));
}

double YamlReader::read_double(const YamlNode& node, const std::string& key_path, double min) const {
  if (!node.IsScalar()) fail(node, key_path, std::string("expected a number, got ") + kind_name(node), "write a number, e.g. 1e-6");
  const std::string& s = node.Scalar();
  double value = 0;
  std::size_t used = 0;
  bool parsed = false;
  if (scalar_is(node, "float") || scalar_is(node, "int")) {
    try {
      value = std::stod(s, &used);
      parsed = used == s.size();
    } catch (const std::exception&) {
      parsed = false;
    }
  }
  if (!parsed) fail(node, key_path, "expected a number, got " + shown(node), "write a number without quotes, e.g. 1e-6");
  if (!std::isfinite(value))
    fail(node, key_path, "expected a finite number, got \"" + s + "\"", "inf and nan are not values of this key");
  if (!(value >= min)) fail(node, key_path, "must be >= " + std::to_string(min) + " (got " + s + ")", "see scenarios/README.md for its range");
  return value;
}

bool YamlReader::read_bool(const YamlNode& node, const std::string& key_path) const {
  if (node.IsScalar() && scalar_is(node, "bool")) {
    const std::string& s = node.Scalar();
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
  }
  fail(node, key_path,
       "expected true or false, got " + (node.IsScalar() ? "\"" + node.Scalar() + "\"" : std::string(kind_name(node))),
       "write true or false, unquoted");
}

std::vector<int> YamlReader::read_int_list(const YamlNode& node, const std::string& key_path, long long min,
                                           long long max) const {
  expect_sequence(node, key_path);
  std::vector<int> out;
  out.reserve(node.size());
  for (std::size_t i = 0; i < node.size(); ++i) out.push_back(read_int(node[i], index_key(key_path, i), min, max));
  return out;
}

std::vector<long long> YamlReader::read_integer_list(const YamlNode& node, const std::string& key_path, long long min,
                                                     long long max) const {
  expect_sequence(node, key_path);
  std::vector<long long> out;
  out.reserve(node.size());
  for (std::size_t i = 0; i < node.size(); ++i) out.push_back(read_integer(node[i], index_key(key_path, i), min, max));
  return out;
}

std::vector<std::string> YamlReader::read_string_list(const YamlNode& node, const std::string& key_path) const {
  expect_sequence(node, key_path);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < node.size(); ++i) out.push_back(read_string(node[i], index_key(key_path, i)));
  return out;
}

Error syntax_error_at(const std::string& file, const YamlSyntaxError& ex, std::string message, std::string hint) {
  Error e;
  e.file = file;
  e.line = std::max(ex.mark.line, 0) + 1;
  e.column = std::max(ex.mark.column, 0) + 1;
  e.message = std::move(message);
  e.hint = std::move(hint);
  return e;
}

}  // namespace mlasim
