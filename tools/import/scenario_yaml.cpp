// The importer's YAML: a few nested mappings of scalars, `--set` overrides, block-style output.
#include "tools/import/scenario_yaml.h"

#include <cstdio>

namespace mlasim {
namespace {

bool plain_safe(const std::string& v) {
  if (v.empty()) return false;
  for (char c : v) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '.' || c == '+' || c == '-' || c == '/';
    if (!ok) return false;
  }
  return true;
}

bool key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

Error set_error(const std::string& set, int column, std::string message, std::string hint) {
  Error e;
  e.file = "<--set " + set + ">";
  e.line = 1;
  e.column = column;
  e.message = std::move(message);
  e.hint = std::move(hint);
  return e;
}

std::vector<std::string> split_dots(const std::string& dotted) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = dotted.find('.', start);
    parts.push_back(dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) return parts;
    start = dot + 1;
  }
}

}  // namespace

std::string yaml_scalar(const std::string& v) {
  if (plain_safe(v)) return v;
  std::string out = "\"";
  for (unsigned char c : v) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

YamlMap::Entry* YamlMap::entry(const std::string& key) {
  for (Entry& e : entries_)
    if (e.key == key) return &e;
  return nullptr;
}

const YamlMap::Entry* YamlMap::entry(const std::string& key) const {
  for (const Entry& e : entries_)
    if (e.key == key) return &e;
  return nullptr;
}

void YamlMap::set(const std::string& dotted, std::string value, std::string origin) {
  YamlMap* cur = this;
  const std::vector<std::string> parts = split_dots(dotted);
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    Entry* e = cur->entry(parts[i]);
    if (!e) {
      cur->entries_.push_back(Entry{parts[i], "", "", std::make_unique<YamlMap>()});
      e = &cur->entries_.back();
    }
    cur = e->map.get();
  }
  if (Entry* e = cur->entry(parts.back())) {
    e->value = std::move(value);
    e->origin = std::move(origin);
  } else {
    cur->entries_.push_back(Entry{parts.back(), std::move(value), std::move(origin), nullptr});
  }
}

const YamlMap::Entry* YamlMap::find_entry(const std::string& dotted) const {
  const YamlMap* cur = this;
  const std::vector<std::string> parts = split_dots(dotted);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const Entry* e = cur->entry(parts[i]);
    if (!e) return nullptr;
    if (i + 1 == parts.size()) return e->map ? nullptr : e;
    if (!e->map) return nullptr;
    cur = e->map.get();
  }
  return nullptr;
}

const std::string* YamlMap::find(const std::string& dotted) const {
  const Entry* e = find_entry(dotted);
  return e ? &e->value : nullptr;
}

const std::string* YamlMap::origin_of(const std::string& dotted) const {
  const Entry* e = find_entry(dotted);
  return e ? &e->origin : nullptr;
}

std::string YamlMap::emit(int indent) const {
  std::string out;
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  for (const Entry& e : entries_) {
    if (e.map) {
      out += pad + e.key + ":\n" + e.map->emit(indent + 2);
    } else {
      out += pad + e.key + ": " + yaml_scalar(e.value) + "\n";
    }
  }
  return out;
}

Status apply_set(YamlMap& root, const std::string& set) {
  const std::size_t eq = set.find('=');
  const char* example = "for example --set scheduler.max_num_batched_tokens=4096 or --set model.preset=tiny";
  if (eq == std::string::npos || eq == 0) return set_error(set, 1, "expected key=value", example);
  if (eq + 1 == set.size()) return set_error(set, static_cast<int>(eq) + 2, "no value after '='", example);
  const std::string dotted = set.substr(0, eq);
  const std::vector<std::string> parts = split_dots(dotted);
  if (parts[0] == "requests" || parts[0] == "requests_file")
    return set_error(set, 1, parts[0] + ": the imported requests cannot be changed with --set",
                     "import picks the requests: use --limit, or edit the written files");
  YamlMap* cur = &root;
  std::size_t column = 1;
  std::string walked;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    if (part.empty())
      return set_error(set, static_cast<int>(column), "empty key segment in \"" + dotted + "\"",
                       "separate keys with single dots");
    for (std::size_t j = 0; j < part.size(); ++j)
      if (!key_char(part[j]))
        return set_error(set, static_cast<int>(column + j), "unexpected character in the key \"" + dotted + "\"",
                         "keys are names of letters, digits, '_' and '-', separated by dots");
    YamlMap::Entry* e = cur ? cur->entry(part) : nullptr;  // cur is null below a key being added
    const std::string here = walked.empty() ? part : walked + "." + part;
    if (i + 1 == parts.size()) {
      if (e && e->map)
        return set_error(set, 1, here + " is a mapping; set one of its keys",
                         "see scenarios/README.md for the keys under " + here);
    } else if (e && !e->map) {
      return set_error(set, 1, here + " is not a mapping, so it has no key \"" + parts[i + 1] + "\"",
                       "see scenarios/README.md for the keys under " + here);
    } else {
      cur = e ? e->map.get() : nullptr;
    }
    walked = here;
    column += part.size() + 1;
  }
  root.set(dotted, set.substr(eq + 1), "<--set " + set + ">");
  return Status::Ok();
}

}  // namespace mlasim
