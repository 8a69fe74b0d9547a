// The hostile-user test beyond scenarios, two families run as children of the real mlasim:
//   --family import: mutants of the sample traces (tests/data/traces: Azure and BurstGPT CSV,
//     Mooncake JSONL) through `mlasim import FORMAT MUTANT -o OUT.yaml`: exit 0 or 2, and an exit-2
//     message names the file (and the line where there is one); a scenario import wrote must
//     replay (`mlasim run OUT.yaml --dry-run`: exit 0 or 4, never 2).
//   --family flags: valid `fuzz`, `shrink` and `matrix` command lines with a flag's value made
//     hostile, a value dropped, a flag repeated or an unknown one added: exit 0, 1 or 2, and an
//     exit-2 message names a flag or the file.
//   --family deploy: mutants of the shipped config.json files (scenarios/hf_configs: the mutator's
//     changes plus JSON's own: a key repeated with another value, a value of another type, a
//     trailing comma, a comment, a BOM, text after the object) through `mlasim deploy --hf-config
//     MUTANT` with random deployment flags, `--json` and `-o`: exit 0 or 2; an exit-2 message names
//     the file or a flag, and neither output exists; with exit 0 both exist and the scenario `-o`
//     wrote replays with its probes' expectations met (`mlasim run OUT.yaml --dry-run`: exit 0).
//     One mutant in three goes through `mlasim run` as a scenario's model.hf_config instead: exit 0,
//     1, 2 or 4, an exit-2 message names the config or the scenario. With --python PY, a mutant
//     Python's json module refuses (vLLM's reader) must be exit 2 either way.
// All: never a signal, a timeout (unless a flag asked for that much work) or a sanitizer report.
// The children run in a scratch folder (a hostile -o value is a relative path). Deterministic for
// a seed (the number of mutants depends on --time).
// Usage: mutate_commands --mlasim PATH --root DIR --family import|flags|deploy [--seed S] [--time SECONDS]
//        [--runs N] [--python PY]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include <unistd.h>

#include "tests/fuzz/hostile/mutator.h"
#include "tools/bench/child_process.h"

namespace fs = std::filesystem;

namespace {

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "mutate_commands: %s\n", why.c_str());
  std::exit(2);
}

// A sanitizer report, or "" (the problems every family shares).
std::string common_problem(const mlasim::bench::Child& c, const std::string& err) {
  if (!c.error.empty()) return c.error;
  if (c.exit_code > 128) return "killed by signal " + std::to_string(c.exit_code - 128);
  if (err.find("Sanitizer") != std::string::npos || err.find("runtime error:") != std::string::npos)
    return "a sanitizer report";
  if (err.find("terminate called") != std::string::npos) return "std::terminate";
  return "";
}

struct Counts {
  long runs = 0, failures = 0, by_code[5] = {0, 0, 0, 0, 0}, long_work = 0;
};

struct Work {
  fs::path dir;
  std::string mlasim;
  fs::path out() const { return dir / "out.txt"; }
  fs::path err() const { return dir / "err.txt"; }
  mlasim::bench::Child run(std::vector<std::string> args, int timeout_s) const {
    args.insert(args.begin(), {"/usr/bin/timeout", std::to_string(timeout_s), mlasim});
    return mlasim::bench::run_child(args, out().string(), err().string());
  }
};

// The verdict every file-reading family shares on one child: counted by exit code; a signal, a
// sanitizer report, a timeout, an exit other than 0 or 2, an exit-2 message that names neither
// `input` nor a flag, or an exit 2 that left one of `outputs` behind.
std::string file_command_problem(const mlasim::bench::Child& c, const std::string& err, const fs::path& input,
                                 const std::vector<fs::path>& outputs, Counts& counts) {
  if (c.exit_code >= 0 && c.exit_code <= 4) ++counts.by_code[c.exit_code];
  std::string problem = common_problem(c, err);
  if (problem.empty() && c.exit_code == 124) problem = "did not finish in 60 s";
  if (problem.empty() && c.exit_code != 0 && c.exit_code != 2) problem = "exit " + std::to_string(c.exit_code);
  if (problem.empty() && c.exit_code == 2 && err.find(input.string()) == std::string::npos &&
      err.find("--") == std::string::npos)
    problem = "an exit-2 message that names neither the file nor a flag";
  for (const fs::path& out : outputs)
    if (problem.empty() && c.exit_code == 2 && fs::exists(out)) problem = "exit 2 with an output written";
  return problem;
}

