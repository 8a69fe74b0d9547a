// Folders an output creates, removed again (innermost first, each only when empty) unless the
// output was published: a failed write leaves no empty folder behind.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "base/status.h"

namespace mlasim {

class CreatedFolders {
 public:
  CreatedFolders() = default;
  CreatedFolders(const CreatedFolders&) = delete;
  CreatedFolders& operator=(const CreatedFolders&) = delete;
  ~CreatedFolders();
  // Creates `path` and its missing parents. An error names the folder and the cause; one the file
  // system causes (a read-only file system, a full disk) is an output error (exit 3).
  Status create(const std::string& path);
  // The output was published: the folders stay.
  void keep() { created_.clear(); }

 private:
  std::vector<std::filesystem::path> created_;  // innermost first
};

}  // namespace mlasim
