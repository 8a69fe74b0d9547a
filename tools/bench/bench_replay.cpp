// End-to-end benchmark of `mlasim run SCENARIO --dry-run --table none` on trace-scale input: writes a
// seeded scenario + requests_file JSONL to a temporary directory, runs the real mlasim binary as a
// child, validates its summary, then times it (wall, ns per generated token) and reads its peak RSS.
// Usage: bench_replay [--mlasim PATH] [--requests N=20000] [--reps R=3] [--rate REQ_PER_S=0 (all at
//        step 0)] [--scale] [--pictures] [--keep]   (--scale: 10,000 vs 1,000,000 short requests, peak RSS
//        side by side; --pictures: the same run again with --svg and --trace-out, time, peak RSS, file sizes;
//        --inline: the requests written in the scenario's `requests:` list instead of a requests_file;
//        --outputs: the same run with --table summary, --jsonl FILE and --json FILE, each against --table none)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "kit/rng.h"
#include "tools/bench/child_process.h"

namespace {

using mlasim::bench::Child;
using mlasim::bench::run_child;

namespace fs = std::filesystem;
constexpr long long kMaxModelLen = 163840;  // written into the scenario: v3-attn's max_position_embeddings
std::string g_dir;                          // the temporary directory, named on failure (left for a look)

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "bench_replay: FAILED: %s\n", why.c_str());
  if (!g_dir.empty()) std::fprintf(stderr, "  inputs left in %s\n", g_dir.c_str());
  std::exit(1);
}

// A log-normal length: median · exp(sigma · N(0, 1)), rounded, clamped to [lo, hi].
int lognormal(mlasim::kit::Rng& rng, double median, double sigma, int lo, int hi) {
  return std::clamp(static_cast<int>(std::lround(median * std::exp(sigma * rng.normal()))), lo, hi);
}

struct Shape {  // log-normal lengths clamped to [1, max]; rate: Poisson arrivals per second, 0 = all at step 0
  int requests, prompt_max, output_max;
  double prompt_median, output_median, sigma, rate;
  std::uint64_t seed;
  bool inline_requests = false;  // in the YAML's requests: list, not a requests_file
};

struct Trace {
  std::string yaml;
  long long prompt_tokens = 0, output_tokens = 0, bytes = 0;  // output_tokens: what the replay must generate
  double seconds = 0;                                         // time to write it
};

Trace write_trace(const fs::path& dir, const std::string& name, const Shape& s) {
  const auto t0 = std::chrono::steady_clock::now();
  Trace t;
  t.yaml = (dir / (name + ".yaml")).string();
  const std::string jsonl = (dir / (name + ".jsonl")).string();
  const std::string head = "version: 1\nname: " + name + "\nmodel: {preset: v3-attn}\n" +
                           "scheduler: {max_num_batched_tokens: 8192, max_num_seqs: 256, num_gpu_blocks: 32768, " +
                           "enable_chunked_prefill: true, max_model_len: " + std::to_string(kMaxModelLen) + "}\n" +
                           (s.inline_requests ? "requests:\n" : "requests_file: " + name + ".jsonl\n");
  const std::string& path = s.inline_requests ? t.yaml : jsonl;
  if (!s.inline_requests) {
    std::ofstream y(t.yaml);
    y << head;
    y.close();
    if (!y) die("cannot write " + t.yaml);
  }
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) die("cannot write " + path);
  std::vector<char> buf(1 << 20);
  std::setvbuf(f, buf.data(), _IOFBF, buf.size());
  if (s.inline_requests) std::fputs(head.c_str(), f);
  mlasim::kit::Rng rng(s.seed);
  double clock = 0;
  for (int i = 0; i < s.requests; ++i) {
    const int prompt = lognormal(rng, s.prompt_median, s.sigma, 1, s.prompt_max);
    const int output = lognormal(rng, s.output_median, s.sigma, 1, s.output_max);
    t.prompt_tokens += prompt;
    t.output_tokens += std::min<long long>(output, kMaxModelLen - prompt);
    if (s.inline_requests) std::fprintf(f, "  - {id: r%d, ", i);
    if (s.rate > 0) {
      clock += -std::log(rng.uniform()) / s.rate;  // exponential gaps
      std::fprintf(f, s.inline_requests ? "arrival_time: %.6f, " : "{\"arrival_time\": %.6f, ", clock);
    } else {
      std::fputs(s.inline_requests ? "arrival_step: 0, " : "{\"arrival_step\": 0, ", f);
    }
    std::fprintf(f, s.inline_requests ? "prompt_len: %d, max_tokens: %d, ignore_eos: true}\n"
                                      : "\"prompt_len\": %d, \"max_tokens\": %d, \"ignore_eos\": true}\n",
                 prompt, output);
  }
  if (std::fclose(f) != 0) die("cannot write " + path);
  t.bytes = static_cast<long long>(fs::file_size(path));
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return t;
}