// True when Python's json module (vLLM's config.json reader) refuses the file.
bool python_json_refuses(const Work& w, const std::string& python, const fs::path& file) {
  const mlasim::bench::Child py = mlasim::bench::run_child(
      {python, "-c", "import json,sys; json.load(open(sys.argv[1], encoding='utf-8'))", file.string()},
      w.out().string(), w.err().string());
  return py.exit_code != 0;
}

// --family import: one mutant of a sample trace.
std::string import_mutant(const Work& w, const fs::path& sample, const std::string& format, const std::string& text,
                          std::mt19937_64& rng, const std::vector<std::string>& corpus, long run, Counts& counts) {
  hostile::Mutator m(rng(), corpus);
  const fs::path mutant = w.dir / ("mutant_" + std::to_string(run) + sample.extension().string());
  std::ofstream(mutant, std::ios::binary) << m.mutate(text);
  const fs::path yaml = w.dir / "imported.yaml", jsonl = w.dir / "imported.jsonl";
  fs::remove(yaml);  // a failed mutant before this one may have left them
  fs::remove(jsonl);
  const mlasim::bench::Child c = w.run({"import", format, mutant.string(), "-o", yaml.string()}, 60);
  const std::string err = hostile::slurp(w.err());
  std::string problem = file_command_problem(c, err, mutant, {yaml, jsonl}, counts);
  if (problem.empty() && c.exit_code == 0) {
    const mlasim::bench::Child r = w.run({"run", yaml.string(), "--dry-run", "--table", "none"}, 120);
    const std::string run_err = hostile::slurp(w.err());
    problem = common_problem(r, run_err);
    if (problem.empty() && r.exit_code != 0 && r.exit_code != 4)
      problem = "import wrote a scenario that `mlasim run` exits " + std::to_string(r.exit_code) + " on: " +
                run_err.substr(0, 300);
  }
  if (!problem.empty()) {
    problem += "\n  " + err.substr(0, 400) + "\n  mutant kept: " + mutant.string();
    return problem;
  }
  fs::remove(mutant);
  fs::remove(yaml);
  fs::remove(jsonl);
  return "";
}

// --family flags: valid command lines, then one mutation of their flags.
std::string flags_mutant(const Work& w, const std::string& root, std::mt19937_64& rng, Counts& counts) {
  const std::string seed_scenario = root + "/scenarios/seed/lone_one_token_prompt.yaml";
  const std::string out = (w.dir / "found").string();
  const std::vector<std::vector<std::string>> bases = {
      {"fuzz", "--seed", "3", "--runs", "50", "--time", "5", "--set", "engine.profile=strict", "--vary", "all"},
      {"fuzz", "--seed", "3", "--runs", "30", "--set", "engine.profile=vllm-current", "--set",
       "engine.attention_backend=flashinfer-mla", "--max-requests", "4", "-o", out},
      {"fuzz", "--seed", "1", "--runs", "20", "--property", "step_invariants", "--time", "2"},
      {"shrink", seed_scenario, "--property", "no_fresh_prefill_on_decode_path", "--set", "engine.profile=vllm-current",
       "-o", out + "/min.yaml"},
      {"matrix", "--runs", "10", "--seed", "2"},
      {"matrix", "--runs", "5", "--seed", "9", "--json", out + "/m.json", "--markdown", out + "/m.md"},
  };
  auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
  std::vector<std::string> args = bases[pick(bases.size())];
  static const std::vector<std::string> words = {"",          "nan",    "-0",      "1e23",  "1/0",   "all", "none",
                                                 "--",        "-1",     "0x1p3",   "+5",    " 5",    "5 ",  "\xff",
                                                 "18446744073709551616", "1e-400", "inf", "=", "a=b",  "..",  "/"};
  std::string touched;  // the flag whose value was changed (for long work it asked for)
  std::string value;
  const std::size_t how = pick(5);
  std::vector<std::size_t> values;  // indexes of flag values
  for (std::size_t i = 1; i < args.size(); ++i)
    if (args[i - 1].rfind("-", 0) == 0 && args[i].rfind("-", 0) != 0) values.push_back(i);
  if (how <= 1 && !values.empty()) {  // a value made hostile
    const std::size_t i = values[pick(values.size())];
    touched = args[i - 1];
    value = how == 0 ? hostile::kNumbers[pick(hostile::kNumbers.size())] : words[pick(words.size())];
    args[i] = value;
  } else if (how == 2 && !values.empty()) {  // a value dropped
    args.erase(args.begin() + static_cast<long>(values[pick(values.size())]));
  } else if (how == 3) {  // a flag and its value repeated
    if (!values.empty()) {
      const std::size_t i = values[pick(values.size())];
      args.push_back(args[i - 1]);
      args.push_back(hostile::kNumbers[pick(hostile::kNumbers.size())]);
      touched = args[i - 1];
      value = args.back();
    }
  } else {  // an unknown flag or a stray argument
    args.insert(args.begin() + 1 + static_cast<long>(pick(args.size())), pick(2) ? "--no-such-flag" : "stray");
  }
  std::error_code ec;
  fs::remove_all(out, ec);
  fs::create_directories(out);
  fs::remove_all(w.dir / "cwd", ec);  // what a relative -o wrote
  fs::create_directories(w.dir / "cwd");
  const mlasim::bench::Child c = w.run(args, 30);
  if (c.exit_code >= 0 && c.exit_code <= 4) ++counts.by_code[c.exit_code];
  const std::string err = hostile::slurp(w.err());
  std::string problem = common_problem(c, err);
  if (problem.empty() && c.exit_code == 124) {
    // Work the flags asked for: many runs, a long time budget or a large trace.
    char* end = nullptr;
    const double n = std::strtod(value.c_str(), &end);
    if ((touched == "--runs" || touched == "--time" || touched == "--max-requests") && end != value.c_str() && n >= 30) {
      ++counts.long_work;
      return "";
    }
    problem = "did not finish in 30 s";
  }
  if (problem.empty() && (c.exit_code < 0 || c.exit_code > 2)) problem = "exit " + std::to_string(c.exit_code);
  if (problem.empty() && c.exit_code == 2 && err.find("--") == std::string::npos &&
      err.find(seed_scenario) == std::string::npos && err.find("stray") == std::string::npos &&
      err.find(out) == std::string::npos && (value.empty() || err.find(value) == std::string::npos))
    problem = "an exit-2 message that names no flag, file or argument";
  if (problem.empty()) return "";
  std::string line;
  for (const std::string& a : args) line += " '" + a + "'";
  return problem + "\n  mlasim" + line + "\n  " + err.substr(0, 400);
}

