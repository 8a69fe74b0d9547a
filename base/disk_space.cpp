// Free space on the output's file system (statvfs).
#include "base/disk_space.h"

#include <sys/statvfs.h>

#include <cerrno>
#include <filesystem>

#include "base/atomic_file.h"
#include "base/file_read.h"

namespace mlasim {

Status disk_space_check(const std::string& path, std::uint64_t bytes, const std::string& what) {
  namespace fs = std::filesystem;
  fs::path p = fs::absolute(path);
  std::error_code ec;
  while (!fs::exists(p, ec) && p.has_parent_path() && p != p.parent_path()) p = p.parent_path();
  struct statvfs st {};
  if (::statvfs(p.c_str(), &st) != 0) return Status::Ok();
  if (st.f_flag & ST_RDONLY) {
    Error e;
    e.file = path;
    e.message = what + " cannot be written: " + p.string() + " is on a read-only file system";
    e.hint = output_errno_hint(EROFS);
    e.output = true;
    return e;
  }
  const std::uint64_t free_bytes = static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize;
  if (free_bytes >= bytes) return Status::Ok();
  Error e;
  e.file = path;
  e.message = what + " needs " + format_bytes(static_cast<double>(bytes)) + " and the file system holding " +
              p.string() + " has " + format_bytes(static_cast<double>(free_bytes)) + " free";
  e.hint = output_errno_hint(ENOSPC);
  e.output = true;
  return e;
}

}  // namespace mlasim
