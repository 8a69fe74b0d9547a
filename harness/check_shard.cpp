// Parsing and applying a shard of the scenario list.
#include "harness/check_shard.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>

namespace mlasim {
namespace {

// A whole number >= 0 that fits an int, with nothing before or after it.
std::optional<int> parse_count(const std::string& text) {
  int v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || text[0] == '-' || ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

Error shard_error(const std::string& file, const std::string& key, const std::string& message, const std::string& hint) {
  Error e;
  e.file = file;
  e.key_path = key;
  e.message = message;
  e.hint = hint;
  return e;
}

}  // namespace

Result<Shard> parse_shard(const std::string& text) {
  const char* hint = "--shard I/N runs the scenarios whose index i has i % N == I, e.g. --shard 0/4 ... --shard 3/4";
  const std::size_t slash = text.find('/');
  std::optional<int> index = slash == std::string::npos ? std::nullopt : parse_count(text.substr(0, slash));
  std::optional<int> total = slash == std::string::npos ? std::nullopt : parse_count(text.substr(slash + 1));
  if (!index || !total)
    return shard_error("<command line>", "--shard", "\"" + text + "\" is not I/N (two whole numbers)", hint);
  if (*total == 0) return shard_error("<command line>", "--shard", "\"" + text + "\": the shard count N is 0", hint);
  if (*index >= *total)
    return shard_error("<command line>", "--shard",
                       "\"" + text + "\": the shard index " + std::to_string(*index) + " is not below the shard count " +
                           std::to_string(*total),
                       "shards are numbered from 0: --shard 0/" + std::to_string(*total) + " ... --shard " +
                           std::to_string(*total - 1) + "/" + std::to_string(*total));
  return Shard{*index, *total};
}

Result<std::optional<Shard>> shard_from_env(const char* index, const char* total) {
  if (!index && !total) return std::optional<Shard>();
  const char* both = "set both GTEST_SHARD_INDEX and GTEST_TOTAL_SHARDS, or neither";
  if (!total)
    return shard_error("<environment>", "GTEST_TOTAL_SHARDS",
                       std::string("not set, but GTEST_SHARD_INDEX is (\"") + index + "\")", both);
  if (!index)
    return shard_error("<environment>", "GTEST_SHARD_INDEX",
                       std::string("not set, but GTEST_TOTAL_SHARDS is (\"") + total + "\")", both);
  std::optional<int> i = parse_count(index);
  if (!i)
    return shard_error("<environment>", "GTEST_SHARD_INDEX", std::string("\"") + index + "\" is not a whole number >= 0",
                       "GTEST_SHARD_INDEX is this shard's number, from 0 to GTEST_TOTAL_SHARDS - 1");
  std::optional<int> n = parse_count(total);
  if (!n || *n == 0)
    return shard_error("<environment>", "GTEST_TOTAL_SHARDS", std::string("\"") + total + "\" is not a whole number >= 1",
                       "GTEST_TOTAL_SHARDS is the number of shards the suite is split into");
  if (*i >= *n)
    return shard_error("<environment>", "GTEST_SHARD_INDEX",
                       std::string("\"") + index + "\" is not below GTEST_TOTAL_SHARDS (\"" + total + "\")",
                       "GTEST_SHARD_INDEX runs from 0 to GTEST_TOTAL_SHARDS - 1");
  return std::optional<Shard>(Shard{*i, *n});
}

namespace {

// A whole number >= 0 read from variable `name`, or the error naming it.
Result<int> env_count(const EnvLookup& env, const char* name, const std::string& hint) {
  const char* text = env(name);
  if (!text) return shard_error("<environment>", name, "not set", hint);
  std::optional<int> v = parse_count(text);
  if (!v) return shard_error("<environment>", name, std::string("\"") + text + "\" is not a whole number >= 0", hint);
  return *v;
}

Result<Shard> checked_shard(int index, int total, const char* index_name, const char* total_name, const std::string& hint) {
  if (total == 0) return shard_error("<environment>", total_name, "is 0: there are no shards", hint);
  if (index >= total)
    return shard_error("<environment>", index_name,
                       "gives shard " + std::to_string(index) + ", not below the " + std::to_string(total) + " shards of " +
                           total_name,
                       hint);
  return Shard{index, total};
}

Result<Shard> slurm_shard(const EnvLookup& env) {
  const std::string hint =
      "a Slurm job array over a range (sbatch --array=0-7, or 1-16:2) names each task's shard; for a list of task "
      "ids, pass --shard I/N";
  Result<int> id = env_count(env, "SLURM_ARRAY_TASK_ID", hint);
  if (!id) return id.error();
  Result<int> count = env_count(env, "SLURM_ARRAY_TASK_COUNT", hint);
  if (!count) return count.error();
  Result<int> min = env_count(env, "SLURM_ARRAY_TASK_MIN", hint);
  if (!min) return min.error();
  int step = 1;
  if (env("SLURM_ARRAY_TASK_STEP")) {
    Result<int> s = env_count(env, "SLURM_ARRAY_TASK_STEP", hint);
    if (!s) return s.error();
    step = s.value();
  }
  if (step == 0 || id.value() < min.value() || (id.value() - min.value()) % step != 0)
    return shard_error("<environment>", "SLURM_ARRAY_TASK_ID",
                       std::to_string(id.value()) + " is not SLURM_ARRAY_TASK_MIN " + std::to_string(min.value()) +
                           " plus a multiple of SLURM_ARRAY_TASK_STEP " + std::to_string(step),
                       hint);
  return checked_shard((id.value() - min.value()) / step, count.value(), "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT",
                       hint);
}

Result<Shard> kubernetes_shard(const EnvLookup& env) {
  const std::string hint =
      "a Kubernetes Indexed Job sets JOB_COMPLETION_INDEX; set MLASIM_TOTAL_SHARDS to its completions in the pod's env";
  Result<int> index = env_count(env, "JOB_COMPLETION_INDEX", hint);
  if (!index) return index.error();
  Result<int> total = env_count(env, "MLASIM_TOTAL_SHARDS", hint);
  if (!total) return total.error();
  return checked_shard(index.value(), total.value(), "JOB_COMPLETION_INDEX", "MLASIM_TOTAL_SHARDS", hint);
}

}  // namespace

Result<Shard> shard_from_environment(const EnvLookup& env) {
  if (env("GTEST_SHARD_INDEX") || env("GTEST_TOTAL_SHARDS")) {
    Result<std::optional<Shard>> g = shard_from_env(env("GTEST_SHARD_INDEX"), env("GTEST_TOTAL_SHARDS"));
    if (!g) return g.error();
    return *g.value();
  }
  if (env("SLURM_ARRAY_TASK_ID")) return slurm_shard(env);
  if (env("JOB_COMPLETION_INDEX")) return kubernetes_shard(env);
  return shard_error("<environment>", "--shard auto",
                     "no shard in the environment: none of GTEST_SHARD_INDEX, SLURM_ARRAY_TASK_ID, "
                     "JOB_COMPLETION_INDEX is set",
                     "run it as a task of a Slurm job array or a Kubernetes Indexed Job (with MLASIM_TOTAL_SHARDS), "
                     "set GTEST_SHARD_INDEX and GTEST_TOTAL_SHARDS, or pass --shard I/N");
}

Result<Shard> parse_shard_option(const std::string& text, const EnvLookup& env) {
  return text == "auto" ? shard_from_environment(env) : parse_shard(text);
}

std::vector<std::size_t> shard_indices(std::size_t count, const Shard& shard) {
  std::vector<std::size_t> out;
  for (std::size_t i = static_cast<std::size_t>(shard.index); i < count; i += static_cast<std::size_t>(shard.total))
    out.push_back(i);
  return out;
}

Status touch_shard_status_file(const std::string& path) {
  std::ofstream f(path, std::ios::app);
  if (f) return Status::Ok();
  return shard_error(path, "", std::string("cannot create GTEST_SHARD_STATUS_FILE: ") + std::strerror(errno),
                     "GTEST_SHARD_STATUS_FILE must name a file in a writable, existing directory");
}

}  // namespace mlasim
