// Writing output files atomically: write beside the target, fsync, then rename over it, so a
// reader (or a crash) never sees a partial report or golden and the old file survives a failure.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace mlasim {

// An errno from creating or writing an output that is the file system's doing, not the path the
// user gave: a full disk or quota, the file-size limit (EFBIG: ulimit -f), an I/O error, a
// read-only file system. The CLI exits 3 for these.
bool is_output_errno(int err);
// What to do about such an error (or any other write error), for the message's hint.
std::string output_errno_hint(int err);

// The file an output named `path` lands in: `path` itself, or for a symbolic link its final target
// (the link stays, the file it points to is replaced). An error when that is not a regular file or
// nothing yet (a directory, a device such as /dev/stdout, a pipe): outputs are published by
// renaming a finished file into place, which such a target cannot take.
Result<std::string> resolve_output_path(const std::string& path);

// Writes `contents` to `path` atomically. Creates no directories.
Status write_file_atomically(const std::string& path, const std::string& contents);

// Creates `tmp` for writing (O_CREAT | O_EXCL, never through a link). A regular file of this user
// already at that name (a process with this PID killed long ago) is replaced; anything else there
// (a link, a FIFO, a folder, another user's file) is an error naming it, left as it is. Returns the
// descriptor.
Result<int> create_temporary_file(const std::string& tmp, int flags, const std::string& target);

// Writes `contents` to `path` through a temporary `path.tmp.PID`, replacing the entry at `path`
// itself (a link there is replaced, never written through): for mlasim's own journals and
// markers, whose names are mlasim's, not the user's.
Status write_own_file_atomically(const std::string& path, const std::string& contents);

// A file written in pieces and published atomically: the text goes to a temporary beside the
// target; commit() syncs it and renames it over the target. Destroyed without commit (an error,
// an exception), it removes the temporary and leaves the target as it was. commit() is finish()
// (write, fsync, close) then publish() (rename), so several files can all be finished before any
// is published.
class AtomicOutputFile {
 public:
  AtomicOutputFile() = default;
  ~AtomicOutputFile();
  AtomicOutputFile(const AtomicOutputFile&) = delete;
  AtomicOutputFile& operator=(const AtomicOutputFile&) = delete;

  Status open(const std::string& path);
  bool is_open() const { return fd_ >= 0; }
  // Appends; a write error is kept and reported by commit() or finish().
  void write(std::string_view text);
  // Replaces bytes already written at `offset` (a header whose numbers are known only at the end);
  // an error is kept as write()'s is.
  void overwrite(std::uint64_t offset, std::string_view bytes);
  // Calls `f` with everything written so far, from the start, in pieces (to hash the file).
  Status read_back(const std::function<void(std::string_view)>& f);
  Status commit();
  Status finish();
  Status publish();
  // The file it replaces (a symbolic link's final target) and the temporary beside it.
  const std::string& target() const { return path_; }
  const std::string& temporary() const { return tmp_; }
  // A finished file a publish journal names (publish_together): the destructor leaves its
  // temporary for the journal's recovery.
  void keep_for_journal() { finished_ = false; }

 private:
  void flush_buffer();
  std::string path_, tmp_;
  int fd_ = -1;
  int write_errno_ = 0;
  bool finished_ = false;  // synced and closed; the temporary waits for publish()
  std::string buffer_;
};

}  // namespace mlasim
