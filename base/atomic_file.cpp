// Atomic file output (write to a temporary beside the target, fsync, rename).
#include "base/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <cstring>
#include <utility>

#include "base/leftover_file.h"

namespace mlasim {
namespace {

Error io_error(const std::string& path, const std::string& what) {
  const int err = errno;
  Error e;
  e.file = path;
  e.message = what + ": " + (err != 0 ? std::strerror(err) : "an I/O error the system did not name");
  // Creating the temporary is refused for the path (no such directory, no permission): the
  // user's to fix. Anything after that is the file system's: a full disk, an I/O error.
  e.output = what.rfind("cannot create", 0) != 0 || is_output_errno(err);
  e.hint = output_errno_hint(err);
  return e;
}

bool write_all(int fd, const char* p, std::size_t left) {
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

bool is_output_errno(int err) {
  return err == ENOSPC || err == EDQUOT || err == EFBIG || err == EIO || err == EROFS;
}

std::string output_errno_hint(int err) {
  switch (err) {
    case ENOSPC:
    case EDQUOT:
      return "the disk (or your quota) is full: free space on the file system, or write elsewhere";
    case EFBIG:
      return "the file would exceed this process's file-size limit (ulimit -f) or the file system's largest "
             "file: raise the limit, or write elsewhere";
    case EIO:
      return "the device reported an I/O error: check the disk, or write elsewhere";
    case EROFS:
      return "the file system is read-only: write elsewhere";
    default:
      return "check that the directory exists and is writable";
  }
}

Result<std::string> resolve_output_path(const std::string& path) {
  namespace fs = std::filesystem;
  fs::path p = path;
  for (int hops = 0; hops < 40; ++hops) {
    // /dev/stdout, /dev/fd/N, /proc/self/fd/N name a stream, whatever file is behind it.
    const std::string abs = fs::absolute(p).lexically_normal().string();
    if (abs.rfind("/dev/", 0) == 0 || abs.rfind("/proc/", 0) == 0) {
      Error e;
      e.file = path;
      e.message = "is a device or a stream (" + abs +
                  "), not a file: outputs are written beside their target and renamed into place";
      e.hint = "give a file path; to see a report on the terminal, write it to a file and print that";
      return e;
    }
    std::error_code ec;
    const fs::file_status st = fs::symlink_status(p, ec);
    if (ec || st.type() == fs::file_type::not_found) return p.string();
    if (st.type() == fs::file_type::regular) return p.string();
    if (st.type() != fs::file_type::symlink) {
      Error e;
      e.file = path;
      e.message = (p.string() == path ? std::string("is not a regular file") : "points to " + p.string() + ", not a regular file") +
                  " (a directory, a device or a pipe): outputs are written beside their target and renamed into place";
      e.hint = "give a file path; to see a report on the terminal, write it to a file and print that";
      return e;
    }
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) break;
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  Error e;
  e.file = path;
  e.message = "a chain of symbolic links that does not end";
  return e;
}

AtomicOutputFile::~AtomicOutputFile() {
  if (fd_ >= 0) ::close(fd_);
  if (fd_ >= 0 || finished_) ::unlink(tmp_.c_str());
}

Status AtomicOutputFile::open(const std::string& path) {
  Result<std::string> resolved = resolve_output_path(path);
  if (!resolved) return resolved.error();
  path_ = resolved.value();
  tmp_ = path_ + ".tmp." + std::to_string(::getpid());  // beside the file it replaces: one file system
  Result<int> fd = create_temporary_file(tmp_, O_RDWR, path);
  if (!fd) return fd.error();
  fd_ = fd.value();
  return Status::Ok();
}

void AtomicOutputFile::flush_buffer() {
  if (write_errno_ == 0 && !write_all(fd_, buffer_.data(), buffer_.size())) write_errno_ = errno;
  buffer_.clear();
}

void AtomicOutputFile::write(std::string_view text) {
  // Pieces of 64 KiB and more (a step of a wide batch) go to the file directly, not copied
  // through the buffer: one write call each is cheap beside the copy.
  if (text.size() >= (1u << 16)) {
    flush_buffer();
    if (write_errno_ == 0 && !write_all(fd_, text.data(), text.size())) write_errno_ = errno;
    return;
  }
  buffer_ += text;
  if (buffer_.size() >= (1u << 20)) flush_buffer();
}

void AtomicOutputFile::overwrite(std::uint64_t offset, std::string_view bytes) {
  flush_buffer();
  while (write_errno_ == 0 && !bytes.empty()) {
    const ssize_t n = ::pwrite(fd_, bytes.data(), bytes.size(), static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) write_errno_ = errno;
    if (n < 0) break;
    bytes.remove_prefix(static_cast<std::size_t>(n));
    offset += static_cast<std::uint64_t>(n);
  }
}

Status AtomicOutputFile::read_back(const std::function<void(std::string_view)>& f) {
  flush_buffer();
  std::string chunk(std::size_t{1} << 20, '\0');
  for (off_t offset = 0;;) {
    const ssize_t n = ::pread(fd_, chunk.data(), chunk.size(), offset);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_error(path_, "cannot read back " + tmp_);
    if (n == 0) return Status::Ok();
    f(std::string_view(chunk.data(), static_cast<std::size_t>(n)));
    offset += n;
  }
}

Status AtomicOutputFile::commit() {
  if (Status st = finish(); !st) return st;
  return publish();
}

Status AtomicOutputFile::finish() {
  flush_buffer();
  const int fd = std::exchange(fd_, -1);
  if (write_errno_ != 0) {
    errno = write_errno_;
    Error e = io_error(path_, "write failed");
    ::close(fd);
    ::unlink(tmp_.c_str());
    return e;
  }
  const bool synced = ::fsync(fd) == 0;
  const int sync_errno = errno;
  const bool closed = ::close(fd) == 0;
  if (!synced || !closed) {
    if (!synced) errno = sync_errno;
    Error e = io_error(path_, "flush failed");
    ::unlink(tmp_.c_str());
    return e;
  }
  finished_ = true;
  return Status::Ok();
}

Status AtomicOutputFile::publish() {
  if (!std::exchange(finished_, false)) {
    Error e;
    e.file = path_;
    e.message = "internal: publish() of a file that is not finished";
    return e;
  }
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
    Error e = io_error(path_, "cannot rename " + tmp_ + " over the target");
    ::unlink(tmp_.c_str());
    return e;
  }
  return Status::Ok();
}

// Writes `path` itself (whatever entry is there is replaced by the rename, never written through).
Status write_own_file_atomically(const std::string& path, const std::string& contents) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  Result<int> created = create_temporary_file(tmp, O_WRONLY, path);
  if (!created) return created.error();
  const int fd = created.value();
  const char* p = contents.data();
  std::size_t left = contents.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      Error e = io_error(path, "write failed");
      ::close(fd);
      ::unlink(tmp.c_str());
      return e;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  const int sync_errno = errno;
  const bool closed = ::close(fd) == 0;  // always closed, also when fsync failed
  if (!synced || !closed) {
    if (!synced) errno = sync_errno;
    Error e = io_error(path, "flush failed");
    ::unlink(tmp.c_str());
    return e;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    Error e = io_error(path, "cannot rename " + tmp + " over the target");
    ::unlink(tmp.c_str());
    return e;
  }
  return Status::Ok();
}

Result<int> create_temporary_file(const std::string& tmp, int flags, const std::string& target) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    const int fd = ::open(tmp.c_str(), flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0) return fd;
    if (errno != EEXIST) return io_error(target, "cannot create temporary file " + tmp);
    if (const std::string problem = leftover_problem(tmp); !problem.empty()) {
      Error e;
      e.file = target;
      e.message = "cannot create temporary file " + tmp + ": a file mlasim did not create is at that name (" +
                  problem + "); mlasim leaves it alone";
      e.hint = "remove it, or write the output elsewhere";
      return e;
    }
    ::unlink(tmp.c_str());  // this user's regular file, left by a killed process with this PID
  }
  errno = EEXIST;
  return io_error(target, "cannot create temporary file " + tmp);
}

Status write_file_atomically(const std::string& requested, const std::string& contents) {
  Result<std::string> resolved = resolve_output_path(requested);
  if (!resolved) return resolved.error();
  return write_own_file_atomically(resolved.value(), contents);
}

}  // namespace mlasim
