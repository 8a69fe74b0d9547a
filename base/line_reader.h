// Reads a text file line by line through one reusable buffer, so memory stays bounded by the
// longest line however long the file is.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace mlasim {

class LineReader {
 public:
  // The scenario loader's bound: a longer line is an error, not a buffer that grows for ever.
  static constexpr std::size_t kDefaultMaxLineBytes = std::size_t{256} << 20;

  explicit LineReader(std::string path, std::size_t max_line_bytes = kDefaultMaxLineBytes);
  ~LineReader();
  LineReader(const LineReader&) = delete;
  LineReader& operator=(const LineReader&) = delete;

  // Opens the file; the Error names it and says why it cannot be read.
  Status open();
  // Sets `line` to the next line, without its "\n" or "\r\n" (and without a UTF-8 byte order mark
  // on line 1), valid until the next call, and returns true; false at the end of the file or on a
  // read error (then status() says what happened).
  bool next(std::string_view& line);
  // A line longer than max_line_bytes ends the reading: next() returns false and status() names
  // the line.
  // 1-based number of the line next() returned last.
  int line_number() const { return line_number_; }
  const Status& status() const { return status_; }
  const std::string& path() const { return path_; }

 private:
  bool fill();
  bool line_too_long();  // sets status_ for the next line; false

  std::string path_;
  std::size_t max_line_bytes_;
  std::vector<char> buf_;
  std::size_t begin_ = 0;  // first unread byte in buf_
  std::size_t end_ = 0;    // one past the last valid byte in buf_
  int fd_ = -1;
  bool eof_ = false;
  int line_number_ = 0;
  Status status_;
};

}  // namespace mlasim
