// golden update as one set: a journal of a killed update is completed (every folder new), staging
// folders of an update killed before its swap are removed (every folder old), and a real update
// of two scenarios leaves the two folders and nothing else.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "base/leftover_file.h"
#include "harness/golden_stage.h"
#include "verify/golden_update.h"
#include "tests/file_test_util.h"

using namespace mlasim;
using mlasim::test::entries;
using mlasim::test::read_all;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& tag) { return test::fresh_dir("mlasim_golden_update_" + tag); }

void folder(const fs::path& dir, const std::string& content, bool staged_by_gone = false) {
  fs::create_directories(dir);
  std::ofstream(dir / "split.txt") << content;
  if (staged_by_gone) std::ofstream(dir / ".staged-by-golden-update.999999999");
}

}  // namespace

TEST_CASE("a golden update killed while swapping is completed: every folder new", "[golden_update]") {
  const fs::path g = fresh_dir("journal");
  // Three goldens: `a` swapped in by RENAME_EXCHANGE (the old one at its staging path), `b` not
  // yet, `c` new (no golden before) and not yet.
  folder(g / "a", "a new", true);
  folder(g / ".a.new.999999999", "a old");
  folder(g / "b", "b old");
  folder(g / ".b.new.999999999", "b new", true);
  folder(g / ".c.new.999999999", "c new", true);
  std::ofstream(g / ".golden-update.999999999") << seal_with_checksum("mlasim-golden-update-journal 2\na\nb\nc\nend\n");
  const std::vector<std::string> notes = recover_golden_leftovers(g);
  REQUIRE(notes.size() == 1);
  CHECK(notes[0] ==
        "completed `golden update` 999999999, killed while swapping its 3 goldens in (2 were still to swap)");
  CHECK(entries(g) == std::vector<std::string>{"a", "b", "c"});
  for (const char* name : {"a", "b", "c"}) {
    CHECK(read_all(g / name / "split.txt") == std::string(name) + " new");
    CHECK(entries(g / name) == std::vector<std::string>{"split.txt"});
  }
  fs::remove_all(g);
}

TEST_CASE("a golden update killed before its swap leaves the old goldens", "[golden_update]") {
  const fs::path g = fresh_dir("staging");
  folder(g / "a", "a old");
  folder(g / ".a.new.999999999", "a new", true);
  folder(g / ".b.new.999999999", "b half");  // killed while staging b: no marker
  std::ofstream(g / ".golden-update.999999999.tmp.999999999") << "mlasim-golden-update-journal 2\na\n";
  // An update still running (this process) keeps its staging folder.
  const std::string mine = ".a.new." + std::to_string(::getpid());
  folder(g / mine, "a other");
  const std::vector<std::string> notes = recover_golden_leftovers(g);
  CHECK(notes.size() == 3);
  CHECK(entries(g) == std::vector<std::string>{mine, "a"});
  CHECK(read_all(g / "a/split.txt") == "a old");
  fs::remove_all(g);
}

TEST_CASE("an old golden moved aside by a killed two-rename swap comes back", "[golden_update]") {
  const fs::path g = fresh_dir("aside");
  folder(g / ".a.old.999999999", "a old");
  const std::vector<std::string> notes = recover_golden_leftovers(g);
  REQUIRE(notes.size() == 1);
  CHECK(entries(g) == std::vector<std::string>{"a"});
  CHECK(read_all(g / "a/split.txt") == "a old");
  fs::remove_all(g);
}

TEST_CASE("GoldenUpdate stages two scenarios and swaps both in, leaving nothing else", "[golden_update]") {
  const fs::path g = fresh_dir("real");
  folder(g / "lone_one_token_prompt", "old");
  {
    GoldenUpdate update(g.string(), "test");
    REQUIRE(stage_golden(update, MLASIM_SOURCE_DIR "/scenarios/seed/lone_one_token_prompt.yaml").ok());
    REQUIRE(stage_golden(update, MLASIM_SOURCE_DIR "/scenarios/seed/lone_five_token_prompt.yaml").ok());
    CHECK(read_all(g / "lone_one_token_prompt/split.txt") == "old");  // nothing swapped before commit
    Result<std::vector<std::string>> written = update.commit();
    REQUIRE(written.ok());
    CHECK(written.value() ==
          std::vector<std::string>{(g / "lone_one_token_prompt").string(), (g / "lone_five_token_prompt").string()});
  }
  CHECK(entries(g) == std::vector<std::string>{"lone_five_token_prompt", "lone_one_token_prompt"});
  CHECK(entries(g / "lone_one_token_prompt") ==
        std::vector<std::string>{"logits.npy", "logits_index.json", "meta.yaml", "split.txt"});
  CHECK(read_all(g / "lone_one_token_prompt/split.txt").rfind("# mlasim split golden, format 1\n", 0) == 0);
  {
    GoldenUpdate dropped(g.string(), "test");  // staged, never committed: nothing changes
    REQUIRE(stage_golden(dropped, MLASIM_SOURCE_DIR "/scenarios/seed/lone_one_token_prompt.yaml").ok());
  }
  CHECK(entries(g) == std::vector<std::string>{"lone_five_token_prompt", "lone_one_token_prompt"});
  fs::remove_all(g);
}
