// Acting only on what mlasim could have left beside its outputs.
#include "base/leftover_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/hash.h"

namespace mlasim {
namespace {

constexpr const char* kChecksumTag = "checksum ";

std::string checksum_line(std::string_view body) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(stable_hash(body)));
  return std::string(kChecksumTag) + hex + "\n";
}

Error leftover_error(const std::string& path, const std::string& message) {
  Error e;
  e.file = path;
  e.message = message;
  return e;
}

}  // namespace

std::string leftover_problem(const std::string& path, bool directory) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return errno == ENOENT ? "missing" : std::strerror(errno);
  if (S_ISLNK(st.st_mode)) return "a symbolic link";
  if (S_ISFIFO(st.st_mode)) return "a FIFO";
  if (S_ISSOCK(st.st_mode)) return "a socket";
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) return "a device";
  if (directory && !S_ISDIR(st.st_mode)) return "not a folder";
  if (!directory && !S_ISREG(st.st_mode)) return S_ISDIR(st.st_mode) ? "a folder" : "not a regular file";
  if (st.st_uid != ::geteuid()) return "owned by another user (uid " + std::to_string(st.st_uid) + ")";
  // A file mlasim wrote has one name; a hard link to another file is not a leftover of mlasim's.
  if (!directory && st.st_nlink != 1) return "a file with " + std::to_string(st.st_nlink) + " hard links";
  return "";
}

bool is_own_regular_file(const std::string& path) { return leftover_problem(path, false).empty(); }
bool is_own_directory(const std::string& path) { return leftover_problem(path, true).empty(); }

Result<std::string> read_own_regular_file(const std::string& path, std::size_t max_bytes) {
  if (std::string problem = leftover_problem(path); !problem.empty()) return leftover_error(path, problem);
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return leftover_error(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() ||
      static_cast<std::size_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return leftover_error(path, "not a regular file of this user within " + std::to_string(max_bytes) + " bytes");
  }
  std::string text;
  char buf[1 << 14];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 || text.size() + static_cast<std::size_t>(n) > max_bytes) {
      ::close(fd);
      return leftover_error(path, n < 0 ? std::string("cannot read: ") + std::strerror(errno) : "grew while read");
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return text;
}

std::string seal_with_checksum(std::string body) {
  body += checksum_line(body);
  return body;
}

bool unseal_checksum(std::string_view text, std::string& body) {
  if (text.empty() || text.back() != '\n') return false;
  const std::size_t start = text.rfind('\n', text.size() - 2);
  const std::size_t line_at = start == std::string_view::npos ? 0 : start + 1;
  const std::string_view candidate = text.substr(0, line_at);
  if (text.substr(line_at) != checksum_line(candidate)) return false;
  body.assign(candidate);
  return true;
}

}  // namespace mlasim
