// Folders created for an output, removed again when it was not published.
#include "base/created_folders.h"

#include "base/atomic_file.h"

namespace mlasim {

CreatedFolders::~CreatedFolders() {
  std::error_code ignored;
  for (const std::filesystem::path& p : created_) std::filesystem::remove(p, ignored);  // fails when not empty
}

Status CreatedFolders::create(const std::string& path) {
  namespace fs = std::filesystem;
  std::vector<fs::path> missing;  // innermost first
  std::error_code ec;
  for (fs::path p = fs::path(path).lexically_normal(); !p.empty() && p != p.root_path(); p = p.parent_path()) {
    if (p.filename().empty()) continue;  // "dir/" normalizes to a trailing empty name
    if (fs::exists(p, ec) || ec) break;
    missing.push_back(p);
  }
  fs::create_directories(path, ec);
  for (const fs::path& p : missing)
    if (fs::is_directory(p)) created_.push_back(p);
  if (!ec) return Status::Ok();
  Error e{path, 0, 0, "", "cannot create the folder: " + ec.message(), output_errno_hint(ec.value())};
  e.output = is_output_errno(ec.value());
  return Status(e);
}

}  // namespace mlasim
