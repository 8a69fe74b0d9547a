// `--shard I/N` and the gtest shard variables: parsing, the exact indices each shard runs, and
// the errors bad values give.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include "harness/check_shard.h"

using namespace mlasim;

TEST_CASE("a --shard I/N is two whole numbers with I below N", "[shard]") {
  Result<Shard> s = parse_shard("1/4");
  REQUIRE(s.ok());
  CHECK(s.value().index == 1);
  CHECK(s.value().total == 4);
  Result<Shard> one = parse_shard("0/1");
  REQUIRE(one.ok());
  CHECK(one.value().total == 1);
}

TEST_CASE("a bad --shard names the flag, the text and what is wrong", "[shard]") {
  for (const char* bad : {"", "1", "1/", "/4", "a/4", "1/b", "-1/4", "1/-4", "1/4/5", " 1/4", "1/4 ", "+1/4",
                          "99999999999/4"}) {
    Result<Shard> s = parse_shard(bad);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().headline() == std::string("<command line>: error: --shard: \"") + bad + "\" is not I/N (two whole numbers)");
  }
  Result<Shard> zero = parse_shard("0/0");
  REQUIRE_FALSE(zero.ok());
  CHECK(zero.error().headline() == "<command line>: error: --shard: \"0/0\": the shard count N is 0");
  Result<Shard> past = parse_shard("4/4");
  REQUIRE_FALSE(past.ok());
  CHECK(past.error().format() ==
        "<command line>: error: --shard: \"4/4\": the shard index 4 is not below the shard count 4\n"
        "  hint: shards are numbered from 0: --shard 0/4 ... --shard 3/4");
}

TEST_CASE("a shard runs the indices i with i % N == I", "[shard]") {
  CHECK(shard_indices(10, Shard{0, 3}) == std::vector<std::size_t>{0, 3, 6, 9});
  CHECK(shard_indices(10, Shard{1, 3}) == std::vector<std::size_t>{1, 4, 7});
  CHECK(shard_indices(10, Shard{2, 3}) == std::vector<std::size_t>{2, 5, 8});
  CHECK(shard_indices(3, Shard{0, 1}) == std::vector<std::size_t>{0, 1, 2});
  // More shards than entries: the ones past the end get nothing.
  CHECK(shard_indices(2, Shard{1, 5}) == std::vector<std::size_t>{1});
  CHECK(shard_indices(2, Shard{4, 5}).empty());
  CHECK(shard_indices(0, Shard{0, 2}).empty());
}

TEST_CASE("the shards of a list cover every index exactly once", "[shard]") {
  for (std::size_t count : {0u, 1u, 7u, 34u, 100u}) {
    for (int total : {1, 2, 3, 7, 40}) {
      std::vector<int> seen(count, 0);
      for (int index = 0; index < total; ++index) {
        std::vector<std::size_t> got = shard_indices(count, Shard{index, total});
        CHECK(std::is_sorted(got.begin(), got.end()));
        for (std::size_t i : got) {
          REQUIRE(i < count);
          CHECK(static_cast<int>(i % static_cast<std::size_t>(total)) == index);
          seen[i]++;
        }
      }
      CHECK(std::count(seen.begin(), seen.end(), 1) == static_cast<std::ptrdiff_t>(count));
    }
  }
}

