// Output sets published through a journal: all renamed on success; after a kill, the next writer
// completes a journal it finds (the new set) or removes the temporaries of an unjournalled set
// (the old set), and leaves the files of a process still running alone.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "base/atomic_file.h"
#include "base/created_folders.h"
#include "base/leftover_file.h"
#include "base/output_set.h"
#include "tests/file_test_util.h"

using namespace mlasim;
using mlasim::test::entries;
using mlasim::test::read_all;
namespace fs = std::filesystem;

namespace {

fs::path fresh_dir(const std::string& tag) {
  const fs::path dir = test::fresh_dir("mlasim_output_set_" + tag);
  fs::create_directories(dir / "sub");
  return dir;
}

// A PID no process has: above Linux's largest (pid_max is at most 2^22).
constexpr const char* kGone = "999999999";

// A journal as publish_together writes it, naming `pairs` (temporary, target), sealed with its
// checksum line.
std::string journal(const std::vector<std::pair<fs::path, fs::path>>& pairs) {
  std::string j = "mlasim-publish-journal 2\n";
  for (const auto& [tmp, target] : pairs)
    j += std::to_string(tmp.string().size()) + ":" + tmp.string() + "\n" + std::to_string(target.string().size()) +
         ":" + target.string() + "\n";
  return seal_with_checksum(j + "end\n");
}

}  // namespace

TEST_CASE("publish_together renames every file and leaves no journal", "[output_set]") {
  const fs::path dir = fresh_dir("ok");
  for (const char* leaf : {"a.json", "sub/b.npy", "sub/b.json"}) std::ofstream(dir / leaf) << "old";
  {
    AtomicOutputFile a, b, c;
    REQUIRE(a.open((dir / "a.json").string()).ok());
    REQUIRE(b.open((dir / "sub/b.npy").string()).ok());
    REQUIRE(c.open((dir / "sub/b.json").string()).ok());
    for (AtomicOutputFile* f : {&a, &b, &c}) f->write("new");
    for (AtomicOutputFile* f : {&a, &b, &c}) REQUIRE(f->finish().ok());
    CHECK(read_all(dir / "a.json") == "old");
    REQUIRE(publish_together({&a, &b, &c}).ok());
  }
  for (const char* leaf : {"a.json", "sub/b.npy", "sub/b.json"}) CHECK(read_all(dir / leaf) == "new");
  CHECK(entries(dir) == std::vector<std::string>{"a.json", "sub"});
  CHECK(entries(dir / "sub") == std::vector<std::string>{"b.json", "b.npy"});
  fs::remove_all(dir);
}

TEST_CASE("a journal left by a killed publish is completed by the next writer of the same outputs", "[output_set]") {
  const fs::path dir = fresh_dir("journal");
  const fs::path a = dir / "a.json", b = dir / "sub/b.npy", c = dir / "sub/b.json";
  // Killed after renaming a.json: b and c are old, their finished temporaries wait.
  std::ofstream(a) << "new";
  std::ofstream(b) << "old";
  std::ofstream(c) << "old";
  const std::string pid = kGone;
  const fs::path tb = b.string() + ".tmp." + pid, tc = c.string() + ".tmp." + pid;
  std::ofstream(tb) << "new";
  std::ofstream(tc) << "new";
  const std::string j = journal({{a.string() + ".tmp." + pid, a}, {tb, b}, {tc, c}});
  for (const fs::path& t : {a, b, c}) std::ofstream(t.string() + ".publish." + pid) << j;
  // A writer of only one of the three leaves the journal and its temporaries alone.
  std::vector<std::string> notes = recover_output_leftovers({c.string()});
  REQUIRE(notes.size() == 1);
  CHECK(notes[0] == "left " + c.string() + ".publish.999999999 alone: a journal of process 999999999, but it names " +
                        a.string() + ", which is not an output of this command (run the command that wrote it again "
                        "to complete it, or remove it)");
  CHECK(read_all(b) == "old");
  CHECK(read_all(tb) == "new");
  // The same outputs again (in another order): the whole set is completed.
  notes = recover_output_leftovers({c.string(), a.string(), b.string()});
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].find("completed the output set of process 999999999") != std::string::npos);
  CHECK(notes[0].find("2 of 3 files renamed") != std::string::npos);
  for (const fs::path& t : {a, b, c}) CHECK(read_all(t) == "new");
  CHECK(entries(dir) == std::vector<std::string>{"a.json", "sub"});
  CHECK(entries(dir / "sub") == std::vector<std::string>{"b.json", "b.npy"});
  fs::remove_all(dir);
}

TEST_CASE("temporaries of a killed run without a journal are removed, the old set stays", "[output_set]") {
  const fs::path dir = fresh_dir("stale");
  const fs::path a = dir / "run.json";
  std::ofstream(a) << "old";
  std::ofstream(a.string() + ".tmp." + kGone) << "half";
  std::ofstream(a.string() + ".publish." + kGone + ".tmp." + kGone) << "half a journal";
  // This process's own temporary and files that only look alike stay.
  const std::string mine = a.string() + ".tmp." + std::to_string(::getpid());
  std::ofstream(mine) << "mine";
  std::ofstream(dir / "run.json.tmp.x1") << "not a PID";
  std::ofstream(dir / "run.jsonl.tmp.999999999") << "another output's";
  const std::vector<std::string> notes = recover_output_leftovers({a.string()});
  CHECK(notes.size() == 2);
  CHECK(read_all(a) == "old");
  CHECK(entries(dir) == std::vector<std::string>{"run.json", "run.json.tmp." + std::to_string(::getpid()),
                                                 "run.json.tmp.x1", "run.jsonl.tmp.999999999", "sub"});
  fs::remove(mine);
  fs::remove_all(dir);
}

TEST_CASE("process_gone: this process and its parent run, an impossible PID does not", "[output_set]") {
  CHECK_FALSE(process_gone(::getpid()));
  CHECK_FALSE(process_gone(::getppid()));
  CHECK(process_gone(999999999));
  CHECK_FALSE(process_gone(0));
}

TEST_CASE("CreatedFolders removes the folders it made unless kept, innermost first", "[output_set]") {
  const fs::path dir = fresh_dir("folders");
  {
    CreatedFolders f;
    REQUIRE(f.create((dir / "x/y/z").string()).ok());
    CHECK(fs::is_directory(dir / "x/y/z"));
  }
  CHECK_FALSE(fs::exists(dir / "x"));
  {
    CreatedFolders f;
    REQUIRE(f.create((dir / "x/y").string()).ok());
    f.keep();
  }
  CHECK(fs::is_directory(dir / "x/y"));
  {
    CreatedFolders f;  // x exists: only y2 is its own, and a folder with a file in it stays
    REQUIRE(f.create((dir / "x/y2").string()).ok());
    std::ofstream(dir / "x/y2/f") << "kept";
  }
  CHECK(fs::exists(dir / "x/y2/f"));
  {
    CreatedFolders f;  // a file in the way: an error naming the folder, not an output error
    std::ofstream(dir / "file") << "";
    const Status st = f.create((dir / "file/sub").string());
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().file == (dir / "file/sub").string());
    CHECK(st.error().message.find("cannot create the folder") != std::string::npos);
    CHECK_FALSE(st.error().output);
  }
  fs::remove_all(dir);
}
