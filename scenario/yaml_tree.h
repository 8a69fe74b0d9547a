// A YAML document as a compact tree, built from yaml-cpp's event parser: 24 bytes a node, scalars
// in one character arena, children in one index arena, so a scenario of 100,000 inline requests
// costs a few hundred bytes a request while it is read (yaml-cpp's own node graph costs kilobytes).
// An alias is the anchored node itself, shared, as in yaml-cpp. yaml-cpp stays behind this header
// (sim/ is its only user): marks and syntax errors are this header's own types.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace mlasim {

enum class YamlType : std::uint8_t { Undefined, Null, Scalar, Sequence, Map };

// A 0-based position in a YAML text; null (line < 0) for a node no text holds.
struct YamlMark {
  int line = -1, column = -1;
  bool is_null() const { return line < 0; }
};

// What parse() throws: yaml-cpp's message and where it points.
struct YamlSyntaxError {
  YamlMark mark;
  std::string msg;
};

class YamlTree;

// A handle on one node of a YamlTree (valid while the tree lives), or an undefined node: what a
// lookup of a missing key or index returns. Reads mirror yaml-cpp's YAML::Node.
class YamlNode {
 public:
  YamlNode() = default;
  YamlNode(YamlTree* tree, std::uint32_t id) : tree_(tree), id_(id) {}

  YamlType Type() const;
  bool IsDefined() const { return Type() != YamlType::Undefined; }
  bool IsNull() const { return Type() == YamlType::Null; }
  bool IsScalar() const { return Type() == YamlType::Scalar; }
  bool IsSequence() const { return Type() == YamlType::Sequence; }
  bool IsMap() const { return Type() == YamlType::Map; }
  explicit operator bool() const { return IsDefined(); }

  std::string Scalar() const;  // "" unless a scalar
  // The YAML tag as yaml-cpp reports it: "?" for a plain scalar or any untagged collection, "!"
  // for a quoted scalar, "tag:yaml.org,2002:int" for `!!int`; "" for a node made by --set's path.
  const std::string& Tag() const;
  // Where the node starts in its text (0-based line and column); null for a node with no text.
  YamlMark Mark() const;

  // A sequence's entries or a mapping's pairs; 0 for anything else.
  std::size_t size() const;
  YamlNode operator[](std::size_t index) const;      // a sequence's entry; undefined past its end
  YamlNode operator[](const std::string& key) const;  // a mapping's first value under a scalar key
  YamlNode operator[](const char* key) const { return (*this)[std::string(key)]; }
  YamlNode operator[](int index) const { return index < 0 ? YamlNode() : (*this)[static_cast<std::size_t>(index)]; }
  YamlNode key_at(std::size_t pair) const;  // a mapping's pair'th key, in document order
  YamlNode value_at(std::size_t pair) const;

  std::uint32_t id() const { return id_; }
  YamlTree* tree() const { return tree_; }

 private:
  YamlTree* tree_ = nullptr;
  std::uint32_t id_ = 0;
};

class YamlTree {
 public:
  static constexpr std::uint32_t kNone = 0xffffffffu;

  struct Node {
    YamlType type = YamlType::Undefined;
    std::uint32_t tag = 0;            // index into tags_
    std::int32_t line = -1, column = -1;
    std::uint32_t begin = 0, count = 0;  // scalar: chars_ range; collection: kids_ range (a map: 2 per pair)
  };

  // Parses the first document of `text` into this tree and returns its root (a null node for a
  // text with no document). Where a second document starts goes to `second_document` (null when
  // there is none). Throws YamlSyntaxError on a syntax error. Nodes already in the tree stay (a
  // --set value is parsed into the scenario's tree).
  YamlNode parse(const std::string& text, YamlMark* second_document = nullptr);

  YamlNode node(std::uint32_t id) { return YamlNode(this, id); }
  const Node& at(std::uint32_t id) const { return nodes_[id]; }
  std::uint32_t kid(std::uint32_t node, std::size_t i) const { return kids_[nodes_[node].begin + i]; }
  std::string_view scalar(std::uint32_t id) const;  // "" unless a scalar; valid until the tree grows
  const std::string& tag(std::uint32_t id) const { return tags_[nodes_[id].tag]; }

  // Edits for --set. A copy of a collection: its own slots, the same children (so an edit of the
  // copy's slots never reaches another alias of the original).
  std::uint32_t copy_collection(std::uint32_t id);
  std::uint32_t new_map();  // an empty mapping without a mark
  void set_kid(std::uint32_t node, std::size_t i, std::uint32_t value) { kids_[nodes_[node].begin + i] = value; }
  // Sets `key` of a mapping to `value`: the value of the first pair under that key (the one a
  // lookup finds), or a new pair at the end.
  void set_map_value(std::uint32_t map, const std::string& key, std::uint32_t value);

  std::size_t memory_bytes() const;

 private:
  friend class YamlTreeBuilder;
  std::uint32_t add(const Node& n);
  // Copies a collection's child slots to the end of the arena, with `extra` slots more; returns
  // where the copy begins.
  std::uint32_t copy_kids(const Node& n, std::uint32_t extra = 0);
  std::uint32_t intern_tag(const std::string& tag);

  std::vector<Node> nodes_;
  std::vector<std::uint32_t> kids_;
  std::string chars_;
  std::vector<std::string> tags_{""};
};

}  // namespace mlasim
