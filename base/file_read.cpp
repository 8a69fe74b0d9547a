// Bounded file and line reading.
#include "base/file_read.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

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

Result<std::string> read_file_bounded(const std::string& path, std::size_t max_bytes, const std::string& what) {
  auto fail = [&](const std::string& message, const std::string& hint) -> Result<std::string> {
    Error e;
    e.file = path;
    e.message = message;
    e.hint = hint;
    return e;
  };
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return fail("is a directory, not " + what, "give a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail("cannot read " + what, unopenable_path_hint(path));
  std::string text;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    const auto n = static_cast<std::size_t>(in.gcount());
    if (text.size() + n > max_bytes)
      return fail(what + " is larger than mlasim reads (" + format_bytes(static_cast<double>(max_bytes)) + ")",
                  "is this the file you meant? (a device or a stream does not end)");
    text.append(buf, n);
  }
  if (in.bad()) return fail("reading " + what + " failed", "");
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
