// Shared by the fuzz tests: a base scenario from --set style overrides, as the CLI builds it.
#pragma once

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "scenario/scenario_loader.h"
#include "tools/fuzz/trace_distribution.h"

namespace mlasim::test {

inline TraceDistribution fuzz_distribution(const std::vector<std::string>& sets, unsigned vary = kDefaultKnobs) {
  Result<Scenario> base = load_scenario_text("version: 1\nname: fuzz\nrequests: [{id: r0, prompt_len: 1}]\n",
                                             "<fuzz base>", sets);
  REQUIRE(base.ok());
  TraceDistribution d;
  d.base = base.value();
  d.vary = vary;
  for (const std::string& set : sets) d.vary &= ~knob_of_key(set.substr(0, set.find('=')));
  return d;
}

}  // namespace mlasim::test
