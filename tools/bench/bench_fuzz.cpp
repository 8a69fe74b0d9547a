// Fuzz throughput: runs per second of the fuzz loop on small traces (at most 8 requests), dry run,
// one thread. Validates first (under vllm-current + FlashInfer-MLA the loop finds a fresh prefill
// on the decode path and shrinks it to a lone 1-token prompt), then times in-process: drawing
// traces alone, and the whole loop (draw + validity check + replay + properties) under strict, where
// nothing is found so every run replays to the end; then `mlasim fuzz` end to end as a child.
// Usage: bench_fuzz [--mlasim PATH] [--runs N=20000] [--reps R=3]
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "scenario/scenario_loader.h"
#include "tools/bench/child_process.h"
#include "tools/fuzz/fuzzer.h"
#include "tools/fuzz/shrinker.h"

namespace {

using namespace mlasim;

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "bench_fuzz: FAILED: %s\n", why.c_str());
  std::exit(1);
}

TraceDistribution distribution(const char* profile) {
  Result<Scenario> base = load_scenario_text("version: 1\nname: fuzz\nrequests: [{id: r0, prompt_len: 1}]\n",
                                             "<bench base>", {std::string("engine.profile=") + profile,
                                                              "engine.attention_backend=flashinfer-mla"});
  if (!base) die(base.error().format());
  TraceDistribution d;
  d.base = base.value();
  d.max_requests = 8;
  return d;
}

FuzzOptions options(const char* profile, int runs) {
  FuzzOptions o;
  o.distribution = distribution(profile);
  o.properties.properties = {Property::kNoFreshPrefillOnDecodePath, Property::kStepInvariants};
  o.seed = 1;
  o.max_runs = runs;
  return o;
}

void validate() {
  const FuzzResult found = fuzz(options("vllm-current", 300));
  if (!found.violation || found.violation->property != Property::kNoFreshPrefillOnDecodePath)
    die("no fresh prefill on the decode path found under vllm-current in 300 runs");
  ShrinkOptions so;
  so.property = found.violation->property;
  const ShrinkResult shrunk = shrink(*found.trace, *found.violation, so);
  if (shrunk.scenario.requests.size() != 1 || shrunk.scenario.requests[0].prompt.size() != 1)
    die("the finding did not shrink to a lone 1-token prompt");
  std::printf("validated: vllm-current + flashinfer-mla found at run %d, shrunk in %d replays to 1 request, P=1\n",
              found.run, shrunk.attempts);
}

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct Timing {
  double wall = 1e30, cpu = 1e30;  // the best of the repetitions, each
};

// On a shared machine the wall time includes waiting for a core; the thread's CPU time does not.
template <class F>
Timing best_seconds(int reps, F&& f) {
  Timing best;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = thread_cpu_seconds();
    f();
    best.cpu = std::min(best.cpu, thread_cpu_seconds() - c0);
    best.wall = std::min(best.wall, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mlasim_path = (std::filesystem::path(argv[0]).parent_path() / "../mlasim/mlasim").string();
  int runs = 20000, reps = 3;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--mlasim") && i + 1 < argc) mlasim_path = argv[++i];
    else if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) runs = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) reps = std::max(1, std::atoi(argv[++i]));
    else die(std::string("unknown argument ") + argv[i] + " (usage: bench_fuzz [--mlasim PATH] [--runs N] [--reps R])");
  }
  validate();
  const FuzzOptions strict = options("strict", runs);
  long requests = 0;
  const Timing draw = best_seconds(reps, [&] {
    requests = 0;
    for (int run = 0; run < runs; ++run) requests += static_cast<long>(generate_trace(strict.distribution, 1, run).requests.size());
  });
  int done = 0;
  const Timing loop = best_seconds(reps, [&] {
    const FuzzResult r = fuzz(strict);
    if (r.violation) die("a violation under strict: " + r.violation->detail);
    done = r.runs;
  });
  std::printf("traces: %d runs, %.2f requests per trace (at most 8), seed 1, strict + flashinfer-mla, default knobs\n",
              runs, static_cast<double>(requests) / runs);
  std::printf("in-process, one thread (best of %d):\n", reps);
  std::printf("  draw only             %9.0f traces/s (wall)  %9.0f per CPU second\n", runs / draw.wall, runs / draw.cpu);
  std::printf("  fuzz loop (dry run)   %9.0f runs/s (wall)    %9.0f per CPU second   target >= 10000 runs/s\n",
              done / loop.wall, done / loop.cpu);

  const std::string out = (std::filesystem::temp_directory_path() / "bench_fuzz.out").string();
  const std::string err = (std::filesystem::temp_directory_path() / "bench_fuzz.err").string();
  const std::vector<std::string> args = {mlasim_path, "fuzz", "--seed", "1", "--runs", std::to_string(runs),
                                         "--set", "engine.profile=strict", "--set",
                                         "engine.attention_backend=flashinfer-mla"};
  double best_wall = 1e30, best_cpu = 1e30;
  for (int r = 0; r < reps; ++r) {
    const bench::Child c = bench::run_child(args, out, err);
    if (c.exit_code != 0) die("mlasim fuzz exited " + std::to_string(c.exit_code) + " " + c.error + " (see " + err + ")");
    best_wall = std::min(best_wall, c.wall_s);
    best_cpu = std::min(best_cpu, c.cpu_s);
  }
  std::ifstream summary(out);
  std::string line, last;
  while (std::getline(summary, line)) last = line;
  if (last != "no violation in " + std::to_string(runs) + " runs") die("mlasim fuzz printed \"" + last + "\"");
  std::printf("end to end: mlasim fuzz --runs %d (best of %d): %.3f s wall, %.3f s CPU: %.0f runs/s (wall), %.0f per CPU second\n",
              runs, reps, best_wall, best_cpu, runs / best_wall, runs / best_cpu);
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return 0;
}
