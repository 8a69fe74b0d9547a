// A small streaming JSON writer with deterministic layout: the same calls give the same bytes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mlasim {

class JsonWriter {
 public:
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
  JsonWriter& null();
  // A whole array of ints on one line.
  JsonWriter& int_array(const std::vector<int>& v);
  JsonWriter& string_array(const std::vector<std::string>& v);
  std::string str() const { return out_ + "\n"; }

 private:
  void before_value();
  void write_string(std::string_view s);
  JsonWriter& close(char bracket);
  void newline();
  std::string out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

}  // namespace mlasim
