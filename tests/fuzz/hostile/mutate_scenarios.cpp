// The hostile-user test: a seeded mutator over every scenario in scenarios/ runs the real mlasim on
// each mutant (`mlasim run MUTANT --dry-run --table none`, as a child) for a bounded time and
// asserts that it exits 0, 1, 2 or 4 (a trace vLLM's scheduler cannot run, named so), never by a
// signal or a timeout, prints no sanitizer report, and names file:line in every exit-2 message. A failing mutant is kept in --keep-dir for
// reproduction. Deterministic for a seed (the number of mutants depends on --time).
// Usage: mutate_scenarios --mlasim PATH --scenarios DIR [--seed S] [--time SECONDS] [--runs N] [--keep-dir DIR]
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "tests/fuzz/hostile/mutator.h"
#include "tools/bench/child_process.h"

namespace fs = std::filesystem;

namespace {

using hostile::Mutator;
using hostile::lines_of;
using hostile::slurp;

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "mutate_scenarios: %s\n", why.c_str());
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string mlasim, scenarios, keep_dir;
  std::uint64_t seed = 1;
  double seconds = 30;
  long max_runs = -1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--mlasim") mlasim = value();
    else if (a == "--scenarios") scenarios = value();
    else if (a == "--seed") seed = std::strtoull(value().c_str(), nullptr, 10);
    else if (a == "--time") seconds = std::atof(value().c_str());
    else if (a == "--runs") max_runs = std::atol(value().c_str());
    else if (a == "--keep-dir") keep_dir = value();
    else die("unknown argument " + a + " (see the header of tests/fuzz/mutate_scenarios.cpp)");
  }
  if (mlasim.empty() || scenarios.empty()) die("give --mlasim PATH and --scenarios DIR");
  // Work on a copy, so mutants sit beside the requests files their scenarios name.
  std::string tmpl = (fs::temp_directory_path() / "mutate_scenarios.XXXXXX").string();
  if (!mkdtemp(tmpl.data())) die("mkdtemp failed");
  const fs::path work = tmpl;
  fs::copy(scenarios, work / "scenarios", fs::copy_options::recursive);
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(work / "scenarios"))
    if (e.is_regular_file() && e.path().extension() == ".yaml") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) die("no scenarios under " + scenarios);
  std::vector<std::string> texts, corpus;
  for (const fs::path& f : files) {
    texts.push_back(slurp(f));
    for (const std::string& l : lines_of(texts.back())) corpus.push_back(l);
  }
  const std::regex located(R"(:[0-9]+(:[0-9]+)?: error: )");
  const auto start = std::chrono::steady_clock::now();
  long runs = 0, failures = 0;
  long by_code[5] = {0, 0, 0, 0, 0};
  for (; max_runs < 0 || runs < max_runs; ++runs) {
    if (max_runs < 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > seconds) break;
    const std::size_t k = static_cast<std::size_t>(runs) % files.size();
    Mutator m(seed * 1000003ULL + static_cast<std::uint64_t>(runs), corpus);
    const fs::path mutant = files[k].parent_path() / ("mutant_" + std::to_string(runs) + ".yaml");
    std::ofstream(mutant, std::ios::binary) << m.mutate(texts[k]);
    const std::string out = (work / "out.txt").string(), err = (work / "err.txt").string();
    const mlasim::bench::Child c = mlasim::bench::run_child(
        {"/usr/bin/timeout", "60", mlasim, "run", mutant.string(), "--dry-run", "--table", "none"}, out, err);
    const std::string stderr_text = slurp(err);
    std::string problem;
    if (!c.error.empty()) problem = c.error;
    else if (c.exit_code == 124) problem = "did not finish in 60 s";
    else if (c.exit_code == 4 && stderr_text.find("vLLM cannot run this trace: step ") == std::string::npos)
      problem = "an exit-4 message without the step vLLM fails in";
    else if (c.exit_code == 3 || c.exit_code > 4)
      problem = "exit " + std::to_string(c.exit_code) + (c.exit_code > 128 ? " (a signal)" : "");
    else if (stderr_text.find("Sanitizer") != std::string::npos || stderr_text.find("runtime error:") != std::string::npos)
      problem = "a sanitizer report";
    else if (c.exit_code == 2 && !std::regex_search(stderr_text, located))
      problem = "an exit-2 message without file:line";
    if (c.exit_code >= 0 && c.exit_code <= 4) ++by_code[c.exit_code];
    if (problem.empty()) {
      fs::remove(mutant);
      continue;
    }
    ++failures;
    std::printf("FAIL mutant %ld of %s: %s\n  %s\n", runs, fs::relative(files[k], work).c_str(), problem.c_str(),
                stderr_text.substr(0, 600).c_str());
    if (!keep_dir.empty()) {
      fs::create_directories(keep_dir);
      fs::copy_file(mutant, fs::path(keep_dir) / mutant.filename(), fs::copy_options::overwrite_existing);
      std::printf("  kept %s\n", (fs::path(keep_dir) / mutant.filename()).c_str());
    }
    fs::remove(mutant);
  }
  fs::remove_all(work);
  std::printf("%ld mutants of %zu scenarios (seed %llu): exit 0: %ld, exit 1: %ld, exit 2: %ld, exit 4: %ld; %ld failures\n",
              runs, files.size(), static_cast<unsigned long long>(seed), by_code[0], by_code[1], by_code[2], by_code[4],
              failures);
  return failures == 0 && runs > 0 ? 0 : 1;
}
