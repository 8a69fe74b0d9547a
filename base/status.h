// Input errors as values: where it happened (file, line, column, key path), what, and a hint.
// Only the CLI turns an Error into an exit code.
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace mlasim {

struct Error {
  std::string file;      // path as the user gave it, or "<--set ...>" for a command-line override
  int line = 0;          // 1-based; 0 when unknown
  int column = 0;        // 1-based; 0 when unknown
  std::string key_path;  // e.g. "scheduler.max_num_seqs" or "requests[2].prompt[0]"; may be empty
  std::string message;
  std::string hint;      // what to do about it; may be empty
  // An output could not be written (disk full, I/O error, a read-only file system): not bad
  // input; the CLI exits 3 for it.
  bool output = false;

  // "file:line:col: error: key: message" (the first line of format()).
  std::string headline() const;
  // headline() plus "\n  hint: ..." when there is a hint.
  std::string format() const;
};

// Holds either a value or an Error. Deliberately small: value(), error(), ok().
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}       // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}   // NOLINT(google-explicit-constructor)
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// A Result with no value.
class Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT(google-explicit-constructor)
  static Status Ok() { return Status(); }
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const { return error_; }

 private:
  Error error_;
  bool ok_ = true;
};

}  // namespace mlasim
