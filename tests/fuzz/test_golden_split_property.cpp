// matches_golden_split: split goldens recorded for a seed's runs match a replay of the same runs;
// a changed or missing golden is the violation, at its run, naming the file and the first
// differing line.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/fuzz/fuzz_test_util.h"
#include "tools/fuzz/fuzzer.h"
#include "verify/split_golden.h"

namespace mlasim {
namespace {

namespace fs = std::filesystem;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST_CASE("matches_golden_split: recorded goldens match, a changed or missing one is found at its run", "[fuzz]") {
  const TraceDistribution d = test::fuzz_distribution({"engine.attention_backend=flashinfer-mla"});
  const fs::path dir = fs::temp_directory_path() / "mlasim_test_golden_split";
  fs::remove_all(dir);
  for (int run = 0; run < 30; ++run) {
    const Scenario trace = generate_trace(d, 11, run);
    const std::string path = split_golden_path(dir.string(), trace.name);
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << split_golden_text(trace, "test");
  }
  FuzzOptions o;
  o.distribution = d;
  o.seed = 11;
  o.max_runs = 30;
  o.properties = PropertyOptions{{Property::kMatchesGoldenSplit}, {}, dir.string()};
  FuzzResult same = fuzz(o);
  CHECK(same.runs == 30);
  CHECK_FALSE(same.violation);

  // Run 17's first step line says one more decode token than the replay gives.
  const std::string path17 = split_golden_path(dir.string(), "fuzz_11_17");
  std::string text = slurp(path17);
  const std::size_t at = text.find("step 0 | decode ");
  REQUIRE(at != std::string::npos);
  text.insert(at + std::string("step 0 | decode ").size(), "9");
  std::ofstream(path17) << text;
  FuzzResult changed = fuzz(o);
  REQUIRE(changed.violation);
  CHECK(changed.run == 17);
  CHECK(changed.violation->property == Property::kMatchesGoldenSplit);
  CHECK(changed.violation->detail.rfind(path17 + ":6: split differs from the golden\n  expected: step 0 | decode 9", 0) == 0);

  fs::remove(split_golden_path(dir.string(), "fuzz_11_3"));
  FuzzResult missing = fuzz(o);
  REQUIRE(missing.violation);
  CHECK(missing.run == 3);
  CHECK(missing.violation->detail.find("fuzz_11_3/split.txt: no split golden") != std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mlasim
