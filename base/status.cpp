// Formatting of input errors.
#include "base/status.h"

namespace mlasim {

std::string Error::headline() const {
  std::string out = file.empty() ? std::string("<input>") : file;
  if (line > 0) {
    out += ":" + std::to_string(line);
    if (column > 0) out += ":" + std::to_string(column);
  }
  out += ": error: ";
  if (!key_path.empty()) out += key_path + ": ";
  out += message;
  return out;
}

std::string Error::format() const {
  std::string out = headline();
  if (!hint.empty()) out += "\n  hint: " + hint;
  return out;
}

}  // namespace mlasim
