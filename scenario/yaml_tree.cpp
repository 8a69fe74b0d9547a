// The compact YAML tree: yaml-cpp's event parser drives a builder that appends nodes, scalar
// characters and child indices to three arenas.
#include "scenario/yaml_tree.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/parser.h>

#include <algorithm>
#include <istream>
#include <streambuf>

namespace mlasim {

// ---- YamlNode ----

YamlType YamlNode::Type() const {
  if (tree_ == nullptr || id_ == YamlTree::kNone) return YamlType::Undefined;
  return tree_->at(id_).type;
}

std::string YamlNode::Scalar() const { return std::string(IsDefined() ? tree_->scalar(id_) : std::string_view()); }

const std::string& YamlNode::Tag() const {
  static const std::string kEmpty;
  return IsDefined() ? tree_->tag(id_) : kEmpty;
}

YamlMark YamlNode::Mark() const {
  if (!IsDefined()) return {};
  return YamlMark{tree_->at(id_).line, tree_->at(id_).column};
}

std::size_t YamlNode::size() const {
  switch (Type()) {
    case YamlType::Sequence: return tree_->at(id_).count;
    case YamlType::Map: return tree_->at(id_).count / 2;
    default: return 0;
  }
}

YamlNode YamlNode::operator[](std::size_t index) const {
  if (!IsSequence() || index >= size()) return {};
  return YamlNode(tree_, tree_->kid(id_, index));
}

YamlNode YamlNode::operator[](const std::string& key) const {
  if (!IsMap()) return {};
  const std::size_t n = size();
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t k = tree_->kid(id_, 2 * i);
    if (tree_->scalar(k) == key && tree_->at(k).type == YamlType::Scalar)
      return YamlNode(tree_, tree_->kid(id_, 2 * i + 1));
  }
  return {};
}

YamlNode YamlNode::key_at(std::size_t pair) const {
  if (!IsMap() || pair >= size()) return {};
  return YamlNode(tree_, tree_->kid(id_, 2 * pair));
}

YamlNode YamlNode::value_at(std::size_t pair) const {
  if (!IsMap() || pair >= size()) return {};
  return YamlNode(tree_, tree_->kid(id_, 2 * pair + 1));
}

// ---- YamlTree ----

std::string_view YamlTree::scalar(std::uint32_t id) const {
  const Node& n = nodes_[id];
  return n.type == YamlType::Scalar ? std::string_view(chars_).substr(n.begin, n.count) : std::string_view();
}

std::uint32_t YamlTree::add(const Node& n) {
  if (nodes_.size() >= kNone - 1) throw YamlSyntaxError{{}, "more than 2^32 YAML nodes"};
  nodes_.push_back(n);
  return static_cast<std::uint32_t>(nodes_.size() - 1);
}

std::uint32_t YamlTree::intern_tag(const std::string& tag) {
  // Few distinct tags exist in a document ("?", "!", a handful of !!type); a linear search is enough.
  for (std::size_t i = 0; i < tags_.size(); ++i)
    if (tags_[i] == tag) return static_cast<std::uint32_t>(i);
  tags_.push_back(tag);
  return static_cast<std::uint32_t>(tags_.size() - 1);
}

std::uint32_t YamlTree::copy_kids(const Node& n, std::uint32_t extra) {
  const std::uint32_t begin = static_cast<std::uint32_t>(kids_.size());
  kids_.resize(kids_.size() + n.count + extra);
  std::copy_n(kids_.begin() + n.begin, n.count, kids_.begin() + begin);
  return begin;
}

std::uint32_t YamlTree::copy_collection(std::uint32_t id) {
  Node n = nodes_[id];
  n.begin = copy_kids(n);
  return add(n);
}

std::uint32_t YamlTree::new_map() {
  Node n;
  n.type = YamlType::Map;
  n.begin = static_cast<std::uint32_t>(kids_.size());
  return add(n);
}

void YamlTree::set_map_value(std::uint32_t map, const std::string& key, std::uint32_t value) {
  for (std::uint32_t i = 0; i < nodes_[map].count; i += 2) {
    const std::uint32_t k = kids_[nodes_[map].begin + i];
    if (nodes_[k].type == YamlType::Scalar && scalar(k) == key) {  // the first pair under `key`, as lookups find
      kids_[nodes_[map].begin + i + 1] = value;
      return;
    }
  }
  Node k;
  k.type = YamlType::Scalar;
  k.tag = intern_tag("?");
  k.begin = static_cast<std::uint32_t>(chars_.size());
  k.count = static_cast<std::uint32_t>(key.size());
  chars_ += key;
  const std::uint32_t key_id = add(k);
  // The mapping's slots move to the end of the arena with room for the new pair.
  Node& m = nodes_[map];
  m.begin = copy_kids(m, 2);
  kids_[m.begin + m.count] = key_id;
  kids_[m.begin + m.count + 1] = value;
  m.count += 2;
}

