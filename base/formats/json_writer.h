// A small streaming JSON writer with deterministic layout: the same calls give the same bytes.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mlasim {

// The most bytes put_json_string writes for `n` characters: each escaped as \u00XX, and quotes.
constexpr std::size_t json_string_max(std::size_t n) { return 6 * n + 2; }
// Writes s as a quoted, escaped JSON string at p (room for json_string_max(s.size()) bytes);
// returns the end. The writers' one escape routine.
char* put_json_string(char* p, std::string_view s);

class JsonWriter {
 public:
  enum class Layout { kIndented, kOneLine };
  // depth: indentation levels the output starts at (for an element written apart and inserted
  // with raw_element into a writer at that depth). kOneLine: no newlines (JSONL).
  explicit JsonWriter(int depth = 0, Layout layout = Layout::kIndented) : depth_(depth), layout_(layout) {}

  JsonWriter& begin_object();
  JsonWriter& end_object();
  JsonWriter& begin_array();
  JsonWriter& end_array();
  JsonWriter& key(std::string_view k);
  JsonWriter& value(std::string_view s);
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(long long v);
  JsonWriter& value(int v) { return value(static_cast<long long>(v)); }
  JsonWriter& value(bool b);
  JsonWriter& value(double v);
  // A finite number with exactly `decimals` digits after the point (null when not finite).
  JsonWriter& fixed(double v, int decimals);
  JsonWriter& null();
  // A whole array of ints on one line.
  JsonWriter& int_array(const std::vector<int>& v);
  JsonWriter& string_array(const std::vector<std::string>& v);
  // An element serialised by another writer of the same layout at this depth.
  JsonWriter& raw_element(std::string_view json);
  std::string str() const { return out_ + "\n"; }
  // Moves out what was written so far (the writer keeps its nesting state): streaming output.
  std::string take() { return std::exchange(out_, std::string()); }
  // What was written so far, and forgetting it while keeping the nesting state and the buffer's
  // capacity: streaming output that reuses one buffer (a line or a step at a time).
  std::string_view text() const { return out_; }
  void clear_text() { out_.clear(); }
  // The layout, and the nesting level the next element stands at (the depth it was constructed
  // with plus the open containers): what a caller that serialises an element itself for
  // raw_element needs to indent it as this writer would.
  Layout layout() const { return layout_; }
  int level() const { return depth_ + static_cast<int>(first_.size()); }

 private:
  void before_value();
  void write_string(std::string_view s);
  void append_int(long long v);  // decimal, as std::to_string writes it
  JsonWriter& close(char bracket);
  void newline();
  std::string out_;
  std::vector<char> first_;  // per open container: no element written yet (char, not bool: a plain load)
  bool after_key_ = false;
  int depth_ = 0;
  Layout layout_ = Layout::kIndented;
};

}  // namespace mlasim
