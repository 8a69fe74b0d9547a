// Publishing output files as one set through a journal, and recovering after a kill.
#include "base/output_set.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string_view>

#include "base/leftover_file.h"

namespace mlasim {
namespace {

namespace fs = std::filesystem;

constexpr const char* kJournalHeader = "mlasim-publish-journal 2\n";
constexpr std::size_t kMaxJournalBytes = std::size_t{1} << 20;

// A path as "<length>:<bytes>\n", so any byte may appear in it.
std::string encode(const std::string& path) { return std::to_string(path.size()) + ":" + path + "\n"; }

bool decode(std::string_view& in, std::string& path) {
  const std::size_t colon = in.find(':');
  if (colon == 0 || colon == std::string_view::npos || colon > 5 ||
      in.substr(0, colon).find_first_not_of("0123456789") != std::string_view::npos)
    return false;
  const std::size_t n = std::stoul(std::string(in.substr(0, colon)));
  if (n > 65536 || in.size() < colon + 1 + n + 1 || in[colon + 1 + n] != '\n') return false;
  path.assign(in.substr(colon + 1, n));
  in.remove_prefix(colon + 1 + n + 1);
  return true;
}

// An output's path as journals name it: absolute and normalized, so a journal names the same file
// whichever folder the writer ran in.
std::string journal_name(const std::string& path) { return fs::absolute(path).lexically_normal().string(); }

// The pairs (temporary, target) a sealed journal names; empty with `why` set when it is not one
// mlasim wrote (no marker, a checksum that does not match, a malformed pair).
std::vector<std::pair<std::string, std::string>> parse_journal(const std::string& text, std::string& why) {
  std::string body;
  if (!unseal_checksum(text, body)) {
    why = "its checksum line is missing or does not match its contents";
    return {};
  }
  std::string_view in = body;
  if (in.substr(0, std::strlen(kJournalHeader)) != kJournalHeader) {
    why = "it does not start with the journal marker";
    return {};
  }
  in.remove_prefix(std::strlen(kJournalHeader));
  std::vector<std::pair<std::string, std::string>> pairs;
  while (!in.empty() && in != "end\n") {
    std::string tmp, target;
    if (!decode(in, tmp) || !decode(in, target)) {
      why = "a malformed entry";
      return {};
    }
    pairs.emplace_back(std::move(tmp), std::move(target));
  }
  if (in != "end\n" || pairs.empty()) why = "no end line, or no entries";
  return in == "end\n" ? pairs : decltype(pairs){};
}

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() <= 9 && s.find_first_not_of("0123456789") == std::string::npos;
}

// What a leftover beside `base` is: "tmp.N", "publish.N" or "publish.N.tmp.M", with the PID that
// decides whether it may go (N for a journal, the writer's M or N for a temporary).
enum class Leftover { kNone, kTemporary, kJournal };
Leftover classify(const std::string& suffix, long& pid) {
  auto number_after = [&](const std::string& prefix, const std::string& rest_of) -> std::string {
    return rest_of.rfind(prefix, 0) == 0 ? rest_of.substr(prefix.size()) : std::string();
  };
  if (std::string n = number_after("tmp.", suffix); all_digits(n)) {
    pid = std::stol(n);
    return Leftover::kTemporary;
  }
  std::string rest = number_after("publish.", suffix);
  if (all_digits(rest)) {
    pid = std::stol(rest);
    return Leftover::kJournal;
  }
  if (const std::size_t dot = rest.find(".tmp.");
      dot != std::string::npos && all_digits(rest.substr(0, dot)) && all_digits(rest.substr(dot + 5))) {
    pid = std::stol(rest.substr(dot + 5));
    return Leftover::kTemporary;
  }
  return Leftover::kNone;
}

}  // namespace

