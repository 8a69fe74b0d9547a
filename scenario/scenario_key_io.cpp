// Reading, writing and echoing scenario keys through their table (scenario/scenario_keys.h).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "base/check.h"
#include "scenario/scenario_keys.h"

namespace mlasim {
namespace {

// The key's member of a scenario that is only read (the accessors serve reads and writes alike).
template <class T>
const T& value_of(const ScenarioKey& k, const Scenario& s) {
  return *static_cast<const T*>(k.field(const_cast<Scenario&>(s)));
}

template <class T>
T& member_of(const ScenarioKey& k, Scenario& s) {
  return *static_cast<T*>(k.field(s));
}

bool same_text(const char* a, const char* b) { return a == b || (a && b && std::strcmp(a, b) == 0); }

// Whether the key's value differs from a default Scenario's.
bool differs_from_default(const ScenarioKey& k, const Scenario& s) {
  static const Scenario defaults;
  switch (k.type) {
    case KeyType::kInt: return value_of<int>(k, s) != value_of<int>(k, defaults);
    case KeyType::kBool: return value_of<bool>(k, s) != value_of<bool>(k, defaults);
    case KeyType::kDouble: return value_of<double>(k, s) != value_of<double>(k, defaults);
    case KeyType::kOptionalInt: return value_of<std::optional<int>>(k, s) != value_of<std::optional<int>>(k, defaults);
    case KeyType::kEnum: return !same_text(k.enumeration.get(s), k.enumeration.get(defaults));
  }
  return false;
}

void read_int_key(const YamlReader& r, const YamlNode& n, const std::string& path, const ScenarioKey& k, int& out) {
  const auto min = static_cast<long long>(k.min), max = static_cast<long long>(k.max);
  if (!k.range_hint) {
    out = r.read_int(n, path, min, max);
    return;
  }
  const long long v = r.read_integer(n, path, -(1LL << 40), 1LL << 40);
  if (v < min || v > max)
    r.fail(n, path, "must be between " + std::to_string(min) + " and " + std::to_string(max) + " (got " +
                        std::to_string(v) + ")",
           k.range_hint);
  out = static_cast<int>(v);
}

void read_enum_key(const YamlReader& r, const YamlNode& n, const std::string& path, const ScenarioKey& k,
                   Scenario& s) {
  const std::string text = r.read_string(n, path);
  if (!k.enumeration.set(s, text))
    r.fail(n, path, std::string("unknown ") + k.enumeration.what + " \"" + text + "\"",
           "choose one of: " + names_list(k.enumeration.names()));
}

const char* enum_text(const ScenarioKey& k, const Scenario& s) {
  const char* name = k.enumeration.get(s);
  return name ? name : "-";
}

std::string printed_value(const ScenarioKey& k, const Scenario& s) {
  switch (k.type) {
    case KeyType::kInt: return std::to_string(value_of<int>(k, s));
    case KeyType::kBool: return value_of<bool>(k, s) ? "on" : "off";
    case KeyType::kDouble: return fmt::format("{}", value_of<double>(k, s));
    case KeyType::kOptionalInt: {
      const std::optional<int>& v = value_of<std::optional<int>>(k, s);
      return v ? std::to_string(*v) : "-";
    }
    case KeyType::kEnum: return enum_text(k, s);
  }
  return "";
}

}  // namespace

std::string names_list(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : " | ") + n;
  return out;
}

const ScenarioKey& key_of(const Scenario& s, const void* member) {
  const ScenarioKey* found = nullptr;
  for (const ScenarioKey& k : scenario_keys())
    if (k.field(const_cast<Scenario&>(s)) == member) {
      found = &k;
      break;
    }
  MLASIM_CHECK(found != nullptr, "no scenario key sets this member");
  return *found;
}

const ScenarioKey* find_key(const std::string& path) {
  for (const ScenarioKey& k : scenario_keys())
    if (key_path(k) == path) return &k;
  return nullptr;
}

std::string key_path(const ScenarioKey& k) { return join_key(k.section, k.name); }

std::vector<std::string> section_key_names(const std::string& section) {
  std::vector<std::string> names, last;
  for (const ScenarioKey& k : scenario_keys())
    if (k.section == section) ((k.echo & kEchoListedLast) ? last : names).push_back(k.name);
  names.insert(names.end(), last.begin(), last.end());
  return names;
}

