// The scenario keys of the scheduler, engine, cache, parallel and timing sections, one row each:
// the YAML name, its type and bounds, the default and a line of documentation (scenarios/README.md
// shows them; a test holds the two together), the config member it sets, and which outputs echo
// it. The section reader, the scenario writer, the printer, the resolved trace and the fuzzer's
// knobs iterate over the rows (as vLLM's EngineArgs fields drive its argparse), so a key is added
// by adding its row.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "base/formats/json_writer.h"
#include "config/scenario.h"
#include "scenario/yaml_document.h"
#include "scenario/yaml_reader.h"

namespace mlasim {

enum class KeyType {
  kInt,          // int, in [min, max]
  kBool,         // bool
  kDouble,       // double, >= min (and <= max, checked by the row's check)
  kOptionalInt,  // std::optional<int>, in [min, max] when given
  kEnum,         // a name (KeyEnum)
};

// Which outputs echo a key's resolved value.
enum KeyEcho : unsigned {
  kEchoWriter = 1u << 0,         // the scenario writer (scenario/scenario_writer.h), when `written`
  kEchoResolvedTrace = 1u << 1,  // the resolved trace's header (output/resolved_trace.h)
  kEchoPrinter = 1u << 2,        // `describe`'s section line (output/scenario_printer.h)
  kEchoListedLast = 1u << 3,     // listed after the section's other keys in the unknown-key hint
};

// An enum key's names.
struct KeyEnum {
  const char* what = nullptr;                              // "scheduling policy": "unknown <what> \"x\""
  std::vector<std::string> (*names)() = nullptr;           // "choose one of: ..."
  const char* (*get)(const Scenario&) = nullptr;           // the value's name; nullptr when not set
  bool (*set)(Scenario&, const std::string&) = nullptr;    // false: not one of the names
};

struct ScenarioKey;

// A key just read, for its row's check.
struct KeyRead {
  const YamlReader& reader;
  const YamlNode& node;
  const std::string& path;  // "scheduler.block_size"
  const ScenarioKey& key;
  Scenario& scenario;
};

struct ScenarioKey {
  const char* section;
  const char* name;
  KeyType type;
  double min = 0, max = 0;
  const char* type_doc;     // scenarios/README.md's "type" column
  const char* default_doc;  // its "default" column
  const char* doc;          // the start of its "meaning" column
  unsigned echo = 0;        // KeyEcho bits
  // The member the key sets: int, bool, double, std::optional<int>, or the enum (whose text goes
  // through `enumeration`). It also names the row (key_of).
  void* (*field)(Scenario&) = nullptr;
  KeyEnum enumeration = {};
  // With a hint: an int read as any integer, then refused outside [min, max] as "must be between".
  const char* range_hint = nullptr;
  // The writer writes the key when this holds; nullptr: when its value differs from Scenario{}'s.
  bool (*written)(const Scenario&) = nullptr;
  // Rules of the key beyond its type and bounds, run after it is read (and only then).
  void (*check)(const KeyRead&) = nullptr;
  const char* printer_label = nullptr;  // kEchoPrinter: "label=value" (nullptr: the name)
  // kEchoPrinter: the printed text instead of "label=value" ("" leaves the key out).
  std::string (*printed)(const Scenario&) = nullptr;
  const char* fuzz_knob = nullptr;  // the `mlasim fuzz --vary` knob that draws it
};

// "a | b | c": the names an enum key (or the model's preset) is one of.
std::string names_list(const std::vector<std::string>& names);

// Every row, sections in the scenario's order and keys in each section's (written) order.
std::span<const ScenarioKey> scenario_keys();

// The row whose member is `member` of `s` (key_of(s, &s.scheduler.max_num_seqs)); aborts when none is.
const ScenarioKey& key_of(const Scenario& s, const void* member);
// The row of a member named by member pointers: key_of(&Scenario::scheduler, &SchedulerConfig::max_num_seqs).
template <class Section, class Member>
const ScenarioKey& key_of(Section Scenario::*section, Member Section::*member) {
  static const Scenario probe;
  return key_of(probe, &(probe.*section.*member));
}
// The row by its path ("scheduler.max_num_seqs"); nullptr when none.
const ScenarioKey* find_key(const std::string& path);
std::string key_path(const ScenarioKey& k);  // "scheduler.max_num_seqs"

// The section's key names as expect_map takes them.
std::vector<std::string> section_key_names(const std::string& section);
// Reads the section's keys present in `node` (a mapping, already checked), in the table's order;
// rows whose member `skip` is are left for a later read.
void read_section_keys(const YamlReader& r, const YamlNode& node, const std::string& section, Scenario& s,
                       const void* skip = nullptr);
void read_key(const YamlReader& r, const YamlNode& node, const ScenarioKey& k, Scenario& s);

// The key's value as the writer writes it.
YamlValue key_yaml(const ScenarioKey& k, const Scenario& s);
// The writer's flow mapping of the section: its kEchoWriter rows that are `written`.
YamlValue section_yaml(const Scenario& s, const std::string& section);
// A flow mapping of the keys whose members of `s` are `members` (&s.scheduler.max_num_seqs, ...),
// with their values in `s`, in the table's order: a scenario written key by key.
YamlValue keys_yaml(const Scenario& s, const std::vector<const void*>& members);
// The sections of the rows, in the table's order.
std::vector<std::string> key_sections();
// The key as a JSON member: its name and its value in `s`.
void write_key_json(JsonWriter& w, const ScenarioKey& k, const Scenario& s);
// The section's kEchoResolvedTrace rows as JSON members, in order.
void write_section_json(JsonWriter& w, const Scenario& s, const std::string& section);
// The section's kEchoPrinter rows, "label=value" each, separated by spaces.
std::string printed_section(const Scenario& s, const std::string& section);

}  // namespace mlasim