TEST_CASE("GTEST_SHARD_INDEX and GTEST_TOTAL_SHARDS: both or neither, and valid", "[shard]") {
  Result<std::optional<Shard>> none = shard_from_env(nullptr, nullptr);
  REQUIRE(none.ok());
  CHECK_FALSE(none.value().has_value());
  Result<std::optional<Shard>> two = shard_from_env("2", "3");
  REQUIRE(two.ok());
  REQUIRE(two.value().has_value());
  CHECK(two.value()->index == 2);
  CHECK(two.value()->total == 3);

  Result<std::optional<Shard>> no_total = shard_from_env("1", nullptr);
  REQUIRE_FALSE(no_total.ok());
  CHECK(no_total.error().format() ==
        "<environment>: error: GTEST_TOTAL_SHARDS: not set, but GTEST_SHARD_INDEX is (\"1\")\n"
        "  hint: set both GTEST_SHARD_INDEX and GTEST_TOTAL_SHARDS, or neither");
  Result<std::optional<Shard>> no_index = shard_from_env(nullptr, "4");
  REQUIRE_FALSE(no_index.ok());
  CHECK(no_index.error().headline() == "<environment>: error: GTEST_SHARD_INDEX: not set, but GTEST_TOTAL_SHARDS is (\"4\")");
  Result<std::optional<Shard>> bad_index = shard_from_env("x", "4");
  REQUIRE_FALSE(bad_index.ok());
  CHECK(bad_index.error().headline() == "<environment>: error: GTEST_SHARD_INDEX: \"x\" is not a whole number >= 0");
  Result<std::optional<Shard>> bad_total = shard_from_env("0", "0");
  REQUIRE_FALSE(bad_total.ok());
  CHECK(bad_total.error().headline() == "<environment>: error: GTEST_TOTAL_SHARDS: \"0\" is not a whole number >= 1");
  Result<std::optional<Shard>> past = shard_from_env("3", "3");
  REQUIRE_FALSE(past.ok());
  CHECK(past.error().format() ==
        "<environment>: error: GTEST_SHARD_INDEX: \"3\" is not below GTEST_TOTAL_SHARDS (\"3\")\n"
        "  hint: GTEST_SHARD_INDEX runs from 0 to GTEST_TOTAL_SHARDS - 1");
  CHECK_FALSE(shard_from_env("", "").ok());
  CHECK_FALSE(shard_from_env("-1", "3").ok());
}

TEST_CASE("the shard status file is created, and an existing one is kept", "[shard]") {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("mlasim_shard_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "status").string();
  REQUIRE(touch_shard_status_file(path).ok());
  CHECK(std::filesystem::exists(path));
  std::ofstream(path) << "kept";
  REQUIRE(touch_shard_status_file(path).ok());
  CHECK(std::filesystem::file_size(path) == 4);
  Status missing = touch_shard_status_file((dir / "no" / "such" / "status").string());
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message.rfind("cannot create GTEST_SHARD_STATUS_FILE: ", 0) == 0);
  std::filesystem::remove_all(dir);
}

namespace {

// An environment of the given variables only.
EnvLookup env_of(std::map<std::string, std::string> vars) {
  auto shared = std::make_shared<std::map<std::string, std::string>>(std::move(vars));
  return [shared](const char* name) -> const char* {
    auto it = shared->find(name);
    return it == shared->end() ? nullptr : it->second.c_str();
  };
}

std::pair<int, int> shard_of(const std::map<std::string, std::string>& vars) {
  Result<Shard> s = parse_shard_option("auto", env_of(vars));
  if (!s) FAIL(s.error().format());
  return {s.value().index, s.value().total};
}

std::string error_of(const std::map<std::string, std::string>& vars) {
  Result<Shard> s = parse_shard_option("auto", env_of(vars));
  REQUIRE_FALSE(s.ok());
  return s.error().headline();
}

}  // namespace

