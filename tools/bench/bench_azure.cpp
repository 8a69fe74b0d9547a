// A production-sized trace through the path a user takes: writes an AzurePublicDataset-format CSV
// of N requests (default 1,000,000) shaped like the 2023 conversation trace, runs
// `mlasim import azure` on it, then `mlasim run SCENARIO --dry-run --table none`, each as a child
// process: wall and CPU time, peak RSS, and the replay's ns per generated token. Validates the
// imported count and the replay's summary (every request finished, the CSV's token totals).
// Usage: bench_azure [--mlasim PATH] [--requests N=1000000] [--rate REQ_PER_S=5.4] [--keep]
// Shape: Poisson arrivals at --rate (the 2023 conv trace: 19,366 requests in its hour), log-normal
// prompts (median 1020, sigma 1, [1, 16000]) and outputs (median 129, sigma 1, [1, 2000]).
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "kit/rng.h"
#include "tools/bench/child_process.h"

namespace {

namespace fs = std::filesystem;
using mlasim::bench::Child;
using mlasim::bench::run_child;
std::string g_dir;

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "bench_azure: FAILED: %s\n", why.c_str());
  if (!g_dir.empty()) std::fprintf(stderr, "  inputs left in %s\n", g_dir.c_str());
  std::exit(1);
}

int lognormal(mlasim::kit::Rng& rng, double median, double sigma, int lo, int hi) {
  return std::clamp(static_cast<int>(std::lround(median * std::exp(sigma * rng.normal()))), lo, hi);
}

struct Csv {
  long long prompt_tokens = 0, output_tokens = 0, bytes = 0;
};

// TIMESTAMP,ContextTokens,GeneratedTokens with timestamps from 2023-11-01 00:00:00 (a week at
// most: --rate keeps 1,000,000 requests within two and a half days).
Csv write_csv(const std::string& path, int requests, double rate) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) die("cannot write " + path);
  std::vector<char> buf(1 << 20);
  std::setvbuf(f, buf.data(), _IOFBF, buf.size());
  std::fputs("TIMESTAMP,ContextTokens,GeneratedTokens\n", f);
  mlasim::kit::Rng rng(20261206);
  Csv c;
  double t = 0;
  for (int i = 0; i < requests; ++i) {
    t += -std::log(rng.uniform()) / rate;
    const long long ticks = std::llround(t * 1e7);  // 100 ns, the dataset's 7 decimals
    const long long secs = ticks / 10000000, frac = ticks % 10000000;
    if (secs >= 7 * 86400) die("the arrivals run past a week: raise --rate");
    const int prompt = lognormal(rng, 1020, 1.0, 1, 16000), output = lognormal(rng, 129, 1.0, 1, 2000);
    c.prompt_tokens += prompt;
    c.output_tokens += output;
    std::fprintf(f, "2023-11-%02lld %02lld:%02lld:%02lld.%07lld,%d,%d\n", 1 + secs / 86400, secs / 3600 % 24, secs / 60 % 60,
                 secs % 60, frac, prompt, output);
  }
  if (std::fclose(f) != 0) die("cannot write " + path);
  c.bytes = static_cast<long long>(fs::file_size(path));
  return c;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

Child spawn(const std::vector<std::string>& args, const std::string& out, const std::string& err) {
  Child c = run_child(args, out, err);
  if (!c.error.empty()) die(c.error);
  if (c.exit_code != 0)
    die(args[1] + " exited " + std::to_string(c.exit_code) + ":\n" + slurp(err).substr(0, 2000) + slurp(out).substr(0, 2000));
  return c;
}

void print_child(const char* what, const Child& c) {
  std::printf("  %-10s: %.2f s wall, %.2f s CPU (user+sys), peak RSS %.1f MiB\n", what, c.wall_s, c.cpu_s,
              static_cast<double>(c.peak_rss_kib) / 1024.0);
}

}  // namespace

