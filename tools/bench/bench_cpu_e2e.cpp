// End-to-end benchmark of the CPU reference as users run it: `mlasim run SCENARIO` (float, the
// default CPU backend) as a child process on two long-context cases, validated (exit 0, the logits
// rows), then timed (wall, user CPU) with the child's peak RSS set against what it must hold: the
// weights (the seeded MlaWeights, which the float backend reads in place) and the latent cache.
//   tiny-32k: a 32,768-token prompt on `tiny`, chunked prefill (8,192-token budget), then 16 decode
//             steps. Target: <= 30 s on 2 cores.
//   v3-4k:    one layer of `v3-attn` (128 heads, q_lora_rank 1536, d 7168), a 4,096-token prompt in
//             one step and one decode step. Target: <= 30 s on 2 cores.
// Usage: bench_cpu_e2e [--mlasim PATH] [--threads N=2] [--only tiny-32k|v3-4k] [--keep]
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "model/mla_weights.h"
#include "config/model_config.h"
#include "tools/bench/child_process.h"

namespace {

namespace fs = std::filesystem;
using mlasim::bench::Child;

struct Case {
  std::string name, preset;
  int prompt_len, max_tokens, budget, max_model_len, num_gpu_blocks;
};

[[noreturn]] void die(const std::string& why) {
  std::fprintf(stderr, "bench_cpu_e2e: FAILED: %s\n", why.c_str());
  std::exit(1);
}

std::string slurp(const fs::path& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

double gib(double bytes) { return bytes / (1024.0 * 1024.0 * 1024.0); }

// Bytes of the model's weights in float.
double weight_bytes(const mlasim::ModelConfig& c) {
  double n = 0;
  for (const mlasim::WeightSpec& s : mlasim::weight_specs(c)) {
    double k = 1;
    for (int d : s.shape) k *= d;
    n += k;
  }
  return 4.0 * n;
}

void run_case(const Case& k, const std::string& mlasim, const std::string& threads, const fs::path& dir) {
  const fs::path yaml = dir / (k.name + ".yaml");
  std::ofstream(yaml) << "version: 1\n"
                      << "name: " << k.name << "\n"
                      << "model: {preset: " << k.preset << "}\n"
                      << "scheduler: {max_num_batched_tokens: " << k.budget << ", max_num_seqs: 4, max_model_len: "
                      << k.max_model_len << ", num_gpu_blocks: " << k.num_gpu_blocks << "}\n"
                      << "engine: {profile: vllm-0.33, attention_backend: flashinfer-mla}\n"
                      << "requests:\n  - {id: a, prompt_len: " << k.prompt_len << ", max_tokens: " << k.max_tokens << "}\n";
  const std::string out = (dir / (k.name + ".out")).string(), err = (dir / (k.name + ".err")).string();
  const Child c = mlasim::bench::run_child({mlasim, "run", yaml.string(), "--table", "summary", "--cpu-threads", threads}, out, err);
  if (!c.error.empty()) die(c.error);
  const std::string text = slurp(out);
  const std::string want = "logits: " + std::to_string(k.max_tokens) + " rows";
  if (c.exit_code != 0 || text.find(want) == std::string::npos)
    die(k.name + ": mlasim exited " + std::to_string(c.exit_code) + " without '" + want + "' (see " + out + ", " + err + ")");
  const mlasim::ModelConfig config = *mlasim::model_preset(k.preset);
  const double weights = weight_bytes(config);
  const double cache = 4.0 * k.num_gpu_blocks * 16 * (config.kv_lora_rank + config.qk_rope_head_dim) * config.num_hidden_layers;
  const double rss = static_cast<double>(c.peak_rss_kib) * 1024.0;
  std::printf("%-9s prompt %6d + %2d decode steps: wall %6.2f s  user %6.2f s  cpu %6.2f s  (%ld preemptions)\n",
              k.name.c_str(), k.prompt_len, k.max_tokens - 1, c.wall_s, c.user_s, c.cpu_s, c.preempted);
  std::printf("          peak RSS %.2f GiB = weights %.2f GiB (one float copy) + cache %.3f GiB + %.3f GiB else\n",
              gib(rss), gib(weights), gib(cache), gib(rss - weights - cache));
}

}  // namespace

int main(int argc, char** argv) {
  std::string mlasim = (fs::path(argv[0]).parent_path() / "../mlasim/mlasim").string(), threads = "2", only;
  bool keep = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--mlasim" && i + 1 < argc) mlasim = argv[++i];
    else if (a == "--threads" && i + 1 < argc) threads = argv[++i];
    else if (a == "--only" && i + 1 < argc) only = argv[++i];
    else if (a == "--keep") keep = true;
    else die("unknown argument " + a + " (usage: bench_cpu_e2e [--mlasim PATH] [--threads N] [--only NAME] [--keep])");
  }
  char tmpl[] = "/tmp/bench_cpu_e2e.XXXXXX";
  if (!mkdtemp(tmpl)) die("cannot create a temporary directory");
  const fs::path dir = tmpl;
  const Child v = mlasim::bench::run_child({mlasim, "version"}, (dir / "version.out").string(), (dir / "version.err").string());
  if (v.exit_code != 0) die("cannot run " + mlasim + " version");
  std::printf("mlasim: %s, --cpu-threads %s, %ld CPUs online\n", mlasim.c_str(), threads.c_str(), sysconf(_SC_NPROCESSORS_ONLN));
  std::printf("%s\n", slurp(dir / "version.out").c_str());
  const std::vector<Case> cases{{"tiny-32k", "tiny", 32768, 17, 8192, 33024, 2070},
                                {"v3-4k", "v3-attn", 4096, 2, 4096, 4352, 260}};
  for (const Case& k : cases)
    if (only.empty() || only == k.name) run_case(k, mlasim, threads, dir);
  if (keep) std::printf("inputs and outputs kept in %s\n", dir.c_str());
  else fs::remove_all(dir);
  return 0;
}
