// Reporting of failed invariant checks.
#include "base/check.h"

#include <cstdio>
#include <cstdlib>

namespace mlasim {
namespace {
thread_local bool throw_on_check_failure = false;
}  // namespace

InvariantViolation::InvariantViolation(const char* file_, int line_, const char* condition_, const std::string& message_)
    : std::runtime_error(std::string(file_) + ":" + std::to_string(line_) + ": " + condition_ + ": " + message_),
      file(file_),
      line(line_),
      condition(condition_),
      message(message_) {}

ThrowOnCheckFailure::ThrowOnCheckFailure() : previous_(throw_on_check_failure) { throw_on_check_failure = true; }
ThrowOnCheckFailure::~ThrowOnCheckFailure() { throw_on_check_failure = previous_; }

void check_failed(const char* file, int line, const char* condition, const std::string& message) {
  if (throw_on_check_failure) throw InvariantViolation(file, line, condition, message);
  std::fprintf(stderr, "%s:%d: internal invariant violated: %s\n  %s\n", file, line, condition, message.c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace mlasim