bool process_gone(long pid) {
  if (pid <= 0 || pid == static_cast<long>(::getpid())) return false;
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

Status publish_together(const std::vector<AtomicOutputFile*>& files) {
  if (files.size() == 1) return files[0]->publish();
  std::string journal = kJournalHeader;
  for (const AtomicOutputFile* f : files) journal += encode(journal_name(f->temporary())) + encode(journal_name(f->target()));
  journal = seal_with_checksum(journal + "end\n");
  const std::string suffix = ".publish." + std::to_string(::getpid());
  std::vector<std::string> journals;
  auto remove_journals = [&] {
    for (const std::string& j : journals) ::unlink(j.c_str());
  };
  for (const AtomicOutputFile* f : files) {
    journals.push_back(f->target() + suffix);
    if (Status st = write_own_file_atomically(journals.back(), journal); !st) {
      journals.pop_back();
      remove_journals();
      return st;  // nothing renamed; each file's destructor removes its temporary
    }
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (Status st = files[i]->publish(); !st) {
      // Only a rename failed (the temporaries are finished): the journals stay, and name the rest.
      for (std::size_t k = i + 1; k < files.size(); ++k) files[k]->keep_for_journal();
      Error e = st.error();
      e.message += "; " + std::to_string(i) + " of the " + std::to_string(files.size()) +
                   " files were published: the journal " + journals.front() +
                   " names the others, and the next mlasim writing these outputs publishes them";
      return e;
    }
  }
  remove_journals();
  return Status::Ok();
}

namespace {

// Why the journal at `path` (process `pid`), found beside the output `beside`, is not one to act
// on; empty when every file it names is one of `own` (this command's outputs), each temporary is
// its target's `TARGET.tmp.PID`, and `beside` is among them.
std::string journal_problem(const std::vector<std::pair<std::string, std::string>>& pairs, long pid,
                            const std::set<std::string>& own, const std::string& beside) {
  bool names_beside = false;
  for (const auto& [tmp, target] : pairs) {
    if (!own.count(target)) return "it names " + target + ", which is not an output of this command";
    if (tmp != target + ".tmp." + std::to_string(pid)) return "it names " + tmp + ", which is not " + target + "'s temporary";
    names_beside |= target == beside;
  }
  return names_beside ? "" : "it does not name " + beside + ", the output it lies beside";
}

}  // namespace

std::vector<std::string> recover_output_leftovers(const std::vector<std::string>& targets) {
  struct Found {
    std::string path;
    Leftover kind;
    long pid;
    std::string beside;  // the output it lies beside, as journals name it
  };
  std::set<std::string> own;  // this command's outputs, as journals name them
  for (const std::string& t : targets)
    if (Result<std::string> resolved = resolve_output_path(t)) own.insert(journal_name(resolved.value()));
  std::vector<Found> found;
  std::set<std::string> seen;
  for (const std::string& target : own) {
    const fs::path dir = fs::path(target).parent_path();
    const std::string prefix = fs::path(target).filename().string() + ".";
    std::error_code ec;
    for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
      const std::string leaf = it->path().filename().string();
      long pid = 0;
      if (leaf.rfind(prefix, 0) != 0) continue;
      const Leftover kind = classify(leaf.substr(prefix.size()), pid);
      const std::string path = (dir / leaf).string();
      if (kind != Leftover::kNone && process_gone(pid) && seen.insert(path).second)
        found.push_back({path, kind, pid, target});
    }
  }
  std::vector<std::string> notes;
  std::set<std::string> keep;  // temporaries a journal left alone names: that journal's, not litter
  auto leave_alone = [&](const std::string& path, const std::string& why) {
    notes.push_back("left " + path + " alone: " + why);
  };
  // Journals first: a temporary they name is the new set's, not litter.
  for (const Found& f : found) {
    if (f.kind != Leftover::kJournal) continue;
    if (leftover_problem(f.path) == "missing") continue;  // a copy of a journal completed above
    Result<std::string> text = read_own_regular_file(f.path, kMaxJournalBytes);
    if (!text) {
      leave_alone(f.path, "named like a journal but " + text.error().message);
      continue;
    }
    std::string why;
    const auto pairs = parse_journal(text.value(), why);
    if (pairs.empty()) {
      leave_alone(f.path, "not a journal mlasim wrote (" + why + ")");
      continue;
    }
    if (why = journal_problem(pairs, f.pid, own, f.beside); !why.empty()) {
      for (const auto& pair : pairs) keep.insert(pair.first);
      leave_alone(f.path, "a journal of process " + std::to_string(f.pid) + ", but " + why +
                              " (run the command that wrote it again to complete it, or remove it)");
      continue;
    }
    const std::string suffix = ".publish." + std::to_string(f.pid);
    int renamed = 0;
    for (const auto& [tmp, target] : pairs) {
      if (is_own_regular_file(tmp) && ::rename(tmp.c_str(), target.c_str()) == 0) ++renamed;
      else if (std::string problem = leftover_problem(tmp); problem != "missing") leave_alone(tmp, problem);
    }
    for (const auto& pair : pairs)
      if (const std::string j = pair.second + suffix; is_own_regular_file(j)) ::unlink(j.c_str());
    notes.push_back("completed the output set of process " + std::to_string(f.pid) + ", killed while publishing it (" +
                    std::to_string(renamed) + " of " + std::to_string(pairs.size()) +
                    " files renamed into place; journal " + f.path + ")");
  }
  for (const Found& f : found) {
    if (f.kind != Leftover::kTemporary || keep.count(f.path)) continue;
    const std::string problem = leftover_problem(f.path);
    if (problem == "missing") continue;
    if (!problem.empty()) {
      leave_alone(f.path, "named like a temporary of mlasim's but " + problem);
      continue;
    }
    if (::unlink(f.path.c_str()) == 0)
      notes.push_back("removed " + f.path + ", left by process " + std::to_string(f.pid) + ", no longer running");
  }
  return notes;
}

}  // namespace mlasim
