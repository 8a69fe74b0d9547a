// One-line JSON object parsing with columns.
#include "sim/json_line.h"

namespace mlasim {

bool JsonLineParser::fail(std::size_t pos, std::string message) {
  error_column_ = static_cast<int>(pos) + 1;
  error_ = std::move(message);
  return false;
}

void JsonLineParser::skip_space() {
  while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r')) ++pos_;
}

bool JsonLineParser::parse_string(std::string& out) {
  const std::size_t start = pos_;
  ++pos_;  // the opening quote
  out.clear();
  while (pos_ < s_.size()) {
    const char c = s_[pos_];
    if (c == '"') {
      ++pos_;
      return true;
    }
    if (static_cast<unsigned char>(c) < 0x20) return fail(pos_, "control character inside a string");
    if (c != '\\') {
      out += c;
      ++pos_;
      continue;
    }
    if (pos_ + 1 >= s_.size()) break;
    const char e = s_[pos_ + 1];
    pos_ += 2;
    switch (e) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        if (pos_ + 4 > s_.size()) return fail(pos_ - 2, "incomplete \\u escape");
        unsigned cp = 0;
        for (int i = 0; i < 4; ++i) {
          const char h = s_[pos_ + static_cast<std::size_t>(i)];
          const int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
                                                       : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
          if (d < 0) return fail(pos_ - 2, "bad \\u escape");
          cp = cp * 16 + static_cast<unsigned>(d);
        }
        pos_ += 4;
        if (cp >= 0xD800 && cp <= 0xDFFF) return fail(pos_ - 6, "surrogate \\u escapes are not supported");
        if (cp < 0x80) {
          out += static_cast<char>(cp);
        } else if (cp < 0x800) {
          out += static_cast<char>(0xC0 | (cp >> 6));
          out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
          out += static_cast<char>(0xE0 | (cp >> 12));
          out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
          out += static_cast<char>(0x80 | (cp & 0x3F));
        }
        break;
      }
      default: return fail(pos_ - 2, std::string("unknown escape \\") + e);
    }
  }
  return fail(start, "unterminated string");
}

bool JsonLineParser::parse_number(std::string_view& out) {
  const std::size_t start = pos_;
  if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
  auto digits = [&] {
    const std::size_t d = pos_;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
    return pos_ - d;
  };
  const std::size_t int_start = pos_;
  if (digits() == 0) return fail(start, "expected a number");
  if (s_[int_start] == '0' && pos_ - int_start > 1) return fail(start, "a number must not have leading zeros");
  if (pos_ < s_.size() && s_[pos_] == '.') {
    ++pos_;
    if (digits() == 0) return fail(pos_, "expected digits after the decimal point");
  }
  if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
    ++pos_;
    if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
    if (digits() == 0) return fail(pos_, "expected digits in the exponent");
  }
  out = s_.substr(start, pos_ - start);
  return true;
}

bool JsonLineParser::parse_value(JsonLineValue& v) {
  skip_space();
  v.column = static_cast<int>(pos_) + 1;
  if (pos_ >= s_.size()) return fail(pos_, "expected a value");
  const char c = s_[pos_];
  if (c == '"') {
    v.kind = JsonLineValue::Kind::kString;
    return parse_string(v.text);
  }
  if (c == '[') {
    v.kind = JsonLineValue::Kind::kNumberArray;
    v.items.clear();
    v.item_columns.clear();
    ++pos_;
    skip_space();
    if (pos_ < s_.size() && s_[pos_] == ']') {
      ++pos_;
      return true;
    }
    while (true) {
      skip_space();
      if (pos_ < s_.size() && (s_[pos_] == '"' || s_[pos_] == '[' || s_[pos_] == '{' || s_[pos_] == 't' ||
                               s_[pos_] == 'f' || s_[pos_] == 'n'))
        return fail(pos_, "arrays in a request file hold numbers only");
      v.item_columns.push_back(static_cast<int>(pos_) + 1);
      std::string_view item;
      if (!parse_number(item)) return false;
      v.items.push_back(item);
      skip_space();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == ']') {
        ++pos_;
        return true;
      }
      return fail(pos_, "expected ',' or ']' in the array");
    }
  }
  if (c == '{') return fail(pos_, "nested objects are not allowed in a request file");
  struct Word {
    std::string_view text;
    JsonLineValue::Kind kind;
    bool value;
  };
  static constexpr Word kWords[] = {{"true", JsonLineValue::Kind::kBool, true},
                                    {"false", JsonLineValue::Kind::kBool, false},
                                    {"null", JsonLineValue::Kind::kNull, false}};
  for (const Word& w : kWords) {
    if (s_.substr(pos_, w.text.size()) == w.text) {
      pos_ += w.text.size();
      v.kind = w.kind;
      v.boolean = w.value;
      return true;
    }
  }
  v.kind = JsonLineValue::Kind::kNumber;
  return parse_number(v.number);
}

bool JsonLineParser::parse(std::string_view line) {
  s_ = line;
  pos_ = 0;
  num_fields_ = 0;
  error_.clear();
  error_column_ = 0;
  skip_space();
  if (pos_ >= s_.size() || s_[pos_] != '{') {
    return fail(pos_, "expected a JSON object ('{') on the line");
  }
  ++pos_;
  skip_space();
  if (pos_ < s_.size() && s_[pos_] == '}') {
    ++pos_;
  } else {
    while (true) {
      skip_space();
      if (pos_ >= s_.size() || s_[pos_] != '"') return fail(pos_, "expected a key in double quotes");
      if (fields_.size() <= num_fields_) fields_.emplace_back();
      JsonLineValue& v = fields_[num_fields_];
      v.key_column = static_cast<int>(pos_) + 1;
      if (!parse_string(v.key)) return false;
      for (std::size_t i = 0; i < num_fields_; ++i)
        if (fields_[i].key == v.key) return fail(static_cast<std::size_t>(v.key_column - 1), "duplicate key \"" + v.key + "\"");
      skip_space();
      if (pos_ >= s_.size() || s_[pos_] != ':') return fail(pos_, "expected ':' after the key");
      ++pos_;
      if (!parse_value(v)) return false;
      ++num_fields_;
      skip_space();
      if (pos_ < s_.size() && s_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < s_.size() && s_[pos_] == '}') {
        ++pos_;
        break;
      }
      return fail(pos_, "expected ',' or '}' after the value");
    }
  }
  skip_space();
  if (pos_ != s_.size()) return fail(pos_, "text after the object; one JSON object per line");
  return true;
}

const JsonLineValue* JsonLineParser::find(std::string_view key) const {
  for (const JsonLineValue& v : fields())
    if (v.key == key) return &v;
  return nullptr;
}

}  // namespace mlasim