TEST_CASE("shard auto reads gtest's, Slurm's or a Kubernetes Indexed Job's variables", "[shard]") {
  CHECK(shard_of({{"GTEST_SHARD_INDEX", "2"}, {"GTEST_TOTAL_SHARDS", "5"}}) == std::pair{2, 5});
  // sbatch --array=0-6: ids 0..6; --array=1-7: ids from 1; --array=3-15:4: ids 3, 7, 11, 15.
  CHECK(shard_of({{"SLURM_ARRAY_TASK_ID", "6"}, {"SLURM_ARRAY_TASK_MIN", "0"}, {"SLURM_ARRAY_TASK_COUNT", "7"}}) ==
        std::pair{6, 7});
  CHECK(shard_of({{"SLURM_ARRAY_TASK_ID", "1"}, {"SLURM_ARRAY_TASK_MIN", "1"}, {"SLURM_ARRAY_TASK_COUNT", "7"}}) ==
        std::pair{0, 7});
  CHECK(shard_of({{"SLURM_ARRAY_TASK_ID", "11"},
                  {"SLURM_ARRAY_TASK_MIN", "3"},
                  {"SLURM_ARRAY_TASK_STEP", "4"},
                  {"SLURM_ARRAY_TASK_COUNT", "4"}}) == std::pair{2, 4});
  CHECK(shard_of({{"JOB_COMPLETION_INDEX", "0"}, {"MLASIM_TOTAL_SHARDS", "3"}}) == std::pair{0, 3});
  // gtest's variables first, then Slurm's, then the Job's.
  CHECK(shard_of({{"GTEST_SHARD_INDEX", "1"},
                  {"GTEST_TOTAL_SHARDS", "2"},
                  {"SLURM_ARRAY_TASK_ID", "0"},
                  {"SLURM_ARRAY_TASK_MIN", "0"},
                  {"SLURM_ARRAY_TASK_COUNT", "9"}}) == std::pair{1, 2});
  CHECK(shard_of({{"JOB_COMPLETION_INDEX", "4"},
                  {"MLASIM_TOTAL_SHARDS", "5"},
                  {"SLURM_ARRAY_TASK_ID", "3"},
                  {"SLURM_ARRAY_TASK_MIN", "0"},
                  {"SLURM_ARRAY_TASK_COUNT", "9"}}) == std::pair{3, 9});
  // I/N is still I/N.
  Result<Shard> given = parse_shard_option("3/8", env_of({{"GTEST_SHARD_INDEX", "0"}, {"GTEST_TOTAL_SHARDS", "2"}}));
  REQUIRE(given.ok());
  CHECK(given.value().index == 3);
}

TEST_CASE("shard auto without a shard in the environment, or with a bad one, names the variable", "[shard]") {
  CHECK(error_of({}) ==
        "<environment>: error: --shard auto: no shard in the environment: none of GTEST_SHARD_INDEX, "
        "SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX is set");
  CHECK(error_of({{"JOB_COMPLETION_INDEX", "2"}}) == "<environment>: error: MLASIM_TOTAL_SHARDS: not set");
  CHECK(error_of({{"JOB_COMPLETION_INDEX", "3"}, {"MLASIM_TOTAL_SHARDS", "3"}}) ==
        "<environment>: error: JOB_COMPLETION_INDEX: gives shard 3, not below the 3 shards of MLASIM_TOTAL_SHARDS");
  CHECK(error_of({{"JOB_COMPLETION_INDEX", "x"}, {"MLASIM_TOTAL_SHARDS", "3"}}) ==
        "<environment>: error: JOB_COMPLETION_INDEX: \"x\" is not a whole number >= 0");
  CHECK(error_of({{"SLURM_ARRAY_TASK_ID", "4"}, {"SLURM_ARRAY_TASK_MIN", "0"}}) ==
        "<environment>: error: SLURM_ARRAY_TASK_COUNT: not set");
  CHECK(error_of({{"SLURM_ARRAY_TASK_ID", "4"},
                  {"SLURM_ARRAY_TASK_MIN", "1"},
                  {"SLURM_ARRAY_TASK_STEP", "2"},
                  {"SLURM_ARRAY_TASK_COUNT", "4"}}) ==
        "<environment>: error: SLURM_ARRAY_TASK_ID: 4 is not SLURM_ARRAY_TASK_MIN 1 plus a multiple of "
        "SLURM_ARRAY_TASK_STEP 2");
  CHECK(error_of({{"SLURM_ARRAY_TASK_ID", "9"}, {"SLURM_ARRAY_TASK_MIN", "0"}, {"SLURM_ARRAY_TASK_COUNT", "0"}}) ==
        "<environment>: error: SLURM_ARRAY_TASK_COUNT: is 0: there are no shards");
  CHECK(error_of({{"GTEST_SHARD_INDEX", "1"}}) ==
        "<environment>: error: GTEST_TOTAL_SHARDS: not set, but GTEST_SHARD_INDEX is (\"1\")");
}
