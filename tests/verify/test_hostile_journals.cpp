// Hostile leftovers beside outputs and in golden folders: forged, relative, absolute, symlinked,
// FIFO, hard-linked and other users' journals, temporaries and staging folders. In every case a
// watched sentinel tree outside the named outputs is unchanged, nothing hangs, the refusal is
// named in a note, and the named outputs are as they were.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "base/atomic_file.h"
#include "base/leftover_file.h"
#include "base/output_set.h"
#include "harness/golden_stage.h"
#include "verify/golden_update.h"
#include "tests/file_test_util.h"

using namespace mlasim;
using mlasim::test::entries;
using mlasim::test::read_all;
using mlasim::test::snapshot;
namespace fs = std::filesystem;

namespace {

constexpr const char* kGone = "999999999";  // a PID no process has

struct Workspace {
  fs::path root, work, victim;
  std::string before;
  explicit Workspace(const std::string& tag) {
    root = test::fresh_dir("mlasim_hostile_" + tag);
    work = root / "work";
    victim = root / "victim";
    fs::create_directories(work);
    fs::create_directories(victim / "sub");
    std::ofstream(victim / "passwd") << "root:x:0:0";
    std::ofstream(victim / "sub/data") << "precious";
    std::ofstream(work / "run.json") << "old";
    before = snapshot(victim);
  }
  ~Workspace() { fs::remove_all(root); }
  std::string target() const { return (work / "run.json").string(); }
  bool victim_unchanged() const { return snapshot(victim) == before; }
};

std::string encode(const std::string& p) { return std::to_string(p.size()) + ":" + p + "\n"; }

std::string publish_journal(const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::string j = "mlasim-publish-journal 2\n";
  for (const auto& [tmp, target] : pairs) j += encode(tmp) + encode(target);
  return seal_with_checksum(j + "end\n");
}

bool any_note_has(const std::vector<std::string>& notes, const std::string& needle) {
  for (const std::string& n : notes)
    if (n.find(needle) != std::string::npos) return true;
  return false;
}

bool running_as_root() { return ::geteuid() == 0; }

}  // namespace

TEST_CASE("a forged publish journal naming files outside the outputs is left alone", "[hostile_journal]") {
  Workspace w("forged");
  const std::string victim_file = (w.victim / "passwd").string();
  std::ofstream(victim_file + ".tmp." + kGone) << "attacker";
  const std::string before_tmp = snapshot(w.victim);
  SECTION("absolute path") {
    std::ofstream(w.target() + ".publish." + kGone)
        << publish_journal({{victim_file + ".tmp." + kGone, victim_file}, {w.target() + ".tmp." + kGone, w.target()}});
  }
  SECTION("relative path") {
    std::ofstream(w.target() + ".publish." + kGone)
        << publish_journal({{"../victim/passwd.tmp." + std::string(kGone), "../victim/passwd"}});
  }
  SECTION("a temporary that is not its target's") {
    std::ofstream(w.target() + ".publish." + kGone) << publish_journal({{victim_file, w.target()}});
  }
  SECTION("the old format without a checksum") {
    std::ofstream(w.target() + ".publish." + kGone)
        << "mlasim-publish-journal 1\n" + encode(victim_file + ".tmp." + kGone) + encode(victim_file) + "end\n";
  }
  SECTION("a checksum that does not match") {
    std::string j = publish_journal({{w.target() + ".tmp." + kGone, w.target()}});
    j[30] ^= 1;
    std::ofstream(w.target() + ".publish." + kGone) << j;
  }
  const std::vector<std::string> notes = recover_output_leftovers({w.target()});
  CHECK(snapshot(w.victim) == before_tmp);
  CHECK(read_all(w.target()) == "old");
  CHECK(any_note_has(notes, "left " + w.target() + ".publish.999999999 alone"));
  CHECK(entries(w.work) == std::vector<std::string>{"run.json", "run.json.publish.999999999"});
}

