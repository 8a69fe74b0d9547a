// The model families `mlasim releases` lists (deploy/model_families.h): every family of vLLM 0.33's
// is_deepseek_mla list, the shipped configs of the ones mlasim reads, and check figures that are
// tools/bench/RESULTS.md's.
#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "deploy/model_families.h"

using namespace mlasim;

namespace {

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("every MLA family is listed, the ones mlasim reads with a shipped config and checks", "[report]") {
  const auto& table = model_family_table();
  REQUIRE(table.size() == hf_families().size());
  int read = 0;
  for (const ModelFamilyEntry& e : table) {
    INFO(e.family->model_type);
    const bool reads = e.family->kind == HfFamilyKind::kOneGroup || e.family->kind == HfFamilyKind::kSeveralGroups;
    read += reads;
    CHECK(reads == !e.shipped_configs.empty());
    CHECK(reads == !e.checks.empty());
    CHECK(e.status.rfind(reads ? "read: " : "", 0) == 0);
    for (const std::string& name : e.shipped_configs) {
      const std::string json = file_text(std::string(MLASIM_SOURCE_DIR) + "/scenarios/hf_configs/" + name);
      INFO(name);
      CHECK(json.find("\"model_type\": \"" + std::string(e.family->model_type) + "\"") != std::string::npos);
    }
  }
  CHECK(read == 15);  // 10 one-group families (kimi_k25 and hy_v4 included; 13 config files) and 5 with several groups
}

TEST_CASE("the families' check figures are RESULTS.md's", "[report]") {
  const std::string results = file_text(std::string(MLASIM_SOURCE_DIR) + "/tools/bench/RESULTS.md");
  REQUIRE(results.size() > 1000U);
  const std::regex number(R"(\d[\d,]*\d|\d)");
  int figures = 0;
  for (const ModelFamilyEntry& e : model_family_table()) {
    // The numbers of cited lines (~1138, "issue 49") are not figures.
    const std::string checks = std::regex_replace(e.checks, std::regex(R"(issue \d+)"), "");
    for (std::sregex_iterator it(checks.begin(), checks.end(), number), end; it != end; ++it) {
      const std::string n = it->str();
      if (n == "0" || n == "1" || n == "11") continue;  // "0 differing", "top-1", the 11 configs
      INFO(e.family->model_type << ": " << n);
      CHECK(results.find(n) != std::string::npos);
      ++figures;
    }
  }
  CHECK(figures > 20);
}
