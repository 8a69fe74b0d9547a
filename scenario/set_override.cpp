// The rules and messages of --set.
#include "scenario/set_override.h"

#include "scenario/yaml_reader.h"

namespace mlasim {
namespace {

bool key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

bool is_index(const std::string& s) {
  return !s.empty() && s.size() < 9 && s.find_first_not_of("0123456789") == std::string::npos;
}

using Kind = SetTarget::Kind;

// A segment as an index into the current list: an error when it is none, or is past the list's end.
Result<std::size_t> list_index(const SetTarget& t, const SetArgument& a, const std::string& part,
                               const std::string& walked) {
  const std::size_t n = t.size();
  const std::string list = walked + " is a list of " + std::to_string(n) + " entries; ";
  if (!is_index(part))
    return set_error(a, 1, list + "\"" + part + "\" is not an index",
                     "address list entries by 0-based index, e.g. requests.0.max_tokens");
  const std::size_t idx = std::stoul(part);
  if (idx >= n)
    return set_error(a, 1, list + "index " + part + " is past its end",
                     (n == 0 ? std::string("the list is empty") : "indexes are 0-based: use 0 to " + std::to_string(n - 1)) +
                         "; --set cannot add list entries, edit the scenario file for that");
  return idx;
}

}  // namespace

Error set_error(const SetArgument& a, int column, std::string message, std::string hint) {
  Error e;
  e.file = a.label;
  e.line = 1;
  e.column = column;
  e.message = std::move(message);
  e.hint = std::move(hint);
  return e;
}

Result<SetArgument> parse_set(const std::string& set, const std::string& example) {
  SetArgument a;
  a.label = "<--set " + set + ">";
  const std::size_t eq = set.find('=');
  if (eq == std::string::npos || eq == 0) return set_error(a, 1, "expected key=value", example);
  if (eq + 1 == set.size()) return set_error(a, static_cast<int>(eq) + 2, "no value after '='", example);
  a.key = set.substr(0, eq);
  a.value = set.substr(eq + 1);
  a.value_column = static_cast<int>(eq) + 2;
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = a.key.find('.', start);
    const std::size_t end = dot == std::string::npos ? a.key.size() : dot;
    const std::string part = a.key.substr(start, end - start);
    const int column = static_cast<int>(start) + 1;
    if (part.empty())
      return set_error(a, column, "empty key segment in \"" + a.key + "\"", "separate keys with single dots");
    for (std::size_t j = 0; j < part.size(); ++j)
      if (!key_char(part[j]))
        return set_error(a, column + static_cast<int>(j), "unexpected character in the key \"" + a.key + "\"",
                         "keys are names of letters, digits, '_' and '-', separated by dots");
    a.parts.push_back(part);
    a.columns.push_back(column);
    if (dot == std::string::npos) return a;
    start = dot + 1;
  }
}

Result<std::string> apply_set(SetTarget& t, const SetArgument& a) {
  std::string walked;
  for (std::size_t i = 0; i < a.parts.size(); ++i) {
    const std::string& part = a.parts[i];
    const bool last = i + 1 == a.parts.size();
    if (t.kind() == Kind::kSequence) {
      Result<std::size_t> idx = list_index(t, a, part, walked);
      if (!idx) return idx.error();
      walked = index_key(walked, idx.value());
      if (last) {
        if (t.item_kind(idx.value()) == Kind::kMapping && !t.value_is_collection())
          return set_error(a, 1, walked + " is a mapping; set one of its keys",
                           "see scenarios/README.md for the keys under " + walked);
        t.assign(idx.value());
        return walked;
      }
      t.enter(idx.value());
      continue;
    }
    if (t.kind() != Kind::kMapping)
      return set_error(a, 1, walked + " is not a mapping, so it has no key \"" + part + "\"",
                       "see scenarios/README.md for the keys under " + walked);
    walked = join_key(walked, part);
    if (last) {
      if (t.child_kind(part) == Kind::kMapping && !t.value_is_collection())
        return set_error(a, 1, walked + " is a mapping; set one of its keys",
                         "see scenarios/README.md for the keys under " + walked);
      t.assign(part);
      return walked;
    }
    t.enter(part);
  }
  return walked;
}

}  // namespace mlasim