TEST_CASE("a symlinked journal, temporary or hard-linked temporary is never acted on", "[hostile_journal]") {
  Workspace w("links");
  const std::string victim_file = (w.victim / "passwd").string();
  const std::string tmp = w.target() + ".tmp." + kGone, journal = w.target() + ".publish." + kGone;
  SECTION("a journal that is a symbolic link to a valid journal") {
    std::ofstream(w.victim / "j") << publish_journal({{tmp, w.target()}});
    std::ofstream(tmp) << "new";
    w.before = snapshot(w.victim);
    fs::create_symlink(w.victim / "j", journal);
    const std::vector<std::string> notes = recover_output_leftovers({w.target()});
    CHECK(any_note_has(notes, "left " + journal + " alone: named like a journal but a symbolic link"));
    CHECK(read_all(w.target()) == "old");
    CHECK(fs::is_symlink(fs::symlink_status(journal)));
  }
  SECTION("a valid journal whose temporary is a symbolic link to a file outside") {
    std::ofstream(journal) << publish_journal({{tmp, w.target()}});
    fs::create_symlink(victim_file, tmp);
    const std::vector<std::string> notes = recover_output_leftovers({w.target()});
    CHECK(any_note_has(notes, "left " + tmp + " alone: a symbolic link"));
    CHECK(fs::is_regular_file(fs::symlink_status(w.target())));  // the output did not become the link
    CHECK(read_all(w.target()) == "old");
  }
  SECTION("a stale temporary that is a symbolic link") {
    fs::create_symlink(victim_file, tmp);
    const std::vector<std::string> notes = recover_output_leftovers({w.target()});
    CHECK(any_note_has(notes, "left " + tmp + " alone: named like a temporary of mlasim's but a symbolic link"));
    CHECK(fs::is_symlink(fs::symlink_status(tmp)));
  }
  SECTION("a temporary hard-linked to a file outside") {
    fs::create_hard_link(victim_file, tmp);
    w.before = snapshot(w.victim);
    const std::vector<std::string> notes = recover_output_leftovers({w.target()});
    CHECK(any_note_has(notes, "a file with 2 hard links"));
    CHECK(fs::exists(tmp));
  }
  CHECK(w.victim_unchanged());
}

TEST_CASE("FIFOs named like journals and temporaries neither hang nor are touched", "[hostile_journal]") {
  Workspace w("fifo");
  const std::string journal = w.target() + ".publish." + kGone, tmp = w.target() + ".tmp." + kGone;
  REQUIRE(::mkfifo(journal.c_str(), 0644) == 0);
  REQUIRE(::mkfifo(tmp.c_str(), 0644) == 0);
  const std::vector<std::string> notes = recover_output_leftovers({w.target()});
  CHECK(any_note_has(notes, "left " + journal + " alone: named like a journal but a FIFO"));
  CHECK(any_note_has(notes, "left " + tmp + " alone: named like a temporary of mlasim's but a FIFO"));
  CHECK(entries(w.work) == std::vector<std::string>{"run.json", "run.json.publish.999999999", "run.json.tmp.999999999"});
  CHECK(w.victim_unchanged());
}

TEST_CASE("journals and temporaries of another user are left alone", "[hostile_journal]") {
  if (!running_as_root()) {
    WARN("not root: cannot give a file to another user; skipped");
    return;
  }
  Workspace w("uid");
  const std::string journal = w.target() + ".publish." + kGone, tmp = w.target() + ".tmp." + kGone;
  std::ofstream(journal) << publish_journal({{tmp, w.target()}});
  std::ofstream(tmp) << "new";
  REQUIRE(::chown(journal.c_str(), 12345, 12345) == 0);
  REQUIRE(::chown(tmp.c_str(), 12345, 12345) == 0);
  const std::vector<std::string> notes = recover_output_leftovers({w.target()});
  CHECK(any_note_has(notes, "owned by another user (uid 12345)"));
  CHECK(read_all(w.target()) == "old");
  CHECK(fs::exists(journal));
  CHECK(fs::exists(tmp));
  CHECK(w.victim_unchanged());
}

