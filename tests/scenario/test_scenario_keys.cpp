// The table of scenario keys drives reading and writing: every row set through --set loads, is
// written and reads back to the same value; every typed row refuses a value out of its type or
// bounds with the reader's message; scenarios/README.md documents every row with its type and default.
#include <catch2/catch.hpp>

#include <fstream>
#include <set>
#include <sstream>

#include "scenario/scenario_keys.h"
#include "scenario/scenario_loader.h"
#include "scenario/scenario_writer.h"

using namespace mlasim;

namespace {

const char* const kBase = "version: 1\nscheduler: {max_model_len: 1024}\nrequests:\n  - {id: a, prompt_len: 8, max_tokens: 2}\n";

Result<Scenario> load_with(const ScenarioKey& k, const std::string& value) {
  return load_scenario_text(kBase, "t.yaml", {key_path(k) + "=" + value});
}

std::string show(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

// Values of the key other than its default, nearest first.
std::vector<std::string> other_values(const ScenarioKey& k, const Scenario& d) {
  Scenario probe = d;
  switch (k.type) {
    case KeyType::kInt: {
      const int v = *static_cast<int*>(k.field(probe));
      return {std::to_string(v + 1), std::to_string(v - 1), std::to_string(2 * v)};
    }
    case KeyType::kOptionalInt: return {std::to_string(static_cast<long long>(k.min) + 1)};
    case KeyType::kBool: return {*static_cast<bool*>(k.field(probe)) ? "false" : "true"};
    case KeyType::kDouble: return {show(*static_cast<double*>(k.field(probe)) * 2 + 1)};
    case KeyType::kEnum: break;
  }
  std::vector<std::string> out;
  const char* current = k.enumeration.get(d);
  for (const std::string& name : k.enumeration.names())
    if (name != "auto" && (!current || name != current)) out.push_back(name);
  return out;
}

std::string value_text(const ScenarioKey& k, const Scenario& s) { return key_yaml(k, s).text(); }

}  // namespace

TEST_CASE("scenario keys: every row is read through --set, written, and read back the same", "[scenario_keys]") {
  Result<Scenario> base = load_scenario_text(kBase, "t.yaml");
  REQUIRE(base);
  for (const ScenarioKey& k : scenario_keys()) {
    INFO(key_path(k));
    CHECK(&key_of(base.value(), k.field(base.value())) == &k);  // the member names the row
    bool round_tripped = false;
    for (const std::string& value : other_values(k, base.value())) {
      Result<Scenario> set = load_with(k, value);
      if (!set) continue;  // a value the scenario's other keys rule out (a block size the backend refuses)
      INFO(value);
      CHECK(value_text(k, set.value()) == value);
      const std::string yaml = scenario_to_yaml(set.value(), "round trip");
      if (k.echo & kEchoWriter) CHECK(yaml.find(std::string(k.name) + ": " + value) != std::string::npos);
      Result<Scenario> back = load_scenario_text(yaml, "back.yaml");
      REQUIRE(back);
      CHECK(value_text(k, back.value()) == value);
      CHECK(scenario_to_yaml(back.value(), "round trip") == yaml);
      round_tripped = true;
      break;
    }
    CHECK(round_tripped);
  }
}

TEST_CASE("scenario keys: a value out of a row's type or bounds is refused at the key", "[scenario_keys]") {
  for (const ScenarioKey& k : scenario_keys()) {
    INFO(key_path(k));
    const auto max = static_cast<long long>(k.max);
    std::vector<std::pair<std::string, std::string>> refused;  // value, message
    switch (k.type) {
      case KeyType::kInt:
      case KeyType::kOptionalInt:
        refused.emplace_back("x", "expected an integer, got \"x\"");
        refused.emplace_back(std::to_string(max + 1),
                             (k.range_hint ? "must be between " + std::to_string(static_cast<long long>(k.min)) + " and "
                                           : std::string("must be <= ")) +
                                 std::to_string(max) + " (got " + std::to_string(max + 1) + ")");
        break;
      case KeyType::kBool: refused.emplace_back("maybe", "expected true or false, got \"maybe\""); break;
      case KeyType::kDouble:
        refused.emplace_back("-1", "must be >= 0.000000 (got -1)");
        refused.emplace_back("2e9", "more than 1e9 microseconds");
        break;
      case KeyType::kEnum:
        refused.emplace_back("nonesuch", std::string("unknown ") + k.enumeration.what + " \"nonesuch\"");
        break;
    }
    for (const auto& [value, message] : refused) {
      Result<Scenario> r = load_with(k, value);
      REQUIRE_FALSE(r);
      CHECK(r.error().key_path == key_path(k));
      CHECK(r.error().message == message);
    }
  }
}

TEST_CASE("scenario keys: scenarios/README.md documents every row with its type and default", "[scenario_keys]") {
  std::ifstream in(std::string(MLASIM_SOURCE_DIR) + "/scenarios/README.md");
  REQUIRE(in);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::set<std::string> seen;
  for (const ScenarioKey& k : scenario_keys()) {
    INFO(key_path(k));
    CHECK(seen.insert(key_path(k)).second);
    const std::string row = std::string("| `") + k.name + "` | " + k.type_doc + " | " + k.default_doc + " | " + k.doc;
    CHECK(std::count_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.rfind(row, 0) == 0; }) == 1);
  }
}
