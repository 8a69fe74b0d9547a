// --set, walked once for the scenario loader's tree and the importer's document: the messages and
// columns are the same whichever tree it walks.
#include <catch2/catch.hpp>

#include "scenario/scenario_loader.h"
#include "scenario/set_override.h"
#include "tools/import/scenario_yaml.h"

using namespace mlasim;

namespace {

const char* kMinimal = "version: 1\nmodel: {preset: tiny}\nrequests:\n  - {id: a, prompt: [5, 6, 7]}\n";

Error loader_error(const std::string& set) {
  Result<Scenario> r = load_scenario_text(kMinimal, "t.yaml", {set});
  REQUIRE_FALSE(r.ok());
  return r.error();
}

Error import_error(const std::string& set) {
  YamlValue doc = YamlValue::mapping(YamlValue::Style::kBlock);
  set_scalar(doc, "model.preset", "tiny");
  Status st = apply_import_set(doc, set);
  REQUIRE_FALSE(st.ok());
  return st.error();
}

}  // namespace

TEST_CASE("parse_set splits key, segments and value with their columns", "[set]") {
  Result<SetArgument> a = parse_set("scheduler.max_num_seqs=4", "example");
  REQUIRE(a.ok());
  CHECK(a.value().label == "<--set scheduler.max_num_seqs=4>");
  CHECK(a.value().key == "scheduler.max_num_seqs");
  CHECK(a.value().parts == std::vector<std::string>{"scheduler", "max_num_seqs"});
  CHECK(a.value().columns == std::vector<int>{1, 11});
  CHECK(a.value().value == "4");
  CHECK(a.value().value_column == 24);
}

TEST_CASE("a malformed --set reads the same from run and import", "[set]") {
  struct Case {
    const char* set;
    int column;
    const char* message;
  };
  for (const Case& c : {Case{"noequals", 1, "expected key=value"}, Case{"=5", 1, "expected key=value"},
                        Case{"engine.profile=", 16, "no value after '='"},
                        Case{"model..preset=tiny", 7, "empty key segment in \"model..preset\""},
                        Case{"model.pre set=tiny", 10, "unexpected character in the key \"model.pre set\""},
                        Case{"model=tiny", 1, "model is a mapping; set one of its keys"},
                        Case{"model.preset.size=1", 1, "model.preset is not a mapping, so it has no key \"size\""}}) {
    INFO(c.set);
    for (const Error& e : {loader_error(c.set), import_error(c.set)}) {
      CHECK(e.file == std::string("<--set ") + c.set + ">");
      CHECK(e.line == 1);
      CHECK(e.column == c.column);
      CHECK(e.message == c.message);
    }
  }
}

TEST_CASE("set on the loader tree: lists by index, a mapping replaced by a mapping, aliases kept apart", "[set]") {
  Result<Scenario> r = load_scenario_text(
      "version: 1\nrequests:\n  - {id: a, prompt: &p [5, 6, 7]}\n  - {id: b, prompt: *p}\n", "t.yaml",
      {"requests.0.max_tokens=4", "requests.0.prompt=[1, 2]", "model={preset: tiny, seed: 3}"});
  REQUIRE(r.ok());
  CHECK(r.value().requests[0].max_tokens == 4);
  CHECK(r.value().requests[0].prompt == std::vector<int>{1, 2});
  CHECK(r.value().requests[1].prompt == std::vector<int>{5, 6, 7});  // the alias's other use is untouched
  CHECK(r.value().model.seed == 3);
  CHECK(loader_error("requests.0=5").message == "requests[0] is a mapping; set one of its keys");
}

TEST_CASE("set on the import document adds and replaces scalars, never the requests", "[set]") {
  YamlValue doc = YamlValue::mapping(YamlValue::Style::kBlock);
  set_scalar(doc, "model.preset", "tiny", "--model");
  REQUIRE(apply_import_set(doc, "model.preset=v3-attn").ok());
  REQUIRE(apply_import_set(doc, "scheduler.max_num_seqs=8").ok());
  CHECK(find_scalar(doc, "model.preset")->text() == "v3-attn");
  CHECK(find_scalar(doc, "model.preset")->origin() == "<--set model.preset=v3-attn>");
  CHECK(emit_yaml(doc) == "model:\n  preset: v3-attn\nscheduler:\n  max_num_seqs: 8\n");
  CHECK(import_error("requests.0.max_tokens=4").message ==
        "requests: the imported requests cannot be changed with --set");
}
