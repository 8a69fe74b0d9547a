// The files mlasim leaves beside its outputs (journals, temporaries, staging folders) and finds
// again after a kill. Anything found on disk is untrusted: a journal may be forged, a temporary
// may be a symbolic link or a FIFO, a staging folder may belong to another user. These helpers
// act only on what mlasim itself could have left: regular files and real folders (never followed
// through a link) owned by this process's user, and journals that carry mlasim's marker line and a
// checksum of their contents.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "base/status.h"

namespace mlasim {

// True when `path` itself (not a link's target) is a regular file / a folder owned by this
// process's effective user.
bool is_own_regular_file(const std::string& path);
bool is_own_directory(const std::string& path);

// Why `path` is not something mlasim may act on, for a note ("a symbolic link", "a FIFO",
// "owned by another user", "missing"); empty when it is an own regular file (or, with
// `directory`, an own folder).
std::string leftover_problem(const std::string& path, bool directory = false);

// The contents of an own regular file, opened without following a link and without blocking (a
// FIFO put there after the check answers at once), at most `max_bytes`. An error names why not.
Result<std::string> read_own_regular_file(const std::string& path, std::size_t max_bytes);

// `body` followed by "checksum <16 hex digits>\n", the stable hash of `body`.
std::string seal_with_checksum(std::string body);
// The body of a sealed text; false when the last line is not the checksum of what precedes it.
bool unseal_checksum(std::string_view text, std::string& body);

}  // namespace mlasim
