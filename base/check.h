// Always-on invariant checks. A failed check is a bug in mlasim, not bad input: it prints
// file:line, the condition and a message, then aborts (in every build type).
#pragma once

#include <stdexcept>
#include <string>

namespace mlasim {

[[noreturn]] void check_failed(const char* file, int line, const char* condition, const std::string& message);

// A failed check reported as an exception (see ThrowOnCheckFailure).
struct InvariantViolation : std::runtime_error {
  InvariantViolation(const char* file_, int line_, const char* condition_, const std::string& message_);
  std::string file;  // the source file of the check, as __FILE__ gave it
  int line = 0;
  std::string condition;
  std::string message;
};

// While one is alive on a thread, a failed check on that thread throws InvariantViolation
// instead of aborting: for callers that replay generated traces and report the failure as a
// finding (mlasim fuzz). The state the check guarded is then abandoned, never reused.
class ThrowOnCheckFailure {
 public:
  ThrowOnCheckFailure();
  ~ThrowOnCheckFailure();
  ThrowOnCheckFailure(const ThrowOnCheckFailure&) = delete;
  ThrowOnCheckFailure& operator=(const ThrowOnCheckFailure&) = delete;

 private:
  bool previous_;
};

}  // namespace mlasim

#define MLASIM_CHECK(cond, msg)                                            \
  do {                                                                     \
    if (!(cond)) ::mlasim::check_failed(__FILE__, __LINE__, #cond, (msg)); \
  } while (0)
