// Writing output files atomically: write beside the target, fsync, then rename over it, so a
// reader (or a crash) never sees a partial report or golden and the old file survives a failure.
#pragma once

#include <string>

#include "sim/status.h"

namespace mlasim {

// Writes `contents` to `path` atomically. Creates no directories.
Status write_file_atomically(const std::string& path, const std::string& contents);

}  // namespace mlasim
