// Always-on invariant checks. A failed check is a bug in mlasim, not bad input: it prints
// file:line, the condition and a message, then aborts (in every build type).
#pragma once

#include <string>

namespace mlasim {

[[noreturn]] void check_failed(const char* file, int line, const char* condition, const std::string& message);

}  // namespace mlasim

#define MLASIM_CHECK(cond, msg)                                            \
  do {                                                                     \
    if (!(cond)) ::mlasim::check_failed(__FILE__, __LINE__, #cond, (msg)); \
  } while (0)