std::size_t YamlTree::memory_bytes() const {
  return nodes_.capacity() * sizeof(Node) + kids_.capacity() * sizeof(std::uint32_t) + chars_.capacity();
}

// ---- building from events ----

class YamlTreeBuilder final : public YAML::EventHandler {
 public:
  explicit YamlTreeBuilder(YamlTree& tree) : t_(tree) {}

  std::uint32_t root = YamlTree::kNone;
  YAML::Mark start = YAML::Mark::null_mark();

  void OnDocumentStart(const YAML::Mark& mark) override { start = mark; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    complete(anchored(anchor, t_.add(node(YamlType::Null, mark, ""))));
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (anchor >= anchors_.size() || anchors_[anchor] == YamlTree::kNone)
      throw YAML::ParserException(mark, "the alias names an anchor not defined before it");
    complete(anchors_[anchor]);
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    YamlTree::Node n = node(YamlType::Scalar, mark, tag);
    n.begin = static_cast<std::uint32_t>(t_.chars_.size());
    n.count = static_cast<std::uint32_t>(value.size());
    t_.chars_ += value;
    complete(anchored(anchor, t_.add(n)));
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(anchored(anchor, t_.add(node(YamlType::Sequence, mark, tag))));
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(anchored(anchor, t_.add(node(YamlType::Map, mark, tag))));
  }
  void OnMapEnd() override { close(); }

 private:
  struct Open {
    std::uint32_t id;
    std::size_t first_pending;
  };

  YamlTree::Node node(YamlType type, const YAML::Mark& mark, const std::string& tag) {
    YamlTree::Node n;
    n.type = type;
    n.tag = t_.intern_tag(tag);
    n.line = mark.line;
    n.column = mark.column;
    return n;
  }
  std::uint32_t anchored(YAML::anchor_t anchor, std::uint32_t id) {
    if (anchor != YAML::NullAnchor) {
      if (anchor >= anchors_.size()) anchors_.resize(anchor + 1, YamlTree::kNone);
      anchors_[anchor] = id;
    }
    return id;
  }
  void open(std::uint32_t id) { open_.push_back({id, pending_.size()}); }
  // A collection's children are known when it ends: they move from the pending stack to the
  // arena as one contiguous range.
  void close() {
    const Open o = open_.back();
    open_.pop_back();
    YamlTree::Node& n = t_.nodes_[o.id];
    n.begin = static_cast<std::uint32_t>(t_.kids_.size());
    n.count = static_cast<std::uint32_t>(pending_.size() - o.first_pending);
    t_.kids_.insert(t_.kids_.end(), pending_.begin() + static_cast<std::ptrdiff_t>(o.first_pending), pending_.end());
    pending_.resize(o.first_pending);
    complete(o.id);
  }
  void complete(std::uint32_t id) {
    if (open_.empty()) root = id;
    else pending_.push_back(id);
  }

  YamlTree& t_;
  std::vector<Open> open_;
  std::vector<std::uint32_t> pending_;
  std::vector<std::uint32_t> anchors_;
};

namespace {

// Reads a string in place (an istringstream would copy a 64 MiB scenario).
class StringBuf final : public std::streambuf {
 public:
  explicit StringBuf(const std::string& s) {
    char* p = const_cast<char*>(s.data());
    setg(p, p, p + s.size());
  }
};

class DocumentStarts final : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts;
  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

}  // namespace

YamlNode YamlTree::parse(const std::string& text, YamlMark* second_document) {
  StringBuf buf(text);
  std::istream in(&buf);
  YamlTreeBuilder builder(*this);
  if (second_document != nullptr) *second_document = YamlMark{};
  try {
    YAML::Parser parser(in);
    if (parser.HandleNextDocument(builder)) {
      // One more document at most: enough to tell one from more. yaml-cpp 0.7's parser can stop
      // making progress (a stray "," at the top starts a document at the same place forever).
      DocumentStarts next;
      if (parser.HandleNextDocument(next) && !next.starts.empty()) {
        const YAML::Mark& b = next.starts.front();
        if (b.pos <= builder.start.pos)
          throw YamlSyntaxError{{b.line, b.column}, "unexpected character; a value cannot start here"};
        if (second_document != nullptr) *second_document = YamlMark{b.line, b.column};
      }
    }
  } catch (const YAML::Exception& e) {
    throw YamlSyntaxError{{e.mark.line, e.mark.column}, e.msg};
  }
  if (builder.root == kNone) {  // no document: a null node, as YAML::Load gives
    Node n;
    n.type = YamlType::Null;
    return YamlNode(this, add(n));
  }
  return YamlNode(this, builder.root);
}

}  // namespace mlasim
