// Cost cliffs on legal input, end to end (`mlasim run SCENARIO --dry-run --table none` as a child):
// (1) the KV pool size: the same run at 8,192 and 2^24 blocks, for 200 and 2,000 steps, so a
// per-step cost that grows with num_gpu_blocks shows as a slope; (2) an expect block naming
// N requests, N = 8,000 and 32,000 (and 128,000 with --large): linear work grows 4x, quadratic 16x;
// (3) a trace of N requests arriving 8 a step, written inline and as a requests_file: the memory a
// request costs while the scenario is read (peak RSS over a one-request run, divided by N), and (3b) the
// same for 20,000 requests given by prompt_len, all at step 0; (4) a model
// run (tiny model, CPU reference, --logits-dir) of N short requests from a requests_file, N = 200 and
// 2,000 (and 20,000 with --large): its logits stream, so the peak RSS must not grow with N.
// Prints wall time, CPU time and peak RSS per case; validates every run exits 0 with its checks held.
// Usage: bench_cliffs [--mlasim PATH] [--large] [--keep]
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tools/bench/child_process.h"

namespace fs = std::filesystem;
using mlasim::bench::Child;
using mlasim::bench::run_child;

namespace {

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "bench_cliffs: %s\n", why.c_str());
  std::exit(1);
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Runs mlasim on `yaml` with `sets` and `flags`; dies unless it exits 0 and prints `expect_line`.
Child run_case(const std::string& mlasim, const fs::path& dir, const std::string& yaml,
               const std::vector<std::string>& sets, const std::string& expect_line,
               const std::vector<std::string>& flags = {"--dry-run"}) {
  std::vector<std::string> args{mlasim, "run", yaml, "--table", "none"};
  args.insert(args.end(), flags.begin(), flags.end());
  for (const std::string& s : sets) args.insert(args.end(), {"--set", s});
  const std::string out = (dir / "out.txt").string(), err = (dir / "err.txt").string();
  const Child c = run_child(args, out, err);
  if (!c.error.empty()) die(c.error);
  const std::string text = slurp(out);
  if (c.exit_code != 0 || text.find(expect_line) == std::string::npos)
    die("mlasim exited " + std::to_string(c.exit_code) + " without \"" + expect_line + "\":\n" + text + slurp(err));
  return c;
}

void print(const char* what, const Child& c) {
  std::printf("  %-44s wall %7.3f s  CPU %7.3f s  peak RSS %8.1f MiB\n", what, c.wall_s, c.cpu_s,
              static_cast<double>(c.peak_rss_kib) / 1024.0);
}

}  // namespace