TEST_CASE("a genuine journal among hostile files is still completed", "[hostile_journal]") {
  Workspace w("genuine");
  const std::string second = (w.work / "run.jsonl").string();
  std::ofstream(second) << "old";
  std::ofstream(w.target() + ".tmp." + kGone) << "new";
  std::ofstream(second + ".tmp." + kGone) << "new";
  const std::string j =
      publish_journal({{w.target() + ".tmp." + kGone, w.target()}, {second + ".tmp." + kGone, second}});
  std::ofstream(w.target() + ".publish." + kGone) << j;
  std::ofstream(second + ".publish." + kGone) << j;
  fs::create_symlink(w.victim / "passwd", w.target() + ".tmp.999999998");
  const std::vector<std::string> notes = recover_output_leftovers({second, w.target()});
  CHECK(any_note_has(notes, "completed the output set of process 999999999"));
  CHECK(read_all(w.target()) == "new");
  CHECK(read_all(second) == "new");
  CHECK(entries(w.work) == std::vector<std::string>{"run.json", "run.json.tmp.999999998", "run.jsonl"});
  CHECK(w.victim_unchanged());
}

TEST_CASE("an output's temporary name held by a link or FIFO stops the write, never writes through", "[hostile_journal]") {
  Workspace w("own_tmp");
  const std::string tmp = w.target() + ".tmp." + std::to_string(::getpid());
  fs::create_symlink(w.victim / "passwd", tmp);
  AtomicOutputFile f;
  const Status st = f.open(w.target());
  REQUIRE_FALSE(st.ok());
  CHECK(st.error().message.find("a file mlasim did not create is at that name (a symbolic link)") != std::string::npos);
  const Status st2 = write_file_atomically(w.target(), "new");
  REQUIRE_FALSE(st2.ok());
  CHECK(read_all(w.target()) == "old");
  CHECK(w.victim_unchanged());
  fs::remove(tmp);
  // This user's regular file at that name (a process with this PID killed long ago) is replaced.
  std::ofstream(tmp) << "stale";
  REQUIRE(write_file_atomically(w.target(), "new").ok());
  CHECK(read_all(w.target()) == "new");
  CHECK(entries(w.work) == std::vector<std::string>{"run.json"});
}

namespace {

struct GoldenWorkspace {
  fs::path root, golden, victim;
  std::string before;
  explicit GoldenWorkspace(const std::string& tag) {
    root = test::fresh_dir("mlasim_hostile_golden_" + tag);
    golden = root / "golden";
    victim = root / "victim";
    fs::create_directories(golden / "a");
    std::ofstream(golden / "a/split.txt") << "a old";
    fs::create_directories(victim / "inner");
    std::ofstream(victim / "split.txt") << "victim";
    std::ofstream(victim / ".staged-by-golden-update.999999999");
    std::ofstream(victim / "inner/data") << "precious";
    before = snapshot(victim);
  }
  ~GoldenWorkspace() { fs::remove_all(root); }
  std::string journal() const { return (golden / ".golden-update.999999999").string(); }
};

std::string golden_journal(const std::vector<std::string>& names) {
  std::string j = "mlasim-golden-update-journal 2\n";
  for (const std::string& n : names) j += n + "\n";
  return seal_with_checksum(j + "end\n");
}

}  // namespace

