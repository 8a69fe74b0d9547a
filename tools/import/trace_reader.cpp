// Helpers shared by the trace readers.
#include "tools/import/trace_reader.h"

namespace mlasim {

Error trace_error(const std::string& file, int line, int column, std::string key, std::string message,
                  std::string hint) {
  Error e;
  e.file = file;
  e.line = line;
  e.column = column;
  e.key_path = std::move(key);
  e.message = std::move(message);
  e.hint = std::move(hint);
  return e;
}

bool is_blank(std::string_view line) { return line.find_first_not_of(" \t") == std::string_view::npos; }

}  // namespace mlasim
