// The scenario loader as a libFuzzer target: any bytes as a scenario file, with the seed corpus of
// scenarios/. Loading must return a Scenario or an Error, never crash, hang or trip a sanitizer
// (a failed MLASIM_CHECK aborts, so a reachable invariant is a finding too). Built with clang only;
// tests/fuzz/hostile/README.md says how to build and run it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "scenario/scenario_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  mlasim::Result<mlasim::Scenario> scenario = mlasim::load_scenario_text(text, "fuzz.yaml");
  if (scenario) {
    // A loaded scenario describes itself and its requests without trouble.
    volatile std::size_t n = scenario.value().requests.size();
    (void)n;
  } else {
    volatile std::size_t n = scenario.error().format().size();
    (void)n;
  }
  return 0;
}
