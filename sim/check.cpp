// Reporting of failed invariant checks.
#include "sim/check.h"

#include <cstdio>
#include <cstdlib>

namespace mlasim {

void check_failed(const char* file, int line, const char* condition, const std::string& message) {
  std::fprintf(stderr, "%s:%d: internal invariant violated: %s\n  %s\n", file, line, condition, message.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace mlasim