// run_child, or the end of the benchmark with its error.
Child spawn(const std::vector<std::string>& args, const std::string& out, const std::string& err) {
  Child c = run_child(args, out, err);
  if (!c.error.empty()) die(c.error);
  return c;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string line_with(const std::string& text, const std::string& needle) {
  const std::size_t at = text.find(needle);
  if (at == std::string::npos) return "";
  const std::size_t begin = text.rfind('\n', at) + 1, end = text.find('\n', at);
  return text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

// One run with --table summary: exit 0, every request finished length-capped, the prompt tokens
// written and the expected output tokens. Returns mlasim's output.
std::string validate(const std::string& mlasim, const Trace& t, int requests, const fs::path& dir) {
  const std::string out = (dir / "validate.out").string(), err = (dir / "validate.err").string();
  const Child c = spawn({mlasim, "run", t.yaml, "--dry-run", "--table", "summary"}, out, err);
  const std::string text = slurp(out);
  if (c.exit_code != 0)
    die("mlasim exited " + std::to_string(c.exit_code) + "\n" + slurp(err) + text.substr(0, 4000));
  long long steps = 0, finished = 0, stopped = 0, capped = 0, prompt = 0, output = 0, preempted = 0;
  const std::string line = line_with(text, " requests finished (");
  if (std::sscanf(line.c_str(),
                  "%lld steps, %lld requests finished (%lld stopped, %lld length-capped), %lld prompt tokens, "
                  "%lld output tokens, %lld preemptions",
                  &steps, &finished, &stopped, &capped, &prompt, &output, &preempted) != 7)
    die("no summary line in mlasim's output:\n" + text.substr(0, 4000));
  if (finished != requests || capped != requests || prompt != t.prompt_tokens || output != t.output_tokens)
    die("summary \"" + line + "\"; expected " + std::to_string(requests) + " requests finished length-capped, " +
        std::to_string(t.prompt_tokens) + " prompt tokens, " + std::to_string(t.output_tokens) + " output tokens");
  std::printf("  validation : OK: %s\n", line.c_str());
  return text;
}

struct Timing {
  double best_s = 0, median_s = 0, best_cpu_s = 0;
  long peak_rss_kib = 0, preempted = 0;  // the most involuntary context switches of one run
};

Timing time_runs(const std::string& mlasim, const Trace& t, int reps, const fs::path& dir,
                 const std::vector<std::string>& extra = {}) {
  std::vector<double> walls, cpus;
  Timing r;
  for (int i = 0; i < reps; ++i) {
    const std::string err = (dir / "timed.err").string();
    std::vector<std::string> args{mlasim, "run", t.yaml, "--dry-run"};
    if (std::find(extra.begin(), extra.end(), "--table") == extra.end()) args.insert(args.end(), {"--table", "none"});
    args.insert(args.end(), extra.begin(), extra.end());
    const Child c = spawn(args, "/dev/null", err);
    if (c.exit_code != 0) die("timed run exited " + std::to_string(c.exit_code) + "\n" + slurp(err));
    walls.push_back(c.wall_s);
    cpus.push_back(c.cpu_s);
    r.peak_rss_kib = std::max(r.peak_rss_kib, c.peak_rss_kib);
    r.preempted = std::max(r.preempted, c.preempted);
  }
  std::sort(walls.begin(), walls.end());
  r.best_s = walls.front();
  r.median_s = walls[walls.size() / 2];
  r.best_cpu_s = *std::min_element(cpus.begin(), cpus.end());
  return r;
}

double mib(long kib) { return static_cast<double>(kib) / 1024.0; }
double ns_per(double seconds, long long n) { return seconds * 1e9 / static_cast<double>(n); }

void print_timing(const Timing& r, const Trace& t, int reps) {
  std::printf("  wall       : best %.3f s, median %.3f s of %d runs = %.1f (median %.1f) ns per generated token\n",
              r.best_s, r.median_s, reps, ns_per(r.best_s, t.output_tokens), ns_per(r.median_s, t.output_tokens));
  std::printf("  child CPU  : best %.3f s user+sys = %.1f ns per generated token; up to %ld involuntary context\n"
              "               switches in a run (wall above CPU: other processes had the cores)\n",
              r.best_cpu_s, ns_per(r.best_cpu_s, t.output_tokens), r.preempted);
}

void print_header(const std::string& mlasim, const fs::path& dir) {
  std::string cpu = line_with(slurp("/proc/cpuinfo"), "model name");
  if (const std::size_t colon = cpu.find(": "); colon != std::string::npos) cpu = cpu.substr(colon + 2);
  const Child v = spawn({mlasim, "version"}, (dir / "version.out").string(), (dir / "version.err").string());
  if (v.exit_code != 0) die("`mlasim version` exited " + std::to_string(v.exit_code));
  std::printf("bench_replay: `mlasim run SCENARIO --dry-run --table none` end to end, as a child process\n");
  std::printf("  measured   : the CLI's whole path: exec, YAML load, one scan of the requests file, the streamed\n"
              "               replay (a JSON line per request, scheduler, routing, summary/expect sinks), exit\n");
  std::printf("  napkin     : ~1 decode row-step per generated token; 300 ns/token = 1.8 s for 6 M tokens; memory\n"
              "               should follow the requests alive (<= 256 running + the waiting queue), not the file\n");
  std::printf("  machine    : %ld cores online, %s\n", sysconf(_SC_NPROCESSORS_ONLN), cpu.c_str());
  std::printf("  mlasim     : %s\n", mlasim.c_str());  // then its `version` output
  std::istringstream version(slurp((dir / "version.out").string()));
  for (std::string line; std::getline(version, line);) std::printf("  version    | %s\n", line.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  std::string mlasim;
  int requests = 20000, reps = 3;
  double rate = 0;
  bool scale = false, keep = false, pictures = false, inline_requests = false, outputs = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) die(a + " needs a value");
      return argv[++i];
    };
    if (a == "--mlasim") mlasim = value();
    else if (a == "--requests") requests = std::atoi(value().c_str());
    else if (a == "--reps") reps = std::atoi(value().c_str());
    else if (a == "--rate") rate = std::atof(value().c_str());
    else if (a == "--scale") scale = true;
    else if (a == "--keep") keep = true;
    else if (a == "--pictures") pictures = true;
    else if (a == "--inline") inline_requests = true;
    else if (a == "--outputs") outputs = true;
    else die("unknown argument " + a + " (see the header of tools/bench/bench_replay.cpp)");
  }
  if (requests < 1 || reps < 1 || rate < 0) die("--requests and --reps must be >= 1, --rate >= 0");
  if (mlasim.empty())  // build-*/tools/bench/bench_replay -> build-*/tools/mlasim/mlasim
    mlasim = (fs::read_symlink("/proc/self/exe").parent_path().parent_path() / "mlasim" / "mlasim").string();
  if (access(mlasim.c_str(), X_OK) != 0) die("no mlasim at " + mlasim + " (give --mlasim PATH)");
  std::string tmpl = (fs::temp_directory_path() / "bench_replay.XXXXXX").string();
  if (!mkdtemp(tmpl.data())) die("mkdtemp failed");
  const fs::path dir = tmpl;
  g_dir = tmpl;
  print_header(mlasim, dir);

  if (!scale) {
    const Shape shape{.requests = requests, .prompt_max = 16000, .output_max = 4000, .prompt_median = 600,
                      .output_median = 180, .sigma = 1.0, .rate = rate, .seed = 20261201,
                      .inline_requests = inline_requests};
    const Trace t = write_trace(dir, "replay", shape);
    char arrivals[64] = "all at step 0";
    if (rate > 0) std::snprintf(arrivals, sizeof arrivals, "Poisson arrivals at %g req/s", rate);
    std::printf("\ntrace: %d requests, log-normal prompts (median 600, sigma 1, [1, 16000]) and outputs (median 180,\n"
                "       sigma 1, [1, 4000]), %s; %lld prompt tokens, %lld generated tokens, %.2f MB of %s\n",
                requests, arrivals, t.prompt_tokens, t.output_tokens, static_cast<double>(t.bytes) / 1e6,
                inline_requests ? "inline YAML" : "JSONL");
    validate(mlasim, t, requests, dir);
    const Timing r = time_runs(mlasim, t, reps, dir);
    print_timing(r, t, reps);
    const double ns = ns_per(r.best_s, t.output_tokens), rss = mib(r.peak_rss_kib);
    std::printf("  targets    : %.1f ns per generated token (best wall) <= 300 -> %s; peak RSS %.1f MiB <= 64 -> %s\n",
                ns, ns <= 300 ? "met" : "MISSED", rss, rss <= 64 ? "met" : "MISSED");
    if (outputs) {
      // What each output costs over --table none (the same child, the same trace; files on the
      // temporary directory's file system). Targets: summary and JSONL at most 2x, JSON 3x.
      const std::string jsonl = (dir / "run.jsonl").string(), json = (dir / "run.json").string();
      struct Variant {
        const char* name;
        std::vector<std::string> extra;
        double target;
        std::string file;
      };
      const Variant variants[] = {{"--table summary", {"--table", "summary"}, 2.0, ""},
                                  {"--jsonl FILE", {"--jsonl", jsonl}, 2.0, jsonl},
                                  {"--json FILE", {"--json", json}, 3.0, json}};
      std::printf("\noutputs (best of %d, ratio of CPU time to --table none's %.3f s):\n", reps, r.best_cpu_s);
      for (const Variant& v : variants) {
        const Timing o = time_runs(mlasim, t, reps, dir, v.extra);
        const double ratio = o.best_cpu_s / r.best_cpu_s;
        std::printf("  %-16s: %.3f s CPU, %.3f s wall, peak RSS %.1f MiB, ratio %.2f <= %.0f -> %s", v.name, o.best_cpu_s,
                    o.best_s, mib(o.peak_rss_kib), ratio, v.target, ratio <= v.target ? "met" : "MISSED");
        if (!v.file.empty()) {
          std::printf(" (%.0f MB written)", static_cast<double>(fs::file_size(v.file)) / 1e6);
          fs::remove(v.file);
        }
        std::printf("\n");
      }
    }
    if (pictures) {
      // The same run drawing the timeline and streaming the trace: what the pictures cost.
      const std::string svg = (dir / "timeline.svg").string(), trace = (dir / "trace.json").string();
      std::printf("\nwith --svg FILE --trace-out FILE:\n");
      const Timing p = time_runs(mlasim, t, reps, dir, {"--svg", svg, "--trace-out", trace});
      print_timing(p, t, reps);
      const std::string tail = slurp(svg).substr(std::max<std::size_t>(fs::file_size(svg), 7) - 7);
      if (tail != "</svg>\n") die("the timeline does not end with </svg>");
      std::printf("  outputs    : timeline %.2f MB, trace %.1f MB (%.0f bytes per generated token)\n",
                  static_cast<double>(fs::file_size(svg)) / 1e6, static_cast<double>(fs::file_size(trace)) / 1e6,
                  static_cast<double>(fs::file_size(trace)) / static_cast<double>(t.output_tokens));
      std::printf("  peak RSS   : %.1f MiB (%.1f without the pictures)\n", mib(p.peak_rss_kib), rss);
    }
  } else {
    // Short requests (about 14 steps each) at 250 req/s: the batch stays below max_num_seqs (256)
    // and the waiting queue short, so the requests alive stay bounded whatever the trace's length.
    const int sizes[2] = {10000, 1000000};
    Trace t[2];  // the 10,000 and the 1,000,000 trace
    Timing r[2];
    std::printf("\nscale: log-normal prompts (median 64, sigma 1, [1, 2048]) and outputs (median 8, sigma 1,\n"
                "       [1, 256]), Poisson arrivals at 250 req/s of simulated time\n");
    for (int k = 0; k < 2; ++k) {
      const Shape shape{.requests = sizes[k], .prompt_max = 2048, .output_max = 256, .prompt_median = 64,
                        .output_median = 8, .sigma = 1.0, .rate = 250, .seed = 20261202};
      t[k] = write_trace(dir, "scale" + std::to_string(sizes[k]), shape);
      std::printf("%d requests: %lld prompt tokens, %lld generated tokens, %.2f MB of JSONL written in %.2f s "
                  "(not counted)\n", sizes[k], t[k].prompt_tokens, t[k].output_tokens,
                  static_cast<double>(t[k].bytes) / 1e6, t[k].seconds);
      const std::string summary = validate(mlasim, t[k], sizes[k], dir);
      std::printf("  %s\n  %s\n", line_with(summary, "batch size (rows)").c_str(), line_with(summary, "TTFT").c_str());
      r[k] = time_runs(mlasim, t[k], reps, dir);
      print_timing(r[k], t[k], reps);
      std::printf("  peak RSS   : %.1f MiB\n", mib(r[k].peak_rss_kib));
    }
    const double ratio = static_cast<double>(r[1].peak_rss_kib) / static_cast<double>(r[0].peak_rss_kib);
    std::printf("\npeak RSS: %.1f MiB (10,000) vs %.1f MiB (1,000,000): ratio %.2f   target ~1.0 -> %s\n",
                mib(r[0].peak_rss_kib), mib(r[1].peak_rss_kib), ratio, ratio <= 1.1 ? "met" : "MISSED");
  }
  if (keep) std::printf("kept %s\n", dir.c_str());
  else fs::remove_all(dir);
  return 0;
}
