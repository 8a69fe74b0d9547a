// Buffered line reading with POSIX read(): memchr for the newline, the buffer grows only for a
// line longer than it.
#include "base/line_reader.h"

#include "base/file_read.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace mlasim {
namespace {

constexpr std::size_t kInitialBytes = std::size_t{1} << 20;

Error read_error(const std::string& path, const std::string& what) {
  Error e;
  e.file = path;
  e.message = what + ": " + std::strerror(errno);
  e.hint = "check the path and that the file is readable";
  return e;
}

}  // namespace

LineReader::LineReader(std::string path, std::size_t max_line_bytes)
    : path_(std::move(path)), max_line_bytes_(max_line_bytes) {}

LineReader::~LineReader() {
  if (fd_ >= 0) ::close(fd_);
}

Status LineReader::open() {
  // A FIFO or a device is refused before it is opened; a FIFO put there since does not block.
  if (Status regular = check_regular_input(path_, "the trace"); !regular) return status_ = regular.error();
  fd_ = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) return status_ = read_error(path_, "cannot read the trace");
  buf_.resize(kInitialBytes);
  return status_;
}

// Moves the unread bytes to the front, grows the buffer when they fill it, reads more.
bool LineReader::fill() {
  if (begin_ > 0) {
    std::memmove(buf_.data(), buf_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  // Grows up to one byte past the longest line read, so next() can tell a line too long.
  if (end_ == buf_.size()) buf_.resize(std::min(buf_.size() * 2, std::max(buf_.size() + 1, max_line_bytes_ + 2)));
  for (;;) {
    ssize_t n = ::read(fd_, buf_.data() + end_, buf_.size() - end_);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      status_ = read_error(path_, "cannot read the trace");
      return false;
    }
    if (n == 0) eof_ = true;
    end_ += static_cast<std::size_t>(n);
    return true;
  }
}

bool LineReader::line_too_long() {
  Error e;
  e.file = path_;
  e.line = line_number_ + 1;
  e.message = "line " + std::to_string(line_number_ + 1) + " is longer than mlasim reads (" +
              format_bytes(static_cast<double>(max_line_bytes_)) + ")";
  e.hint = "is this the file you meant? a trace holds one request per line";
  status_ = e;
  return false;
}

bool LineReader::next(std::string_view& line) {
  if (fd_ < 0 || !status_.ok()) return false;
  std::size_t scanned = begin_;
  for (;;) {
    const void* nl = std::memchr(buf_.data() + scanned, '\n', end_ - scanned);
    if (nl) {
      const std::size_t at = static_cast<std::size_t>(static_cast<const char*>(nl) - buf_.data());
      line = std::string_view(buf_.data() + begin_, at - begin_);
      begin_ = at + 1;
      break;
    }
    if (end_ - begin_ > max_line_bytes_) return line_too_long();
    if (eof_) {
      if (begin_ == end_) return false;
      line = std::string_view(buf_.data() + begin_, end_ - begin_);  // a last line without "\n"
      begin_ = end_;
      break;
    }
    const std::size_t unread_scanned = end_ - begin_;  // bytes already searched, kept by fill()
    if (!fill()) return false;
    scanned = begin_ + unread_scanned;
  }
  if (line.size() > max_line_bytes_) return line_too_long();
  ++line_number_;
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (line_number_ == 1 && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);
  return true;
}

}  // namespace mlasim