// JSON's own hostile edits of a config.json: a key repeated, a value retyped, a trailing comma, a
// comment, a BOM, text after the object.
std::string json_mutate(std::string text, std::mt19937_64& rng) {
  auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
  static const std::regex member(R"re("([A-Za-z_0-9]+)"\s*:\s*("[^"]*"|-?[0-9.eE+-]+|true|false|null|\[[^\[\]]*\]))re");
  std::vector<std::smatch> members;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), member); it != std::sregex_iterator(); ++it)
    members.push_back(*it);
  static const std::vector<std::string> values = {"\"fp8\"", "42", "-1", "0", "[]", "{}", "true", "null", "\"\"",
                                                  "[\"LlamaForCausalLM\"]", "1e400", "NaN", "Infinity", "2.5",
                                                  "{\"type\": \"yarn\"}", "[1, 2]", "\"bfloat16\""};
  switch (pick(7)) {
    case 0:    // a member repeated with another value, right after itself
    case 1: {  // a member's value of another type
      if (members.empty()) return text;
      const std::smatch& m = members[pick(members.size())];
      const std::size_t at = static_cast<std::size_t>(m.position(0)), len = static_cast<std::size_t>(m.length(0));
      const std::string other = "\"" + m[1].str() + "\": " + values[pick(values.size())];
      if (pick(2) == 0) return text.substr(0, at + len) + ", " + other + text.substr(at + len);
      return text.substr(0, at) + other + text.substr(at + len);
    }
    case 2: {  // a trailing comma before a closing brace or bracket
      const std::size_t at = text.find_last_of(pick(2) ? '}' : ']');
      return at == std::string::npos ? text : text.substr(0, at) + "," + text.substr(at);
    }
    case 3: {  // a comment
      const std::size_t at = text.find('\n');
      return at == std::string::npos ? text : text.substr(0, at) + (pick(2) ? " // note" : " /* note */") + text.substr(at);
    }
    case 4: return "\xEF\xBB\xBF" + text;  // a BOM
    case 5: return text + (pick(2) ? "\n{}\n" : "\n---\nx: 1\n");  // text after the object
    default: {  // a key unquoted
      if (members.empty()) return text;
      const std::smatch& m = members[pick(members.size())];
      const std::size_t at = static_cast<std::size_t>(m.position(1)) - 1;
      return text.substr(0, at) + m[1].str() + text.substr(at + m[1].length() + 2);
    }
  }
}

