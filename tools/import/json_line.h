// A strict scanner for one line of JSON (RFC 8259), for JSON-lines traces: the caller walks an
// object key by key; any syntax error throws JsonLineError with the 0-based offset in the line.
#pragma once

#include <string>
#include <string_view>

namespace mlasim {

struct JsonLineError {
  std::size_t offset = 0;
  std::string message;
};

class JsonLineScanner {
 public:
  explicit JsonLineScanner(std::string_view line) : s_(line) {}

  void skip_ws();
  std::size_t offset() const { return pos_; }
  bool at_end() const { return pos_ >= s_.size(); }
  // Skips white space, then consumes `c` when it is next.
  bool consume(char c);
  // The same, throwing "expected 'c'" when `c` is not next.
  void expect(char c);
  // A string (at the next non-space character); escapes are decoded into `scratch` when present.
  std::string_view string(std::string& scratch);
  // The text of a number, checked against JSON's grammar (e.g. "-12", "3.5e2").
  std::string_view number();
  // Skips any value: string, number, literal, array or object.
  void skip_value(int depth = 0);
  [[noreturn]] void fail(std::size_t offset, std::string message) const;

 private:
  std::string_view s_;
  std::size_t pos_ = 0;
};

}  // namespace mlasim
