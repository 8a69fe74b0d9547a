// Golden updates staged whole, swapped in as one set through a journal, recovered after a kill.
#include "verify/golden_update.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <sstream>

#include "base/atomic_file.h"
#include "base/leftover_file.h"
#include "base/output_set.h"
#include "verify/logits_golden.h"
#include "verify/split_golden.h"
#include "scenario/scenario_loader.h"

namespace mlasim {
namespace fs = std::filesystem;
namespace {

// Written last into a staging folder: the folder is whole. Inside golden/NAME/ after the swap,
// until the update finishes: that folder is the new one.
std::string marker(long pid) { return ".staged-by-golden-update." + std::to_string(pid); }
constexpr const char* kJournalHeader = "mlasim-golden-update-journal 2";
constexpr std::size_t kMaxJournalBytes = std::size_t{16} << 20;

fs::path staging_path(const fs::path& golden_dir, const std::string& name, long pid) {
  return golden_dir / ("." + name + ".new." + std::to_string(pid));
}
fs::path old_path(const fs::path& golden_dir, const std::string& name, long pid) {
  return golden_dir / ("." + name + ".old." + std::to_string(pid));
}
fs::path journal_path(const fs::path& golden_dir, long pid) {
  return golden_dir / (".golden-update." + std::to_string(pid));
}

// Something is at `p` itself (a dangling link counts).
bool present(const fs::path& p) { return leftover_problem(p.string(), true) != "missing"; }

// The entry at `p` (the old golden after a swap, a staging folder) goes when it is this user's
// real folder; a link only when `links_too` (the live update's own swap put it there).
void remove_own_folder(const fs::path& p, bool links_too = false) {
  std::error_code ignored;
  if (is_own_directory(p.string())) fs::remove_all(p, ignored);
  else if (links_too && leftover_problem(p.string(), true) == "a symbolic link") fs::remove(p, ignored);
}

Error output_error(const fs::path& dir, const std::string& what, int err, const std::string& hint = "") {
  Error e;
  e.file = dir.string();
  e.message = err != 0 ? what + ": " + std::error_code(err, std::generic_category()).message() : what;
  e.hint = !hint.empty() ? hint : output_errno_hint(err);
  e.output = true;
  return e;
}

// Puts the staged folder at golden/NAME: one RENAME_EXCHANGE (the old golden then at `staging`),
// or where the file system lacks it two renames (the old golden at `old`).
Status swap_in(const fs::path& staging, const fs::path& dir, const fs::path& old) {
  const bool had_previous = present(dir);
  if (had_previous && ::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, dir.c_str(), RENAME_EXCHANGE) == 0)
    return Status::Ok();
  if (had_previous && errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
    return output_error(dir, "cannot swap the new golden into place", errno);
  if (had_previous && ::rename(dir.c_str(), old.c_str()) != 0)
    return output_error(dir, "cannot move the old golden aside", errno);
  if (::rename(staging.c_str(), dir.c_str()) != 0) {
    const int err = errno;
    if (had_previous) ::rename(old.c_str(), dir.c_str());  // put the old golden back
    return output_error(dir, "cannot move the new golden into place", err);
  }
  return Status::Ok();
}

// After swap_in: the old golden goes, then the marker (while it is there, a recovery knows the
// folder in place is the new one).
void drop_old(const fs::path& staging, const fs::path& dir, const fs::path& old, long pid, bool live) {
  remove_own_folder(staging, live);
  remove_own_folder(old, live);
  if (is_own_directory(dir.string()) && is_own_regular_file((dir / marker(pid)).string()))
    ::unlink((dir / marker(pid)).c_str());
}

// The scenario names a sealed journal lists; empty with `why` set when it is not one mlasim wrote
// or a name could lead outside the golden folder.
std::vector<std::string> read_journal(const fs::path& journal, std::string& why) {
  Result<std::string> text = read_own_regular_file(journal.string(), kMaxJournalBytes);
  std::string body;
  if (!text) why = text.error().message;
  else if (!unseal_checksum(text.value(), body)) why = "its checksum line is missing or does not match its contents";
  if (!why.empty()) return {};
  std::istringstream in(body);
  std::string line;
  std::vector<std::string> names;
  if (!std::getline(in, line) || line != kJournalHeader) why = "it does not start with the journal marker";
  while (why.empty() && std::getline(in, line) && line != "end") {
    if (std::string problem = golden_name_problem(line); !problem.empty()) why = "a name in it " + problem;
    names.push_back(line);
  }
  if (why.empty() && (line != "end" || names.empty())) why = "no end line, or no names";
  if (!why.empty()) names.clear();
  return names;
}

// "N" of "<prefix>N" when N is a PID, else -1.
long pid_after(const std::string& leaf, const std::string& prefix) {
  if (leaf.rfind(prefix, 0) != 0) return -1;
  const std::string n = leaf.substr(prefix.size());
  if (n.empty() || n.size() > 9 || n.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stol(n);
}

}  // namespace

GoldenUpdate::GoldenUpdate(std::string golden_dir, std::string generator)
    : golden_dir_(std::move(golden_dir)), generator_(std::move(generator)) {}

GoldenUpdate::~GoldenUpdate() {
  std::error_code ignored;
  for (const fs::path& p : staged_) fs::remove_all(p, ignored);
}

Status GoldenUpdate::stage(const Scenario& s, const RunRecord& record) {
  const fs::path dir = fs::path(split_golden_path(golden_dir_.string(), s.name)).parent_path();
  const fs::path staging = staging_path(dir.parent_path(), s.name, ::getpid());
  std::error_code ec;
  fs::create_directories(dir.parent_path(), ec);  // the golden folder the user named
  if (ec) return output_error(dir, "cannot create the golden folder", ec.value());
  // A folder of this user's at the staging name is a leftover of a killed update with this PID;
  // anything else there (a link, a file, another user's folder) stays, and the update stops.
  if (present(staging) && !is_own_directory(staging.string()))
    return output_error(dir, "cannot stage the new golden: " + staging.string() + " is in the way (" +
                                 leftover_problem(staging.string(), true) + "); mlasim leaves it alone",
                        0, "remove it, then run the update again");
  remove_own_folder(staging);
  if (::mkdir(staging.c_str(), 0755) != 0) return output_error(dir, "cannot create the golden folder", errno);
  staged_.push_back(staging);
  names_.push_back(s.name);
  auto failed = [&](const Error& e) { return output_error(dir, e.message, 0, e.hint); };
  if (Status st = write_file_atomically((staging / "split.txt").string(), format_split_golden(s, record, generator_));
      !st)
    return failed(st.error());
  if (Status st = write_logits_golden(staging.string(), s, record.logits, record.names, generator_); !st)
    return failed(st.error());
  if (Status st = write_own_file_atomically((staging / marker(::getpid())).string(), ""); !st) return failed(st.error());
  return Status::Ok();
}

Result<std::vector<std::string>> GoldenUpdate::commit() {
  const long pid = ::getpid();
  std::string journal = std::string(kJournalHeader) + "\n";
  for (const std::string& name : names_) journal += name + "\n";
  journal = seal_with_checksum(journal + "end\n");
  const fs::path journal_file = journal_path(golden_dir_, pid);
  if (names_.size() > 1)  // one folder is swapped in one step: no journal needed
    if (Status st = write_own_file_atomically(journal_file.string(), journal); !st)
      return output_error(golden_dir_, st.error().message, 0, st.error().hint);
  std::vector<std::string> written;
  for (std::size_t i = 0; i < names_.size(); ++i) {
    const fs::path dir = golden_dir_ / names_[i];
    if (Status st = swap_in(staged_[i], dir, old_path(golden_dir_, names_[i], pid)); !st) {
      Error e = st.error();
      if (names_.size() > 1)
        e.message += "; " + std::to_string(i) + " of the " + std::to_string(names_.size()) +
                     " goldens were swapped in: the journal " + journal_file.string() +
                     " names the rest, and the next `mlasim golden update` or `mlasim check` of " +
                     golden_dir_.string() + " swaps them in";
      if (names_.size() > 1) staged_.clear();  // the journal's now
      return e;
    }
    written.push_back(dir.string());
  }
  for (std::size_t i = 0; i < names_.size(); ++i)
    drop_old(staged_[i], golden_dir_ / names_[i], old_path(golden_dir_, names_[i], pid), pid, true);
  staged_.clear();
  ::unlink(journal_file.c_str());
  return written;
}

std::vector<std::string> recover_golden_leftovers(const fs::path& golden_dir) {
  std::vector<std::string> notes;
  std::error_code ec;
  if (!fs::is_directory(golden_dir, ec)) return notes;
  std::vector<std::string> leaves;  // listed first, changed after
  for (auto it = fs::directory_iterator(golden_dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    if (const std::string leaf = it->path().filename().string(); leaf.rfind(".", 0) == 0) leaves.push_back(leaf);
  auto leave_alone = [&](const fs::path& p, const std::string& why) {
    notes.push_back("left " + p.string() + " alone: " + why);
  };
  // A journal: the update was swapping when it was killed; every folder it names is staged whole.
  for (const std::string& leaf : leaves) {
    const long pid = pid_after(leaf, ".golden-update.");
    if (pid < 0 || !process_gone(pid)) continue;
    std::string why;
    const std::vector<std::string> names = read_journal(golden_dir / leaf, why);
    if (names.empty()) {
      leave_alone(golden_dir / leaf, "named like a `golden update` journal but " + why);
      continue;
    }
    int swapped = 0;
    for (const std::string& name : names) {
      const fs::path dir = golden_dir / name, staging = staging_path(golden_dir, name, pid),
                     old = old_path(golden_dir, name, pid);
      if (!present(dir / marker(pid)) && present(staging)) {
        if (!is_own_directory(staging.string()) || !is_own_regular_file((staging / marker(pid)).string())) {
          leave_alone(staging, "not a staging folder mlasim finished (" + leftover_problem(staging.string(), true) + ")");
          continue;
        }
        if (!swap_in(staging, dir, old)) continue;  // left for a later recovery
        ++swapped;
      }
      drop_old(staging, dir, old, pid, false);
    }
    ::unlink((golden_dir / leaf).c_str());
    notes.push_back("completed `golden update` " + std::to_string(pid) + ", killed while swapping its " +
                    std::to_string(names.size()) + " goldens in (" + std::to_string(swapped) + " were still to swap)");
  }
  // Staging and old folders of updates no longer running, and journals' temporaries.
  for (const std::string& leaf : leaves) {
    const fs::path path = golden_dir / leaf;
    if (!present(path)) continue;  // handled with its journal above
    const std::size_t new_at = leaf.rfind(".new."), old_at = leaf.rfind(".old."), tmp_at = leaf.rfind(".tmp.");
    if (leaf.rfind(".golden-update.", 0) == 0 && tmp_at != std::string::npos) {
      const long pid = pid_after(leaf.substr(tmp_at), ".tmp.");
      if (pid < 0 || !process_gone(pid)) continue;
      if (const std::string problem = leftover_problem(path.string()); !problem.empty())
        leave_alone(path, "named like a journal's temporary but " + problem);
      else if (::unlink(path.c_str()) == 0)
        notes.push_back("removed " + path.string() + ", left by a killed `golden update`");
      continue;
    }
    const std::size_t at = new_at == std::string::npos   ? old_at
                           : old_at == std::string::npos ? new_at
                                                         : std::max(new_at, old_at);
    if (at == std::string::npos || at < 2) continue;
    const long pid = pid_after(leaf.substr(at + 4), ".");
    if (pid < 0 || !process_gone(pid)) continue;
    const std::string name = leaf.substr(1, at - 1);
    if (!golden_name_problem(name).empty()) continue;  // not a name `golden update` stages
    if (const std::string problem = leftover_problem(path.string(), true); !problem.empty()) {
      leave_alone(path, "named like a `golden update` folder but " + problem);
      continue;
    }
    const fs::path dir = golden_dir / name;
    if (at == old_at && !present(dir)) {
      std::error_code ignored;
      fs::rename(path, dir, ignored);  // the only copy of that golden: it goes back
      notes.push_back("put " + dir.string() + " back from " + leaf + ", moved aside by a killed `golden update`");
    } else {
      remove_own_folder(path);
      if (is_own_directory(dir.string()) && is_own_regular_file((dir / marker(pid)).string()))
        ::unlink((dir / marker(pid)).c_str());  // a one-folder update killed after its swap
      notes.push_back("removed " + path.string() + ", left by a killed `golden update`");
    }
  }
  return notes;
}

}  // namespace mlasim
