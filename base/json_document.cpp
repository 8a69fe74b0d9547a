// A JSON document as a located tree: encoding checks, then recursive descent on JsonScanner.
#include "base/json_document.h"

#include <algorithm>
#include <cstdio>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "base/json_scanner.h"

namespace mlasim {
namespace {

// The offset of the first byte that is not valid UTF-8 (as Python's strict utf-8 codec judges it:
// no overlong forms, no surrogates, nothing above U+10FFFF), or npos.
std::size_t invalid_utf8_at(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    int n = 0;
    unsigned lo = 0x80, hi = 0xBF;  // the range of the second byte
    if (c >= 0xC2 && c <= 0xDF) {
      n = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      n = 2;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;  // U+D800..U+DFFF are not characters
    } else if (c >= 0xF0 && c <= 0xF4) {
      n = 3;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return i;
    }
    for (int k = 1; k <= n; ++k) {
      if (i + k >= s.size()) return i;
      const auto b = static_cast<unsigned char>(s[i + k]);
      if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) return i;
    }
    i += n + 1;
  }
  return std::string_view::npos;
}

// Line starts for LF, CRLF and CR line ends; columns count characters (UTF-8 lead bytes). The
// parse asks in text order, so a column is counted on from the last one asked on the same line:
// a long minified line costs its length once, not once per value.
class LineIndex {
 public:
  explicit LineIndex(std::string_view s) : s_(s) {
    starts_.push_back(0);
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '\n' || (s[i] == '\r' && (i + 1 >= s.size() || s[i + 1] != '\n'))) starts_.push_back(i + 1);
    }
  }
  std::pair<int, int> at(std::size_t offset) {
    offset = std::min(offset, s_.size());
    const auto line = static_cast<std::size_t>(std::upper_bound(starts_.begin(), starts_.end(), offset) - starts_.begin()) - 1;
    if (line != last_line_ || offset < last_offset_) {
      last_line_ = line;
      last_offset_ = starts_[line];
      last_column_ = 1;
    }
    for (; last_offset_ < offset; ++last_offset_) last_column_ += (static_cast<unsigned char>(s_[last_offset_]) & 0xC0) != 0x80;
    return {static_cast<int>(line) + 1, last_column_};
  }

 private:
  std::string_view s_;
  std::vector<std::size_t> starts_;
  std::size_t last_line_ = 0, last_offset_ = 0;
  int last_column_ = 1;
};

struct Stop {  // a parse error before it is located
  std::size_t offset;
  std::string message, hint;
};

class Parser {
 public:
  Parser(std::string_view text, LineIndex& lines, const JsonDocumentOptions& options)
      : s_(text), lines_(lines), sc_(text), options_(options) {}

  void document(JsonDocument& doc) {
    doc_ = &doc;
    value(doc.root, 0, "");
    sc_.skip_ws();
    if (!sc_.at_end())
      stop(sc_.offset(), "text after the JSON value (" + found(sc_.offset()) + ")",
           "a JSON file holds exactly one value: remove what follows it (a second document, a stray character)");
  }

  std::string path;  // where the parse is: the key path errors name

 private:
  [[noreturn]] void stop(std::size_t offset, std::string message, std::string hint = {}) const {
    throw Stop{offset, std::move(message), std::move(hint)};
  }

  std::string found(std::size_t at) const {
    if (at >= s_.size()) return "found the end of the text";
    const auto c = static_cast<unsigned char>(s_[at]);
    if (c >= 0x20 && c < 0x7F) return std::string("found '") + static_cast<char>(c) + "'";
    char buf[32];
    std::snprintf(buf, sizeof buf, "found byte 0x%02X", c);
    return buf;
  }

  // Refuses what is at `at`, naming a non-JSON habit (a comment, single quotes) when it is one.
  [[noreturn]] void refuse(std::size_t at, const char* expected) const {
    const char c = at < s_.size() ? s_[at] : '\0';
    if ((c == '/' && at + 1 < s_.size() && (s_[at + 1] == '/' || s_[at + 1] == '*')) || c == '#')
      stop(at, "a comment", "JSON has no comments: remove it");
    if (c == '\'') stop(at, "a string in single quotes", "JSON strings are in double quotes");
    stop(at, std::string("expected ") + expected + ", " + found(at));
  }

  void value(JsonNode& node, int depth, const std::string& here) {
    sc_.skip_ws();
    const std::size_t at = sc_.offset();
    std::tie(node.line, node.column) = lines_.at(at);
    const char c = sc_.peek();
    if (sc_.at_end()) stop(at, "expected a value, found the end of the text");
    if ((c == '{' || c == '[') && depth >= JsonScanner::kMaxDepth)
      stop(at, "nested deeper than " + std::to_string(JsonScanner::kMaxDepth) + " levels");
    if (c == '{') return object(node, depth, here);
    if (c == '[') return array(node, depth, here);
    if (c == '"') {
      node.kind = JsonNode::Kind::kString;
      std::string scratch;
      node.text = std::string(sc_.string(scratch));
      return;
    }
    if (sc_.consume_word("true") || sc_.consume_word("false")) {
      node.kind = JsonNode::Kind::kBool;
      node.boolean = c == 't';
      return;
    }
    if (sc_.consume_word("null")) return;
    const bool constant = c == 'N' || c == 'I' || (c == '-' && at + 1 < s_.size() && s_[at + 1] == 'I');
    if (constant && options_.python_constants) {
      for (const char* word : {"NaN", "Infinity", "-Infinity"})
        if (sc_.consume_word(word)) {
          node.kind = JsonNode::Kind::kNumber;
          node.text = word;
          return;
        }
    }
    if (constant) stop(at, "NaN and Infinity are not JSON", "write a finite number");
    if (c == '-' || (c >= '0' && c <= '9')) {
      node.kind = JsonNode::Kind::kNumber;
      node.text = std::string(sc_.number());
      return;
    }
    if (c == 'T' || c == 'F') stop(at, "expected a value, " + found(at), "JSON's literals are true, false and null, in lower case");
    refuse(at, "a value");
  }