int main(int argc, char** argv) {
  std::string mlasim;
  bool large = false, keep = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--mlasim" && i + 1 < argc) mlasim = argv[++i];
    else if (a == "--large") large = true;
    else if (a == "--keep") keep = true;
    else die("unknown argument " + a + " (see the header of tools/bench/bench_cliffs.cpp)");
  }
  if (mlasim.empty())
    mlasim = (fs::read_symlink("/proc/self/exe").parent_path().parent_path() / "mlasim" / "mlasim").string();
  if (access(mlasim.c_str(), X_OK) != 0) die("no mlasim at " + mlasim + " (give --mlasim PATH)");
  std::string tmpl = (fs::temp_directory_path() / "bench_cliffs.XXXXXX").string();
  if (!mkdtemp(tmpl.data())) die("mkdtemp failed");
  const fs::path dir = tmpl;
  std::printf("bench_cliffs: `mlasim run SCENARIO --table none` end to end, as a child process\n");

  // (1) One request decoding for S steps in a pool of B blocks.
  const std::string one = (dir / "one.yaml").string();
  std::ofstream(one) << "version: 1\nrequests:\n  - {id: a, prompt: [5], max_tokens: 2}\n";
  std::printf("\nKV pool size (one request, S decode steps):\n");
  for (int blocks : {8192, 1 << 24})
    for (int steps : {200, 2000}) {
      const Child c = run_case(mlasim, dir, one,
                               {"scheduler.num_gpu_blocks=" + std::to_string(blocks),
                                "requests.0.max_tokens=" + std::to_string(steps)},
                               "");
      char what[96];
      std::snprintf(what, sizeof what, "%d blocks, %d steps", blocks, steps);
      print(what, c);
    }

  // (2) N requests, each named by expect.requests.
  std::printf("\nexpect block naming N requests (N one-token prompts, max_num_seqs 256):\n");
  std::vector<int> sizes{8000, 32000};
  if (large) sizes.push_back(128000);
  for (int n : sizes) {
    const std::string path = (dir / ("expect_" + std::to_string(n) + ".yaml")).string();
    std::ofstream y(path);
    y << "version: 1\nscheduler: {max_num_seqs: 256, max_num_batched_tokens: 8192}\nrequests:\n";
    for (int i = 0; i < n; ++i) y << "  - {id: r" << i << ", prompt: [5], max_tokens: 1}\n";
    y << "expect:\n  requests:\n";
    for (int i = 0; i < n; ++i) y << "  - {id: r" << i << ", status: finished_length_capped}\n";
    y.close();
    const Child c = run_case(mlasim, dir, path, {}, "expect: all " + std::to_string(n) + " checks hold");
    char what[96];
    std::snprintf(what, sizeof what, "N = %d (%.1f MB of YAML)", n, static_cast<double>(fs::file_size(path)) / 1e6);
    print(what, c);
  }
  // (3) N requests, 8 arriving a step (so few are alive at once): inline and from a requests_file.
  std::printf("\ntrace of N requests arriving 8 a step (memory a request costs while it is read):\n");
  // prompt_len > 0: prompts given by length, all arriving at step 0 (the shape of a replayed
  // production trace); else 3-token prompts arriving 8 a step.
  auto trace = [&](int n, bool inline_requests, int prompt_len = 0) {
    const std::string stem = (inline_requests ? "inline_" : "file_") + std::to_string(n) + "_" + std::to_string(prompt_len);
    const std::string yaml = (dir / (stem + ".yaml")).string();
    std::ofstream y(yaml);
    y << "version: 1\nscheduler: {max_num_seqs: 256, max_num_batched_tokens: 8192}\n";
    if (inline_requests) {
      y << "requests:\n";
      for (int i = 0; i < n; ++i)
        if (prompt_len > 0)
          y << "  - {id: r" << i << ", prompt_len: " << prompt_len << ", max_tokens: 2, arrival_step: 0}\n";
        else
          y << "  - {id: r" << i << ", prompt: [5, 6, 7], max_tokens: 2, arrival_step: " << i / 8 << "}\n";
    } else {
      y << "requests_file: " << stem << ".jsonl\n";
      std::ofstream j(dir / (stem + ".jsonl"));
      for (int i = 0; i < n; ++i)
        if (prompt_len > 0)
          j << "{\"id\": \"r" << i << "\", \"prompt_len\": " << prompt_len << ", \"max_tokens\": 2, \"arrival_step\": 0}\n";
        else
          j << "{\"id\": \"r" << i << "\", \"prompt\": [5, 6, 7], \"max_tokens\": 2, \"arrival_step\": " << i / 8
            << "}\n";
    }
    y.close();
    return run_case(mlasim, dir, yaml, {}, "");
  };
  std::vector<int> trace_sizes{32000};
  if (large) trace_sizes.push_back(128000);
  for (bool inline_requests : {true, false}) {
    const Child base = trace(1, inline_requests);
    for (int n : trace_sizes) {
      const Child c = trace(n, inline_requests);
      char what[96];
      std::snprintf(what, sizeof what, "%s, N = %d", inline_requests ? "inline" : "requests_file", n);
      print(what, c);
      std::printf("  %-44s %.0f bytes a request over a one-request run\n", "",
                  static_cast<double>(c.peak_rss_kib - base.peak_rss_kib) * 1024.0 / n);
    }
  }
  // (3b) N = 20,000 requests given by prompt_len 1,000, all at step 0: an inline prompt given by
  // length is drawn when the scenario is read (4 bytes a token, held until the request finishes);
  // a requests_file one when the scheduler first looks at the request.
  std::printf("\n20,000 requests of prompt_len 1,000 and max_tokens 2, all arriving at step 0:\n");
  for (bool inline_requests : {true, false}) {
    const Child base = trace(1, inline_requests, 1000);
    const Child c = trace(20000, inline_requests, 1000);
    print(inline_requests ? "inline" : "requests_file", c);
    std::printf("  %-44s %.0f bytes a request over a one-request run\n", "",
                static_cast<double>(c.peak_rss_kib - base.peak_rss_kib) * 1024.0 / 20000);
  }
  // (4) A model run of N short requests (prompt 4 tokens, max_tokens 2, 8 arriving a step).
  std::printf("\nmodel run, tiny model, N requests of prompt 4 + 2 outputs from a requests_file, --logits-dir:\n");
  std::vector<int> model_sizes{200, 2000};
  if (large) model_sizes.push_back(20000);
  for (int n : model_sizes) {
    const std::string stem = "model_" + std::to_string(n);
    const std::string yaml = (dir / (stem + ".yaml")).string();
    std::ofstream(yaml) << "version: 1\nname: " << stem << "\nmodel: {preset: tiny}\nrequests_file: " << stem
                        << ".jsonl\n";
    std::ofstream j(dir / (stem + ".jsonl"));
    for (int i = 0; i < n; ++i)
      j << "{\"id\": \"r" << i << "\", \"prompt_len\": 4, \"max_tokens\": 2, \"arrival_step\": " << i / 8 << "}\n";
    j.close();
    const Child c = run_case(mlasim, dir, yaml, {}, "logits: " + std::to_string(2 * n) + " rows x 512",
                             {"--logits-dir", (dir / (stem + "_logits")).string(), "--cpu-threads", "1"});
    char what[96];
    std::snprintf(what, sizeof what, "N = %d (%d logits rows, %.1f MB of logits.npy)", n, 2 * n,
                  static_cast<double>(fs::file_size(dir / (stem + "_logits") / "logits.npy")) / 1e6);
    print(what, c);
  }
  if (keep) std::printf("kept %s\n", dir.c_str());
  else fs::remove_all(dir);
  return 0;
}
