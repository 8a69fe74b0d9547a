// Shared by the tests that look at files: a file's bytes, a folder's entries sorted by name, and a
// fresh empty folder of this process.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace mlasim::test {

inline std::string read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

inline std::vector<std::string> entries(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// Everything under `dir`, links never followed: one line per entry (relative path, kind, owner, and
// a file's bytes or a link's target), sorted. Two snapshots are equal when nothing under `dir`
// was created, removed, renamed, written or re-owned.
inline std::string snapshot(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::vector<std::string> lines;
  for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
    const fs::path& p = it->path();
    std::string line = fs::relative(p, dir).string();
    const fs::file_status st = fs::symlink_status(p);
    struct stat raw {};
    ::lstat(p.c_str(), &raw);
    line += " uid=" + std::to_string(raw.st_uid);
    if (fs::is_symlink(st)) line += " link->" + fs::read_symlink(p).string();
    else if (fs::is_directory(st)) line += " dir";
    else if (fs::is_regular_file(st)) line += " file:" + read_all(p);
    else line += " other";
    lines.push_back(line);
  }
  std::sort(lines.begin(), lines.end());
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

// An empty folder under the temporary directory, named for the test and this process.
inline std::filesystem::path fresh_dir(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace mlasim::test
