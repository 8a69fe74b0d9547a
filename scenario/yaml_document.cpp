// Emitting scenario YAML.
#include "scenario/yaml_document.h"

#include <cstdio>

#include "base/check.h"

namespace mlasim {
namespace {

bool plain_safe(const std::string& v) {
  if (v.empty()) return false;
  for (char c : v) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                    c == '.' || c == '+' || c == '-' || c == '/';
    if (!ok) return false;
  }
  return true;
}

std::string comment_suffix(const std::string& c) { return c.empty() ? "" : "  # " + c; }

}  // namespace

std::string yaml_quoted(const std::string& v) {
  std::string out = "\"";
  for (unsigned char c : v) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

YamlValue YamlValue::scalar(std::string text, Quoting q) {
  YamlValue v;
  v.text_ = std::move(text);
  v.quoting_ = q;
  return v;
}

YamlValue YamlValue::plain(std::string text) { return scalar(std::move(text), Quoting::kPlain); }

YamlValue YamlValue::str(const std::string& s) { return scalar(s, Quoting::kWhenNeeded); }

YamlValue YamlValue::quoted(const std::string& s) { return scalar(s, Quoting::kAlways); }

YamlValue YamlValue::mapping(Style style) {
  YamlValue v;
  v.kind_ = Kind::kMapping;
  v.style_ = style;
  return v;
}

YamlValue YamlValue::sequence(Style style) {
  YamlValue v;
  v.kind_ = Kind::kSequence;
  v.style_ = style;
  return v;
}

YamlValue& YamlValue::set(const std::string& key, YamlValue v) {
  MLASIM_CHECK(kind_ == Kind::kMapping, "set on a YAML value that is not a mapping");
  if (YamlValue* old = find(key)) return *old = std::move(v);
  entries_.emplace_back(key, std::move(v));
  return entries_.back().second;
}

bool YamlValue::erase(const std::string& key) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it)
    if (it->first == key) {
      entries_.erase(it);
      return true;
    }
  return false;
}

YamlValue* YamlValue::find(const std::string& key) {
  for (auto& [k, v] : entries_)
    if (k == key) return &v;
  return nullptr;
}

const YamlValue* YamlValue::find(const std::string& key) const {
  for (const auto& [k, v] : entries_)
    if (k == key) return &v;
  return nullptr;
}

YamlValue& YamlValue::push(YamlValue v) {
  MLASIM_CHECK(kind_ == Kind::kSequence, "push on a YAML value that is not a sequence");
  items_.push_back(std::move(v));
  return items_.back();
}

std::string YamlValue::flow_text() const {
  switch (kind_) {
    case Kind::kScalar:
      if (quoting_ == Quoting::kAlways || (quoting_ == Quoting::kWhenNeeded && !plain_safe(text_)))
        return yaml_quoted(text_);
      return text_;
    case Kind::kMapping: {
      std::string out = "{";
      for (std::size_t i = 0; i < entries_.size(); ++i)
        out += (i ? ", " : "") + entries_[i].first + ": " + entries_[i].second.flow_text();
      return out + "}";
    }
    case Kind::kSequence: {
      std::string out = "[";
      for (std::size_t i = 0; i < items_.size(); ++i) out += (i ? ", " : "") + items_[i].flow_text();
      return out + "]";
    }
  }
  return text_;
}

std::string YamlValue::block_text(int indent) const {
  MLASIM_CHECK(kind_ == Kind::kMapping, "block_text of a YAML value that is not a mapping");
  const std::string pad(static_cast<std::size_t>(indent), ' ');
  std::string out;
  for (const auto& [key, v] : entries_) {
    if (v.kind_ == Kind::kScalar || v.style_ == Style::kFlow) {
      out += pad + key + ": " + v.flow_text() + comment_suffix(v.comment_) + "\n";
    } else if (v.kind_ == Kind::kMapping) {
      out += pad + key + ":" + comment_suffix(v.comment_) + "\n" + v.block_text(indent + 2);
    } else {
      out += pad + key + ":" + comment_suffix(v.comment_) + "\n";
      for (const YamlValue& item : v.items_) {
        MLASIM_CHECK(item.kind_ == Kind::kScalar || item.style_ == Style::kFlow,
                     "a block sequence's items are written in flow style");
        out += pad + "  - " + item.flow_text() + comment_suffix(item.comment_) + "\n";
      }
    }
  }
  return out;
}

std::string emit_yaml(const YamlValue& root, const std::string& header) {
  std::string out;
  std::size_t start = 0;
  while (start < header.size()) {
    std::size_t nl = header.find('\n', start);
    if (nl == std::string::npos) nl = header.size();
    out += "# " + header.substr(start, nl - start) + "\n";
    start = nl + 1;
  }
  return out + root.block_text(0);
}

}  // namespace mlasim
