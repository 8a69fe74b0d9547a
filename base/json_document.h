// A whole JSON document (RFC 8259) read into a tree whose values know their line and column, on
// base/json_scanner. For files a user hands mlasim as JSON (a model's config.json): the text must
// be UTF-8 without a byte-order mark, hold exactly one value and nothing after it but white space;
// no comments, trailing commas, single quotes or unquoted keys. Line ends may be LF, CRLF or CR
// (each counts as one line for line numbers). A key that appears twice in an object keeps the last
// value, as Python's json does, and is listed in JsonDocument::duplicates.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace mlasim {

struct JsonMember;

struct JsonNode {
  enum class Kind { kNull, kBool, kNumber, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool boolean = false;
  // kString: the decoded text; kNumber: the literal as written ("-12", "3.5e2", and with
  // JsonDocumentOptions::python_constants "NaN", "Infinity", "-Infinity").
  std::string text;
  std::vector<JsonNode> items;      // kArray
  std::vector<JsonMember> members;  // kObject: each key once, in the order first seen, the last value
  int line = 0;                     // 1-based, where the value starts
  int column = 0;                   // 1-based, in characters

  bool is_null() const { return kind == Kind::kNull; }
  bool is_object() const { return kind == Kind::kObject; }
  bool is_array() const { return kind == Kind::kArray; }
  bool is_string() const { return kind == Kind::kString; }
  bool is_number() const { return kind == Kind::kNumber; }
  // A number written without fraction or exponent (Python's json makes it an int).
  bool is_integer() const;
  // The member `key` of an object, or nullptr.
  const JsonNode* find(std::string_view key) const;
};

struct JsonMember {
  std::string key;
  int key_line = 0, key_column = 0;  // where the key was first written
  JsonNode value;
};

// A key written again in the same object: where (its key), and where it was first written.
struct JsonDuplicate {
  std::string key_path;  // "rope_scaling.factor", "architectures"
  int line = 0, column = 0;
  int first_line = 0, first_column = 0;
};

struct JsonDocument {
  JsonNode root;
  std::vector<JsonDuplicate> duplicates;  // in text order
};

struct JsonDocumentOptions {
  // Python's json.loads also reads NaN, Infinity and -Infinity as numbers; RFC 8259 does not.
  bool python_constants = false;
};

// "JSON kind" for messages: "an object", "a list", "a string", "a number", "true", "null".
std::string json_kind_name(const JsonNode& node);

// "a.b", "a[2]": key paths as errors name them.
std::string json_join_key(const std::string& parent, std::string_view key);
std::string json_index_key(const std::string& parent, std::size_t index);

// Parses `text`; an error names `file`, the line and column and the key path where the text stops
// being JSON (its message says what was found, its hint what JSON wants there).
Result<JsonDocument> parse_json_document(std::string_view text, const std::string& file,
                                         const JsonDocumentOptions& options = {});

}  // namespace mlasim