void read_key(const YamlReader& r, const YamlNode& node, const ScenarioKey& k, Scenario& s) {
  const YamlNode n = node[k.name];
  if (!n) return;
  const std::string path = key_path(k);
  switch (k.type) {
    case KeyType::kInt: read_int_key(r, n, path, k, member_of<int>(k, s)); break;
    case KeyType::kBool: member_of<bool>(k, s) = r.read_bool(n, path); break;
    case KeyType::kDouble: member_of<double>(k, s) = r.read_double(n, path, k.min); break;
    case KeyType::kOptionalInt:
      member_of<std::optional<int>>(k, s) =
          r.read_int(n, path, static_cast<long long>(k.min), static_cast<long long>(k.max));
      break;
    case KeyType::kEnum: read_enum_key(r, n, path, k, s); break;
  }
  if (k.check) k.check(KeyRead{r, n, path, k, s});
}

void read_section_keys(const YamlReader& r, const YamlNode& node, const std::string& section, Scenario& s,
                       const void* skip) {
  for (const ScenarioKey& k : scenario_keys())
    if (k.section == section && k.field(s) != skip) read_key(r, node, k, s);
}

YamlValue key_yaml(const ScenarioKey& k, const Scenario& s) {
  switch (k.type) {
    case KeyType::kInt: return YamlValue::number(value_of<int>(k, s));
    case KeyType::kBool: return YamlValue::boolean(value_of<bool>(k, s));
    case KeyType::kDouble: return YamlValue::number(value_of<double>(k, s));
    case KeyType::kOptionalInt: return YamlValue::number(value_of<std::optional<int>>(k, s).value_or(0));
    case KeyType::kEnum: return YamlValue::plain(enum_text(k, s));
  }
  return YamlValue::plain("");
}

YamlValue section_yaml(const Scenario& s, const std::string& section) {
  YamlValue out = YamlValue::mapping(YamlValue::Style::kFlow);
  for (const ScenarioKey& k : scenario_keys())
    if (k.section == section && (k.echo & kEchoWriter) && (k.written ? k.written(s) : differs_from_default(k, s)))
      out.set(k.name, key_yaml(k, s));
  return out;
}

YamlValue keys_yaml(const Scenario& s, const std::vector<const void*>& members) {
  YamlValue out = YamlValue::mapping(YamlValue::Style::kFlow);
  for (const ScenarioKey& k : scenario_keys())
    if (std::find(members.begin(), members.end(), k.field(const_cast<Scenario&>(s))) != members.end())
      out.set(k.name, key_yaml(k, s));
  return out;
}

std::vector<std::string> key_sections() {
  std::vector<std::string> out;
  for (const ScenarioKey& k : scenario_keys())
    if (out.empty() || out.back() != k.section) out.push_back(k.section);
  return out;
}

void write_key_json(JsonWriter& w, const ScenarioKey& k, const Scenario& s) {
  w.key(k.name);
  switch (k.type) {
    case KeyType::kInt: w.value(value_of<int>(k, s)); break;
    case KeyType::kBool: w.value(value_of<bool>(k, s)); break;
    case KeyType::kDouble: w.value(value_of<double>(k, s)); break;
    case KeyType::kOptionalInt: w.value(value_of<std::optional<int>>(k, s).value_or(0)); break;
    case KeyType::kEnum: w.value(enum_text(k, s)); break;
  }
}

void write_section_json(JsonWriter& w, const Scenario& s, const std::string& section) {
  for (const ScenarioKey& k : scenario_keys())
    if (k.section == section && (k.echo & kEchoResolvedTrace)) write_key_json(w, k, s);
}

std::string printed_section(const Scenario& s, const std::string& section) {
  std::string out;
  for (const ScenarioKey& k : scenario_keys()) {
    if (k.section != section || !(k.echo & kEchoPrinter)) continue;
    const std::string text =
        k.printed ? k.printed(s) : std::string(k.printer_label ? k.printer_label : k.name) + "=" + printed_value(k, s);
    if (!text.empty()) out += (out.empty() ? "" : " ") + text;
  }
  return out;
}

}  // namespace mlasim
