// AtomicOutputFile in two phases: finish() syncs a streamed file without touching the target,
// publish() renames it into place, and a finished file dropped unpublished leaves nothing behind.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "base/atomic_file.h"
#include "tests/file_test_util.h"

using namespace mlasim;
using mlasim::test::read_all;
namespace fs = std::filesystem;

namespace {

int count_entries(const fs::path& dir) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) (void)e, ++n;
  return n;
}

}  // namespace

TEST_CASE("AtomicOutputFile finishes two streamed files before publishing either", "[atomic]") {
  const fs::path dir = fs::temp_directory_path() / ("mlasim_atomic_two_phase_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "a.jsonl") << "old a";
  std::ofstream(dir / "a.yaml") << "old yaml";
  {
    AtomicOutputFile jsonl, yaml;
    REQUIRE(jsonl.open((dir / "a.jsonl").string()).ok());
    REQUIRE(yaml.open((dir / "a.yaml").string()).ok());
    std::string expected;
    const std::string line = "{\"arrival_time\": 0.5, \"prompt_len\": 100}\n";  // 3 MiB: several buffer flushes
    for (int i = 0; i < 3 * (1 << 20) / static_cast<int>(line.size()); ++i) {
      jsonl.write(line);
      expected += line;
    }
    yaml.write("version: 1\n");
    REQUIRE(jsonl.finish().ok());
    REQUIRE(yaml.finish().ok());
    CHECK(read_all(dir / "a.jsonl") == "old a");  // both untouched until published
    CHECK(read_all(dir / "a.yaml") == "old yaml");
    CHECK(count_entries(dir) == 4);  // the targets and the two temporaries
    REQUIRE(jsonl.publish().ok());
    REQUIRE(yaml.publish().ok());
    CHECK(read_all(dir / "a.jsonl") == expected);
    CHECK(read_all(dir / "a.yaml") == "version: 1\n");
  }
  CHECK(count_entries(dir) == 2);
  fs::remove_all(dir);
}

TEST_CASE("AtomicOutputFile finished but not published removes its temporary", "[atomic]") {
  const fs::path dir = fs::temp_directory_path() / ("mlasim_atomic_unpublished_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  {
    AtomicOutputFile f;
    REQUIRE(f.open((dir / "b.jsonl").string()).ok());
    f.write("partial");
    REQUIRE(f.finish().ok());
    CHECK(count_entries(dir) == 1);
  }
  CHECK(count_entries(dir) == 0);
  AtomicOutputFile unfinished;
  REQUIRE(unfinished.open((dir / "c.jsonl").string()).ok());
  CHECK_FALSE(unfinished.publish().ok());
  fs::remove_all(dir);
}