// --family deploy: one mutant of a shipped config.json through `mlasim deploy`.
std::string deploy_mutant(const Work& w, const std::vector<std::string>& configs, const std::vector<std::string>& texts,
                          std::mt19937_64& rng, const std::vector<std::string>& corpus, const std::string& python,
                          long run, Counts& counts) {
  auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
  const std::size_t k = pick(configs.size());
  std::string text = texts[k];
  hostile::Mutator m(rng(), corpus);
  const std::size_t how = pick(3);
  if (how != 1) text = json_mutate(text, rng);
  if (how != 0) text = m.mutate(text);
  const fs::path mutant = w.dir / ("config_" + std::to_string(run) + ".json");
  std::ofstream(mutant, std::ios::binary) << text;
  const fs::path json = w.dir / "deploy.json", yaml = w.dir / "deploy.yaml";
  fs::remove(json);
  fs::remove(yaml);
  if (pick(3) == 0) {  // the same config as a scenario's model.hf_config, through `mlasim run`
    const fs::path scenario = w.dir / "hf.yaml";
    std::ofstream(scenario) << "version: 1\nmodel: {hf_config: " << mutant.filename().string()
                            << ", num_layers: 1, vocab_size: 256, intermediate_size: 64, eos_token_id: 1}\n"
                               "scheduler: {max_model_len: 64}\nrequests:\n  - {id: a, prompt_len: 3, max_tokens: 2}\n";
    const mlasim::bench::Child c = w.run({"run", scenario.string(), "--dry-run", "--table", "none"}, 60);
    if (c.exit_code >= 0 && c.exit_code <= 4) ++counts.by_code[c.exit_code];
    const std::string err = hostile::slurp(w.err());
    std::string problem = common_problem(c, err);
    if (problem.empty() && c.exit_code == 124) problem = "did not finish in 60 s";
    if (problem.empty() && (c.exit_code < 0 || c.exit_code > 4 || c.exit_code == 3)) problem = "exit " + std::to_string(c.exit_code);
    if (problem.empty() && c.exit_code == 2 && err.find(mutant.string()) == std::string::npos &&
        err.find(scenario.string()) == std::string::npos)
      problem = "an exit-2 message that names neither the config nor the scenario";
    if (problem.empty() && c.exit_code != 2 && !python.empty() && python_json_refuses(w, python, mutant))
      problem = "Python's json refuses it, mlasim run took it";
    if (problem.empty()) {
      fs::remove(mutant);
      return "";
    }
    return problem + "\n  mlasim run " + scenario.string() + "\n  " + err.substr(0, 400) + "\n  mutant kept: " +
           mutant.string();
  }
  std::vector<std::string> args = {"deploy", "--hf-config", mutant.string(), "--json", json.string(), "-o", yaml.string()};
  static const std::vector<std::vector<std::string>> flags = {
      {"--gpu", "h100"}, {"--gpu", "b200"}, {"--gpu", "mi300x"}, {"--gpu", "a100"}, {"--tp", "8"}, {"--tp", "2"},
      {"--kv-cache-dtype", "fp8"}, {"--kv-cache-dtype", "fp8_ds_mla"}, {"--spec-tokens", "3"}, {"--block-size", "64"},
      {"--attention-backend", "triton-mla"}, {"--attention-backend", "flashmla-sparse"}, {"--max-model-len", "2048"},
      {"--max-model-len", "999999999"}};
  for (std::size_t n = pick(4); n > 0; --n)
    for (const std::string& a : flags[pick(flags.size())]) args.push_back(a);
  const mlasim::bench::Child c = w.run(args, 60);
  const std::string err = hostile::slurp(w.err());
  std::string problem = file_command_problem(c, err, mutant, {json, yaml}, counts);
  if (problem.empty() && c.exit_code == 0 && (!fs::exists(json) || !fs::exists(yaml)))
    problem = "exit 0 without both outputs";
  // vLLM reads config.json with Python's json module: what it refuses, mlasim must refuse.
  if (problem.empty() && c.exit_code == 0 && !python.empty() && python_json_refuses(w, python, mutant))
    problem = "Python's json refuses it, mlasim deploy took it: " + hostile::slurp(w.err()).substr(0, 300);
  if (problem.empty() && c.exit_code == 0) {
    const mlasim::bench::Child r = w.run({"run", yaml.string(), "--dry-run", "--table", "none"}, 120);
    const std::string run_err = hostile::slurp(w.err());
    problem = common_problem(r, run_err);
    if (problem.empty() && r.exit_code != 0)
      problem = "the scenario deploy wrote exits " + std::to_string(r.exit_code) + " on run: " + run_err.substr(0, 300);
  }
  if (problem.empty()) {
    fs::remove(mutant);
    return "";
  }
  std::string line;
  for (const std::string& a : args) line += " '" + a + "'";
  return problem + "\n  mlasim" + line + "\n  " + err.substr(0, 400) + "\n  mutant kept: " + mutant.string();
}

}  // namespace