TEST_CASE("a forged golden-update journal cannot reach outside the golden folder", "[hostile_journal]") {
  GoldenWorkspace w("forged");
  std::string why;
  SECTION("../victim") {
    std::ofstream(w.journal()) << golden_journal({"a", "../victim"});
    why = "a name in it starts with '.'";
  }
  SECTION("an absolute path") {
    std::ofstream(w.journal()) << golden_journal({w.victim.string()});
    why = "a name in it contains a path separator";
  }
  SECTION("a name with a separator inside") {
    std::ofstream(w.journal()) << golden_journal({"a/../../victim"});
    why = "a name in it contains a path separator";
  }
  SECTION("..") {
    std::ofstream(w.journal()) << golden_journal({".."});
    why = "a name in it starts with '.'";
  }
  SECTION("the old format") {
    std::ofstream(w.journal()) << "mlasim-golden-update-journal 1\na\nend\n";
    why = "its checksum line is missing";
  }
  SECTION("a FIFO") {
    REQUIRE(::mkfifo(w.journal().c_str(), 0644) == 0);
    why = "a FIFO";
  }
  SECTION("a symbolic link to a valid journal") {
    std::ofstream(w.root / "j") << golden_journal({"a"});
    fs::create_symlink(w.root / "j", w.journal());
    why = "a symbolic link";
  }
  const std::vector<std::string> notes = recover_golden_leftovers(w.golden);
  CHECK(any_note_has(notes, "left " + w.journal() + " alone: named like a `golden update` journal but"));
  CHECK(any_note_has(notes, why));
  CHECK(read_all(w.golden / "a/split.txt") == "a old");
  CHECK(snapshot(w.victim) == w.before);
}

TEST_CASE("symlinked staging and old folders never replace a golden", "[hostile_journal]") {
  GoldenWorkspace w("staging");
  SECTION("a staging folder that is a link, named by a valid journal") {
    std::ofstream(w.journal()) << golden_journal({"a"});
    fs::create_symlink(w.victim, w.golden / ".a.new.999999999");
    const std::vector<std::string> notes = recover_golden_leftovers(w.golden);
    CHECK(any_note_has(notes, "not a staging folder mlasim finished (a symbolic link)"));
    CHECK(fs::is_directory(fs::symlink_status(w.golden / "a")));
    CHECK(read_all(w.golden / "a/split.txt") == "a old");
  }
  SECTION("an old folder that is a link where no golden is") {
    fs::remove_all(w.golden / "a");
    fs::create_symlink(w.victim, w.golden / ".a.old.999999999");
    const std::vector<std::string> notes = recover_golden_leftovers(w.golden);
    CHECK(any_note_has(notes, "named like a `golden update` folder but a symbolic link"));
    CHECK_FALSE(fs::exists(fs::symlink_status(w.golden / "a")));
  }
  SECTION("a staging folder of another user") {
    if (!running_as_root()) {
      WARN("not root: cannot give a folder to another user; skipped");
      return;
    }
    fs::create_directories(w.golden / ".a.new.999999999");
    REQUIRE(::chown((w.golden / ".a.new.999999999").c_str(), 12345, 12345) == 0);
    const std::vector<std::string> notes = recover_golden_leftovers(w.golden);
    CHECK(any_note_has(notes, "owned by another user (uid 12345)"));
    CHECK(fs::exists(w.golden / ".a.new.999999999"));
  }
  CHECK(snapshot(w.victim) == w.before);
}

TEST_CASE("golden update stops when its own staging name is a link", "[hostile_journal]") {
  GoldenWorkspace w("own_staging");
  const fs::path staging = w.golden / (".lone_one_token_prompt.new." + std::to_string(::getpid()));
  fs::create_symlink(w.victim, staging);
  {
    GoldenUpdate update(w.golden.string(), "test");
    const Status st = stage_golden(update, MLASIM_SOURCE_DIR "/scenarios/seed/lone_one_token_prompt.yaml");
    REQUIRE_FALSE(st.ok());
    CHECK(st.error().message.find("is in the way (a symbolic link); mlasim leaves it alone") != std::string::npos);
  }
  CHECK(fs::is_symlink(fs::symlink_status(staging)));
  CHECK(snapshot(w.victim) == w.before);
}