  void object(JsonNode& node, int depth, const std::string& here) {
    node.kind = JsonNode::Kind::kObject;
    sc_.expect('{');
    if (sc_.consume('}')) return;
    std::unordered_map<std::string, std::size_t> index;  // key -> its member
    std::string scratch;
    for (;;) {
      sc_.skip_ws();
      const std::size_t key_at = sc_.offset();
      const auto [line, column] = lines_.at(key_at);
      const char c = sc_.peek();
      if (c == '}') stop(key_at, "a trailing comma before '}'", "remove the comma after the last member");
      if (c != '"') {
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_')
          stop(key_at, "an object key without quotes", "JSON keys are strings in double quotes");
        refuse(key_at, "a key (a string in double quotes)");
      }
      std::string key(sc_.string(scratch));
      sc_.skip_ws();
      if (sc_.peek() != ':') stop(sc_.offset(), "expected ':' after the key, " + found(sc_.offset()));
      sc_.expect(':');
      const std::string member_path = json_join_key(here, key);
      path = member_path;
      JsonNode member_value;
      value(member_value, depth + 1, member_path);
      if (auto it = index.find(key); it != index.end()) {
        JsonMember& first = node.members[it->second];
        doc_->duplicates.push_back(JsonDuplicate{member_path, line, column, first.key_line, first.key_column});
        first.value = std::move(member_value);
      } else {
        index.emplace(key, node.members.size());
        node.members.push_back(JsonMember{std::move(key), line, column, std::move(member_value)});
      }
      path = here;
      if (sc_.consume(',')) continue;
      if (sc_.consume('}')) break;
      refuse(sc_.offset(), "',' or '}' after a member");
    }
  }

  void array(JsonNode& node, int depth, const std::string& here) {
    node.kind = JsonNode::Kind::kArray;
    sc_.expect('[');
    if (sc_.consume(']')) return;
    for (;;) {
      sc_.skip_ws();
      if (sc_.peek() == ']') stop(sc_.offset(), "a trailing comma before ']'", "remove the comma after the last item");
      const std::string item_path = json_index_key(here, node.items.size());
      path = item_path;
      node.items.emplace_back();
      value(node.items.back(), depth + 1, item_path);
      path = here;
      if (sc_.consume(',')) continue;
      if (sc_.consume(']')) break;
      refuse(sc_.offset(), "',' or ']' after an item");
    }
  }

  std::string_view s_;
  LineIndex& lines_;
  JsonScanner sc_;
  JsonDocumentOptions options_;
  JsonDocument* doc_ = nullptr;
};

}  // namespace

bool JsonNode::is_integer() const {
  // Not NaN or [-]Infinity, and no fraction or exponent.
  return kind == Kind::kNumber && text.find_first_of(".eEIN") == std::string::npos;
}

const JsonNode* JsonNode::find(std::string_view key) const {
  for (const JsonMember& m : members)
    if (m.key == key) return &m.value;
  return nullptr;
}

std::string json_kind_name(const JsonNode& node) {
  switch (node.kind) {
    case JsonNode::Kind::kNull: return "null";
    case JsonNode::Kind::kBool: return node.boolean ? "true" : "false";
    case JsonNode::Kind::kNumber: return "a number (" + node.text + ")";
    case JsonNode::Kind::kString: return "a string";
    case JsonNode::Kind::kArray: return "a list";
    case JsonNode::Kind::kObject: return "an object";
  }
  return "a value";
}

std::string json_join_key(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

std::string json_index_key(const std::string& parent, std::size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

Result<JsonDocument> parse_json_document(std::string_view text, const std::string& file,
                                         const JsonDocumentOptions& options) {
  LineIndex lines(text);
  auto error = [&](std::size_t offset, std::string key_path, std::string message, std::string hint) {
    Error e;
    e.file = file;
    std::tie(e.line, e.column) = lines.at(offset);
    e.key_path = std::move(key_path);
    e.message = std::move(message);
    e.hint = std::move(hint);
    return e;
  };
  if (text.substr(0, 3) == "\xEF\xBB\xBF")
    return error(0, "", "the text starts with a UTF-8 byte-order mark (EF BB BF)",
                 "JSON text has none (RFC 8259 section 8.1), and Python's json.loads refuses it (\"Unexpected UTF-8 "
                 "BOM\"): save the file as UTF-8 without a BOM");
  if (text.substr(0, 2) == "\xFF\xFE" || text.substr(0, 2) == "\xFE\xFF" ||
      (text.size() >= 2 && (text[0] == '\0' || text[1] == '\0')))
    return error(0, "", "the text is UTF-16 or UTF-32, not UTF-8",
                 "JSON files are read as UTF-8 (RFC 8259 section 8.1): save the file as UTF-8");
  if (const std::size_t bad = invalid_utf8_at(text); bad != std::string_view::npos) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%02X", static_cast<unsigned char>(text[bad]));
    return error(bad, "", std::string("invalid UTF-8 (byte ") + buf + ")",
                 "JSON files are read as UTF-8: save the file as UTF-8");
  }
  JsonDocument doc;
  Parser p(text, lines, options);
  try {
    p.document(doc);
  } catch (const Stop& s) {
    return error(s.offset, p.path, s.message, s.hint);
  } catch (const JsonSyntaxError& s) {
    return error(s.offset, p.path, s.message, "");
  }
  return doc;
}

}  // namespace mlasim