int main(int argc, char** argv) {
  std::string mlasim, root, family, python;
  std::uint64_t seed = 1;
  double seconds = 10;
  long max_runs = -1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--mlasim") mlasim = value();
    else if (a == "--root") root = value();
    else if (a == "--family") family = value();
    else if (a == "--seed") seed = std::strtoull(value().c_str(), nullptr, 10);
    else if (a == "--time") seconds = std::atof(value().c_str());
    else if (a == "--runs") max_runs = std::atol(value().c_str());
    else if (a == "--python") python = value();
    else die("unknown argument " + a + " (see the header of tests/fuzz/hostile/mutate_commands.cpp)");
  }
  if (mlasim.empty() || root.empty() || (family != "import" && family != "flags" && family != "deploy"))
    die("give --mlasim PATH --root DIR --family import|flags|deploy");
  if (!python.empty() && python.find('/') == std::string::npos) {  // a name: looked up on PATH
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/bin";
    for (std::size_t start = 0; start <= dirs.size();) {
      const std::size_t colon = std::min(dirs.find(':', start), dirs.size());
      const fs::path candidate = fs::path(dirs.substr(start, colon - start)) / python;
      if (::access(candidate.c_str(), X_OK) == 0) {
        python = candidate.string();
        break;
      }
      start = colon + 1;
    }
    if (python.find('/') == std::string::npos) die("--python " + python + ": not found on PATH");
  }
  std::string tmpl = (fs::temp_directory_path() / "mutate_commands.XXXXXX").string();
  if (!mkdtemp(tmpl.data())) die("mkdtemp failed");
  const Work w{tmpl, fs::absolute(mlasim).string()};
  root = fs::absolute(root).string();
  fs::create_directories(w.dir / "cwd");
  fs::current_path(w.dir / "cwd");  // relative outputs land here
  const std::vector<std::pair<std::string, fs::path>> samples = {
      {"azure", fs::path(root) / "tests/data/traces/azure_sample.csv"},
      {"burstgpt", fs::path(root) / "tests/data/traces/burstgpt_sample.csv"},
      {"mooncake", fs::path(root) / "tests/data/traces/mooncake_sample.jsonl"}};
  std::vector<std::string> texts, corpus;
  for (const auto& [format, path] : samples) {
    texts.push_back(hostile::slurp(path));
    if (texts.back().empty()) die("cannot read " + path.string());
    for (const std::string& l : hostile::lines_of(texts.back())) corpus.push_back(l);
  }
  std::vector<std::string> configs, config_texts;
  for (const auto& e : fs::directory_iterator(fs::path(root) / "scenarios/hf_configs"))
    if (e.path().extension() == ".json") configs.push_back(e.path().string());
  std::sort(configs.begin(), configs.end());
  for (const std::string& p : configs) config_texts.push_back(hostile::slurp(p));
  if (family == "deploy") {
    corpus.clear();
    for (const std::string& t : config_texts)
      for (const std::string& l : hostile::lines_of(t)) corpus.push_back(l);
  }
  const auto start = std::chrono::steady_clock::now();
  Counts counts;
  for (; max_runs < 0 || counts.runs < max_runs; ++counts.runs) {
    if (max_runs < 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > seconds) break;
    std::mt19937_64 rng(seed * 1000003ULL + static_cast<std::uint64_t>(counts.runs));
    std::string problem;
    if (family == "import") {
      const std::size_t k = static_cast<std::size_t>(counts.runs) % samples.size();
      problem = import_mutant(w, samples[k].second, samples[k].first, texts[k], rng, corpus, counts.runs, counts);
    } else if (family == "deploy") {
      problem = deploy_mutant(w, configs, config_texts, rng, corpus, python, counts.runs, counts);
    } else {
      problem = flags_mutant(w, root, rng, counts);
    }
    if (!problem.empty()) {
      ++counts.failures;
      std::printf("FAIL %s mutant %ld: %s\n", family.c_str(), counts.runs, problem.c_str());
    }
  }
  std::printf("%ld %s mutants (seed %llu): exit 0: %ld, exit 1: %ld, exit 2: %ld; %ld stopped in the work their flags "
              "asked for; %ld failures\n",
              counts.runs, family.c_str(), static_cast<unsigned long long>(seed), counts.by_code[0], counts.by_code[1],
              counts.by_code[2], counts.long_work, counts.failures);
  if (counts.failures == 0) fs::remove_all(w.dir);
  return counts.failures == 0 && counts.runs > 0 ? 0 : 1;
}
