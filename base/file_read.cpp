// Bounded file and line reading.
#include "base/file_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>

namespace mlasim {

std::string format_bytes(double bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int u = 0;
  while (bytes >= 1024 && u < 6) bytes /= 1024, ++u;
  char buf[32];
  if (u == 0 || bytes == static_cast<double>(static_cast<long long>(bytes)))
    std::snprintf(buf, sizeof buf, "%.0f %s", bytes, units[u]);
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", bytes, units[u]);
  return buf;
}

std::string unopenable_path_hint(const std::string& path) {
  std::error_code ec;
  (void)std::filesystem::status(path, ec);
  if (ec == std::errc::too_many_symbolic_link_levels)
    return "a symbolic link loop (ELOOP): the links lead back to themselves; check them with `ls -l`";
  if (std::filesystem::exists(path, ec)) return "check its permissions";
  if (std::filesystem::is_symlink(std::filesystem::symlink_status(path, ec)))
    return "a broken symbolic link: its target does not exist";
  return "no such file; check the path";
}

std::string excerpt(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  return std::string(text.substr(0, max_bytes)) + "... (" + format_bytes(static_cast<double>(text.size())) + ")";
}

Status check_regular_input(const std::string& path, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return Status::Ok();
  Error e;
  e.file = path;
  if (S_ISDIR(st.st_mode)) {
    e.message = "is a directory, not " + what;
    e.hint = "give a file";
    return e;
  }
  const char* kind = S_ISFIFO(st.st_mode)   ? "a FIFO"
                     : S_ISSOCK(st.st_mode) ? "a socket"
                     : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                                                                  : "not a regular file";
  e.message = what + " is " + kind + ", not a regular file: mlasim reads only regular files (a FIFO waits for a "
              "writer, a device or a stream may never end)";
  e.hint = "write it to a file first (e.g. `cat > file`) and name that file";
  return e;
}

Result<int> open_regular_input(const std::string& path, const std::string& what) {
  if (Status st = check_regular_input(path, what); !st) return st.error();
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  Error e;
  e.file = path;
  if (fd < 0) {
    e.message = "cannot read " + what;
    e.hint = unopenable_path_hint(path);
    return e;
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) return fd;
  ::close(fd);
  if (Status st2 = check_regular_input(path, what); !st2) return st2.error();
  e.message = what + " changed while it was opened: it is not a regular file";
  return e;
}

Result<std::string> read_file_bounded(const std::string& path, std::size_t max_bytes, const std::string& what) {
  Result<int> fd = open_regular_input(path, what);
  if (!fd) return fd.error();
  auto fail = [&](const std::string& message, const std::string& hint) -> Result<std::string> {
    ::close(fd.value());
    Error e;
    e.file = path;
    e.message = message;
    e.hint = hint;
    return e;
  };
  std::string text;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd.value(), buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail("reading " + what + " failed", "");
    if (n == 0) break;
    if (text.size() + static_cast<std::size_t>(n) > max_bytes)
      return fail(what + " is larger than mlasim reads (" + format_bytes(static_cast<double>(max_bytes)) + ")",
                  "is this the file you meant?");
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd.value());
  return text;
}

bool getline_bounded(std::istream& in, std::string& line, std::size_t max_bytes, bool& too_long) {
  line.clear();
  too_long = false;
  char chunk[1 << 16];
  for (;;) {
    in.getline(chunk, sizeof chunk);  // stops at '\n' (consumed), the chunk's end or the input's
    const auto n = static_cast<std::size_t>(in.gcount());
    const bool newline = !in.fail() && !in.eof();  // a whole line ended by '\n'
    const bool chunk_full = in.fail() && !in.eof() && !in.bad();
    const std::size_t chars = newline ? n - 1 : n;  // gcount counts the consumed '\n'
    if (line.size() + chars > max_bytes) {
      too_long = true;
      return false;
    }
    line.append(chunk, chars);
    if (newline) return true;
    if (chunk_full) {
      in.clear();
      continue;
    }
    return !line.empty() || chars > 0;  // end of input: a last line without '\n'
  }
}

}  // namespace mlasim
