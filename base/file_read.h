// Reading user files within bounds, so a huge or endless input (`mlasim run /dev/zero`, a
// requests file without newlines) is an error naming the file and the limit, not an exhausted
// memory: a whole file up to a size, and a line up to a length.
#pragma once

#include <cstddef>
#include <istream>
#include <string>
#include <string_view>

#include "base/status.h"

namespace mlasim {

constexpr std::size_t kMaxScenarioFileBytes = std::size_t{64} << 20;    // YAML; big traces go in requests_file
constexpr std::size_t kMaxRequestLineBytes = std::size_t{256} << 20;    // one JSONL request (a 2^24-token prompt fits)
constexpr std::size_t kMaxGoldenTextBytes = std::size_t{256} << 20;     // split.txt, logits_index.json, meta.yaml

// Why `path` cannot be opened, as a hint: a symbolic link loop (ELOOP), a link whose target is
// missing, no such file, or (it exists) its permissions.
std::string unopenable_path_hint(const std::string& path);

// An error naming `path` when it is something other than a regular file (after links): a FIFO
// (opening one waits for a writer), a socket or a device (/dev/zero never ends), a folder. mlasim
// reads only regular files; this runs before any of them is opened. Ok when `path` is missing (the
// open reports that).
Status check_regular_input(const std::string& path, const std::string& what);

// `path` opened for reading after check_regular_input, without blocking on a FIFO put there since:
// the descriptor, or an error naming the file.
Result<int> open_regular_input(const std::string& path, const std::string& what);

// The whole file, or an error naming `path` (unreadable, a directory, or longer than max_bytes).
Result<std::string> read_file_bounded(const std::string& path, std::size_t max_bytes, const std::string& what);

// std::getline that stops at max_bytes: false at the end of input; `too_long` set (and false
// returned) when a line exceeds the bound.
bool getline_bounded(std::istream& in, std::string& line, std::size_t max_bytes, bool& too_long);

// "64 MiB", "256 MiB", "1.5 GiB": a byte count for messages.
std::string format_bytes(double bytes);

// `text` for an error message: whole when at most `max_bytes`, else its start, "...", and its size.
std::string excerpt(std::string_view text, std::size_t max_bytes = 80);

}  // namespace mlasim
