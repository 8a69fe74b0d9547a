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

namespace mlasim {
namespace {

namespace fs = std::filesystem;

constexpr const char* kJournalHeader = "mlasim-publish-journal 1\n";

// A path as "<length>:<bytes>\n", so any byte may appear in it.
std::string encode(const std::string& path) { return std::to_string(path.size()) + ":" + path + "\n"; }

bool decode(std::istream& in, std::string& path) {
  std::size_t n = 0;
  char colon = 0;
  if (!(in >> n) || !in.get(colon) || colon != ':' || n > 65536) return false;
  path.assign(n, '\0');
  if (!in.read(path.data(), static_cast<std::streamsize>(n))) return false;
  return in.get() == '\n';
}

// The pairs a journal names: temporary, target. Empty when it is not a whole journal.
std::vector<std::pair<std::string, std::string>> read_journal(const fs::path& journal) {
  std::ifstream in(journal, std::ios::binary);
  std::string header;
  if (!std::getline(in, header) || header + "\n" != kJournalHeader) return {};
  std::vector<std::pair<std::string, std::string>> pairs;
  while (in.peek() != 'e') {
    std::string tmp, target;
    if (!decode(in, tmp) || !decode(in, target)) return {};
    pairs.emplace_back(std::move(tmp), std::move(target));
  }
  std::string end;
  if (!std::getline(in, end) || end != "end") return {};
  return pairs;
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
  for (const AtomicOutputFile* f : files) journal += encode(f->temporary()) + encode(f->target());
  journal += "end\n";
  const std::string suffix = ".publish." + std::to_string(::getpid());
  std::vector<std::string> journals;
  auto remove_journals = [&] {
    for (const std::string& j : journals) ::unlink(j.c_str());
  };
  for (const AtomicOutputFile* f : files) {
    journals.push_back(f->target() + suffix);
    if (Status st = write_file_atomically(journals.back(), journal); !st) {
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

std::vector<std::string> recover_output_leftovers(const std::vector<std::string>& targets) {
  struct Found {
    fs::path path;
    Leftover kind;
    long pid;
  };
  std::vector<Found> found;
  std::set<fs::path> seen;
  for (const std::string& t : targets) {
    Result<std::string> resolved = resolve_output_path(t);
    if (!resolved) continue;
    const fs::path target = resolved.value();
    const fs::path dir = target.parent_path().empty() ? fs::path(".") : target.parent_path();
    const std::string prefix = target.filename().string() + ".";
    std::error_code ec;
    for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
      const std::string leaf = it->path().filename().string();
      long pid = 0;
      if (leaf.rfind(prefix, 0) != 0) continue;
      const Leftover kind = classify(leaf.substr(prefix.size()), pid);
      if (kind != Leftover::kNone && process_gone(pid) && seen.insert(it->path()).second)
        found.push_back({it->path(), kind, pid});
    }
  }
  std::vector<std::string> notes;
  // Journals first: a temporary they name is the new set's, not litter.
  for (const Found& f : found) {
    if (f.kind != Leftover::kJournal) continue;
    std::error_code ec;
    if (!fs::exists(f.path, ec)) continue;  // a copy of a journal completed above
    const auto pairs = read_journal(f.path);
    const std::string suffix = ".publish." + std::to_string(f.pid);
    int renamed = 0;
    for (const auto& [tmp, target] : pairs)
      if (fs::exists(tmp, ec) && ::rename(tmp.c_str(), target.c_str()) == 0) ++renamed;
    for (const auto& [tmp, target] : pairs) ::unlink((target + suffix).c_str());
    ::unlink(f.path.c_str());
    notes.push_back("completed the output set of process " + std::to_string(f.pid) + ", killed while publishing it (" +
                    std::to_string(renamed) + " of " + std::to_string(pairs.size()) +
                    " files renamed into place; journal " + f.path.string() + ")");
  }
  for (const Found& f : found) {
    std::error_code ec;
    if (f.kind == Leftover::kTemporary && fs::remove(f.path, ec))
      notes.push_back("removed " + f.path.string() + ", left by process " + std::to_string(f.pid) +
                      ", no longer running");
  }
  return notes;
}

}  // namespace mlasim
