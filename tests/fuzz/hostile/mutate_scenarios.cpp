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

#include "tools/bench/child_process.h"

namespace fs = std::filesystem;

namespace {

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "mutate_scenarios: %s\n", why.c_str());
  std::exit(2);
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t nl = text.find('\n', start);
    out.push_back(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return out;
}

std::string join(const std::vector<std::string>& lines) {
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) out += (i ? "\n" : "") + lines[i];
  return out;
}

// Values a hostile user would try where a number is expected.
const std::vector<std::string> kNumbers = {
    "0",   "-1",   "1",    "2",   "2147483647", "2147483648", "-2147483649", "9223372036854775807", "1e308",
    "-1e308", ".inf", "-.inf", ".nan", "1.5", "0x10", "1e-320", "4294967296", "65536", "16777217", "1073741825",
    "99999999999999999999", "''", "[]", "{}", "~", "!!str 16", "!!float 3", "&a 4", "*a"};
const std::vector<std::string> kFragments = {"---\n", "!!str ", "!!int ", "&x ", "*x", "{", "}", "[", "]", ":",
                                             ", ", "\t", "\"", "'", "#", "\xC3", "\x01", "- ", "? ", "|\n"};

class Mutator {
 public:
  Mutator(std::uint64_t seed, const std::vector<std::string>& corpus_lines) : rng_(seed), corpus_(corpus_lines) {}

  std::string mutate(std::string text) {
    const int n = 1 + static_cast<int>(pick(3));
    for (int i = 0; i < n; ++i) text = once(text);
    return text;
  }

 private:
  std::size_t pick(std::size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_); }

  std::string once(const std::string& text) {
    std::vector<std::string> lines = lines_of(text);
    switch (pick(8)) {
      case 0: {  // a number becomes a hostile value
        static const std::regex number(R"((-?[0-9]+(\.[0-9]+)?(e-?[0-9]+)?))");
        std::vector<std::pair<std::size_t, std::size_t>> spots;
        for (auto it = std::sregex_iterator(text.begin(), text.end(), number); it != std::sregex_iterator(); ++it)
          spots.emplace_back(static_cast<std::size_t>(it->position()), static_cast<std::size_t>(it->length()));
        if (spots.empty()) return text;
        const auto [at, len] = spots[pick(spots.size())];
        return text.substr(0, at) + kNumbers[pick(kNumbers.size())] + text.substr(at + len);
      }
      case 1:  // a line deleted
        if (!lines.empty()) lines.erase(lines.begin() + static_cast<long>(pick(lines.size())));
        return join(lines);
      case 2:  // a line duplicated
        if (!lines.empty()) {
          const std::size_t i = pick(lines.size());
          lines.insert(lines.begin() + static_cast<long>(i), lines[i]);
        }
        return join(lines);
      case 3:  // a line from another scenario
        lines.insert(lines.begin() + static_cast<long>(pick(lines.size() + 1)), corpus_[pick(corpus_.size())]);
        return join(lines);
      case 4: {  // a fragment of YAML syntax inserted
        const std::size_t at = pick(text.size() + 1);
        return text.substr(0, at) + kFragments[pick(kFragments.size())] + text.substr(at);
      }
      case 5: {  // a byte replaced, inserted or deleted
        if (text.empty()) return text;
        std::string out = text;
        const std::size_t at = pick(out.size());
        const char c = static_cast<char>(pick(256));
        const std::size_t how = pick(3);
        if (how == 0) out[at] = c;
        else if (how == 1) out.insert(out.begin() + static_cast<long>(at), c);
        else out.erase(at, 1);
        return out;
      }
      case 6:  // truncated
        return text.substr(0, pick(text.size() + 1));
      default: {  // a line's indentation changed
        if (lines.empty()) return text;
        std::string& l = lines[pick(lines.size())];
        if (pick(2) == 0 && !l.empty() && l[0] == ' ') l.erase(0, 1);
        else l.insert(0, pick(2) ? " " : "  ");
        return join(lines);
      }
    }
  }

  std::mt19937_64 rng_;
  const std::vector<std::string>& corpus_;
};

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
