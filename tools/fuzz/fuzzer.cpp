// The fuzz loop over runs 0, 1, 2, ... of one seed.
#include "tools/fuzz/fuzzer.h"

#include <chrono>

#include "base/check.h"
#include "tools/fuzz/scenario_validity.h"

namespace mlasim {

FuzzResult fuzz(const FuzzOptions& options) {
  FuzzResult result;
  const auto start = std::chrono::steady_clock::now();
  for (int run = 0; run < options.max_runs; ++run) {
    if (options.max_seconds > 0 && (run & 63) == 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= options.max_seconds)
      break;
    Scenario trace = generate_trace(options.distribution, options.seed, run);
    const std::string problem = scenario_problem(trace);
    MLASIM_CHECK(problem.empty(), "the fuzzer drew an invalid trace (" + trace.name + "): " + problem);
    ++result.runs;
    if (std::optional<Violation> v = check_properties(trace, options.properties)) {
      result.violation = std::move(v);
      result.trace = std::move(trace);
      result.run = run;
      break;
    }
  }
  return result;
}

}  // namespace mlasim
