// Free space on the file system an output goes to, checked before long work writes it.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace mlasim {

// An output error (exit 3) naming `path` when the file system that holds it (or, while it does
// not exist yet, its nearest existing parent) is read-only or has fewer than `bytes` bytes free
// for this user.
// Ok when the free space cannot be read (the write itself then reports what happens).
Status disk_space_check(const std::string& path, std::uint64_t bytes, const std::string& what);

}  // namespace mlasim