int main(int argc, char** argv) {
  std::string mlasim;
  int requests = 1000000;
  double rate = 5.4;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--mlasim") mlasim = value();
    else if (a == "--requests") requests = std::atoi(value().c_str());
    else if (a == "--rate") rate = std::atof(value().c_str());
    else if (a == "--keep") keep = true;
    else die("unknown argument " + a + " (see the header of tools/bench/bench_azure.cpp)");
  }
  if (requests < 1 || !(rate > 0)) die("--requests must be >= 1 and --rate > 0");
  if (mlasim.empty())
    mlasim = (fs::read_symlink("/proc/self/exe").parent_path().parent_path() / "mlasim" / "mlasim").string();
  if (access(mlasim.c_str(), X_OK) != 0) die("no mlasim at " + mlasim + " (give --mlasim PATH)");
  std::string tmpl = (fs::temp_directory_path() / "bench_azure.XXXXXX").string();
  if (!mkdtemp(tmpl.data())) die("mkdtemp failed");
  const fs::path dir = tmpl;
  g_dir = tmpl;
  const std::string csv = (dir / "azure.csv").string(), yaml = (dir / "azure.yaml").string();
  const std::string out = (dir / "out.txt").string(), err = (dir / "err.txt").string();

  const Csv c = write_csv(csv, requests, rate);
  std::printf("bench_azure: `mlasim import azure` then `mlasim run --dry-run --table none`, as child processes\n");
  std::printf("  mlasim     : %s\n", mlasim.c_str());
  std::printf("  trace      : %d requests, Poisson at %g req/s, prompts log-normal median 1020, outputs median 129;\n"
              "               %lld prompt tokens, %lld generated tokens, %.1f MB of CSV\n",
              requests, rate, c.prompt_tokens, c.output_tokens, static_cast<double>(c.bytes) / 1e6);
  const Child imp = spawn({mlasim, "import", "azure", csv, "-o", yaml}, out, err);
  print_child("import", imp);
  // Validate: the whole summary line, every request finished with the CSV's token counts.
  spawn({mlasim, "run", yaml, "--dry-run", "--table", "summary"}, out, err);
  const std::string summary = slurp(out);
  long long steps = 0, finished = 0, stopped = 0, capped = 0, prompt = 0, output = 0, preempted = 0;
  const std::size_t at = summary.find(" requests finished (");
  const std::size_t begin = at == std::string::npos ? 0 : summary.rfind('\n', at) + 1;
  if (at == std::string::npos ||
      std::sscanf(summary.c_str() + begin,
                  "%lld steps, %lld requests finished (%lld stopped, %lld length-capped), %lld prompt tokens, "
                  "%lld output tokens, %lld preemptions",
                  &steps, &finished, &stopped, &capped, &prompt, &output, &preempted) != 7)
    die("no summary line in mlasim's output:\n" + summary.substr(0, 3000));
  if (finished != requests || prompt != c.prompt_tokens || output != c.output_tokens)
    die("summary: " + std::to_string(finished) + " finished, " + std::to_string(prompt) + " prompt and " +
        std::to_string(output) + " output tokens; the CSV has " + std::to_string(requests) + ", " +
        std::to_string(c.prompt_tokens) + " and " + std::to_string(c.output_tokens));
  std::printf("  validation : OK: %lld steps, %lld requests finished, %lld output tokens, %lld preemptions\n", steps,
              finished, output, preempted);
  const Child run = spawn({mlasim, "run", yaml, "--dry-run", "--table", "none"}, "/dev/null", err);
  print_child("replay", run);
  const double rss_mib = static_cast<double>(run.peak_rss_kib) / 1024.0;
  std::printf("  per token  : %.1f ns of CPU per generated token, %.2f us per step\n",
              run.cpu_s * 1e9 / static_cast<double>(c.output_tokens), run.cpu_s * 1e6 / static_cast<double>(steps));
  std::printf("  targets    : replay %.1f s <= 60 -> %s; peak RSS %.1f MiB <= 64 -> %s\n", run.wall_s,
              run.wall_s <= 60 ? "met" : "MISSED", rss_mib, rss_mib <= 64 ? "met" : "MISSED");
  if (keep) std::printf("kept %s\n", dir.c_str());
  else fs::remove_all(dir);
  return 0;
}
