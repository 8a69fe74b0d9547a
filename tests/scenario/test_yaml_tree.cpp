// The compact YAML tree the loader reads: structure, marks and tags as yaml-cpp reports them,
// aliases shared, documents counted, the edits --set makes, and its size per node.
#include <catch2/catch.hpp>

#include <string>

#include "scenario/scenario_loader.h"
#include "scenario/yaml_tree.h"

using namespace mlasim;

TEST_CASE("the tree holds mappings, lists and scalars with their marks and tags", "[yaml]") {
  YamlTree t;
  const YamlNode root = t.parse("a: 1\nb: [x, 'y', !!str 3]\nc:\nd: {e: ~}\n");
  REQUIRE(root.IsMap());
  REQUIRE(root.size() == 4);
  CHECK(root.key_at(1).Scalar() == "b");
  CHECK(root["a"].Scalar() == "1");
  CHECK(root["a"].Tag() == "?");
  CHECK(root["a"].Mark().line == 0);
  CHECK(root["a"].Mark().column == 3);
  const YamlNode b = root["b"];
  REQUIRE(b.IsSequence());
  REQUIRE(b.size() == 3);
  CHECK(b.Mark().line == 1);
  CHECK(b.Mark().column == 3);
  CHECK(b[0].Scalar() == "x");
  CHECK(b[1].Tag() == "!");  // quoted
  CHECK(b[2].Tag() == "tag:yaml.org,2002:str");
  CHECK(b[2].Mark().column == 12);  // at its tag
  CHECK_FALSE(b[3].IsDefined());
  CHECK(root["c"].IsNull());  // an empty value
  CHECK(root["d"]["e"].IsNull());
  CHECK_FALSE(root["missing"]);
  CHECK_FALSE(root["a"]["x"]);  // a scalar has no keys
  CHECK(root["a"].size() == 0);
}

TEST_CASE("an alias is the anchored node itself, duplicate keys are kept in order", "[yaml]") {
  YamlTree t;
  const YamlNode root = t.parse("p: &p [5, 6]\nq: *p\nk: 1\nk: 2\n");
  CHECK(root["p"].id() == root["q"].id());
  CHECK(root["q"].Mark().line == 0);  // where the anchored node is
  REQUIRE(root.size() == 4);
  CHECK(root["k"].Scalar() == "1");  // a lookup finds the first
  CHECK(root.value_at(3).Scalar() == "2");
  CHECK_THROWS_AS(t.parse("a: *nowhere\n"), YamlSyntaxError);
}

TEST_CASE("documents are counted: none is null, a second one is reported where it starts", "[yaml]") {
  YamlTree t;
  CHECK(t.parse("").IsNull());
  CHECK(t.parse("").Mark().is_null());
  YamlMark second;
  CHECK(t.parse("a: 1\n", &second)["a"].Scalar() == "1");
  CHECK(second.is_null());
  t.parse("a: 1\n---\nb: 2\n", &second);
  CHECK(second.line == 1);
  CHECK(second.column == 0);
  // yaml-cpp 0.7's parser starts a document at a stray ',' forever; the tree reports it instead.
  CHECK_THROWS_AS(t.parse(",\n"), YamlSyntaxError);
}

TEST_CASE("edits for --set touch one slot: copies keep the children, new keys append", "[yaml]") {
  YamlTree t;
  const YamlNode root = t.parse("m: &m {x: 1}\nn: *m\n");
  const std::uint32_t copy = t.copy_collection(root["m"].id());
  t.set_map_value(copy, "x", t.parse("2").id());
  t.set_map_value(copy, "y", t.parse("3").id());
  CHECK(t.node(copy)["x"].Scalar() == "2");
  CHECK(t.node(copy)["y"].Scalar() == "3");
  CHECK(t.node(copy).key_at(1).Mark().is_null());
  CHECK(root["n"]["x"].Scalar() == "1");  // the original and its alias are unchanged
  CHECK(root["n"].size() == 1);
  const std::uint32_t fresh = t.new_map();
  CHECK(t.node(fresh).IsMap());
  CHECK(t.node(fresh).size() == 0);
  CHECK(t.node(fresh).Mark().is_null());
  CHECK(t.node(fresh).Tag().empty());
}

TEST_CASE("a tree costs tens of bytes a node, not yaml-cpp's kilobytes a request", "[yaml]") {
  std::string text = "requests:\n";
  const int n = 10000;
  for (int i = 0; i < n; ++i) text += "  - {id: r" + std::to_string(i) + ", prompt: [5], max_tokens: 1}\n";
  YamlTree t;
  const YamlNode root = t.parse(text);
  REQUIRE(root["requests"].size() == static_cast<std::size_t>(n));
  CHECK(root["requests"][n - 1]["id"].Scalar() == "r" + std::to_string(n - 1));
  // 8 nodes a request (a mapping, 3 keys, 3 values, 1 list entry) at 24 bytes, 8 child slots at
  // 4 bytes and ~25 characters; vector growth may double each arena.
  CHECK(sizeof(YamlTree::Node) == 24);
  CHECK(t.memory_bytes() < static_cast<std::size_t>(n) * 2 * (8 * 24 + 8 * 4 + 25) + 4096);
}

TEST_CASE("an override (--set) through an aliased request changes that request only", "[yaml][loader]") {
  const std::string text =
      "version: 1\nrequests:\n  - &r {id: a, prompt: &p [5, 6], max_tokens: 2}\n"
      "  - {id: b, prompt: *p}\n";
  Result<Scenario> s = load_scenario_text(text, "t.yaml", {"requests.0.prompt=[7]", "requests.1.max_tokens=3"});
  REQUIRE(s.ok());
  CHECK(s.value().requests[0].prompt == std::vector<int>{7});
  CHECK(s.value().requests[1].prompt == std::vector<int>{5, 6});
  CHECK(s.value().requests[0].max_tokens == 2);
  CHECK(s.value().requests[1].max_tokens == 3);
  // A whole request shared by an alias: the second needs its own id, so it is given by --set;
  // the first keeps its own.
  const std::string shared = "version: 1\nrequests:\n  - &r {id: a, prompt: [5], max_tokens: 2}\n  - *r\n";
  Result<Scenario> t = load_scenario_text(shared, "t.yaml", {"requests.1.id=b", "requests.1.max_tokens=4"});
  REQUIRE(t.ok());
  CHECK(t.value().requests[0].id == "a");
  CHECK(t.value().requests[0].max_tokens == 2);
  CHECK(t.value().requests[1].id == "b");
  CHECK(t.value().requests[1].max_tokens == 4);
  // Without the --set both are request a; an alias is its anchored node, so the error points
  // where that node is written (as yaml-cpp's own nodes would).
  Result<Scenario> u = load_scenario_text(shared, "t.yaml", {});
  REQUIRE_FALSE(u.ok());
  CHECK(u.error().headline() == "t.yaml:3:13: error: requests[1].id: duplicate request id \"a\"");
}
