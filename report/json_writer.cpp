// JSON output: two-space indentation, keys in call order, ints as integers, doubles with 17 digits.
#include "report/json_writer.h"

#include <cmath>
#include <cstdio>
#include <cstring>

namespace mlasim {

void JsonWriter::newline() {
  if (layout_ == Layout::kOneLine) return;
  out_ += '\n';
  out_.append(2 * (first_.size() + static_cast<std::size_t>(depth_)), ' ');
}

JsonWriter& JsonWriter::raw_element(std::string_view json) {
  before_value();
  out_ += json;
  return *this;
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_ += layout_ == Layout::kOneLine ? ", " : ",";
    first_.back() = false;
    newline();
  }
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  out_ += '{';
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::close(char bracket) {
  bool empty = first_.back();
  first_.pop_back();
  if (!empty) newline();
  out_ += bracket;
  return *this;
}

JsonWriter& JsonWriter::end_object() { return close('}'); }

JsonWriter& JsonWriter::begin_array() {
  before_value();
  out_ += '[';
  first_.push_back(true);
  return *this;
}

JsonWriter& JsonWriter::end_array() { return close(']'); }

JsonWriter& JsonWriter::key(std::string_view k) {
  before_value();
  write_string(k);
  out_ += ": ";
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) {
  before_value();
  write_string(s);
  return *this;
}

void JsonWriter::write_string(std::string_view s) {
  out_ += '"';
  for (char c : s) {
    switch (c) {
      case '"': out_ += "\\\""; break;
      case '\\': out_ += "\\\\"; break;
      case '\n': out_ += "\\n"; break;
      case '\t': out_ += "\\t"; break;
      case '\r': out_ += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out_ += buf;
        } else {
          out_ += c;
        }
    }
  }
  out_ += '"';
}

JsonWriter& JsonWriter::value(long long v) {
  before_value();
  out_ += std::to_string(v);
  return *this;
}

JsonWriter& JsonWriter::value(bool b) {
  before_value();
  out_ += b ? "true" : "false";
  return *this;
}

JsonWriter& JsonWriter::fixed(double v, int decimals) {
  before_value();
  if (!std::isfinite(v)) {
    out_ += "null";
    return *this;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  out_ += buf;
  return *this;
}

JsonWriter& JsonWriter::value(double v) {
  before_value();
  if (!std::isfinite(v)) {
    out_ += "null";
    return *this;
  }
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  out_ += buf;
  // A whole number stays a float to readers that check the type (transformers' config checks
  // do): 1 is written 1.0.
  if (std::strpbrk(buf, ".eEn") == nullptr) out_ += ".0";
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  out_ += "null";
  return *this;
}

JsonWriter& JsonWriter::int_array(const std::vector<int>& v) {
  before_value();
  out_ += '[';
  for (std::size_t i = 0; i < v.size(); ++i) out_ += (i ? ", " : "") + std::to_string(v[i]);
  out_ += ']';
  return *this;
}

JsonWriter& JsonWriter::string_array(const std::vector<std::string>& v) {
  begin_array();
  for (const auto& s : v) value(std::string_view(s));
  return end_array();
}

}  // namespace mlasim
