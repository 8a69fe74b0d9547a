// The importer's scenario document and its --set.
#include "tools/import/scenario_yaml.h"

#include "scenario/set_override.h"

namespace mlasim {
namespace {

// The document as --set walks it: mappings of scalars, no lists and no aliases.
class DocumentSetTarget : public SetTarget {
 public:
  DocumentSetTarget(YamlValue& root, YamlValue value) : cur_(&root), value_(std::move(value)) {}
  Kind kind() const override { return kind_of(cur_); }
  std::size_t size() const override { return 0; }
  Kind child_kind(const std::string& key) const override { return kind_of(cur_->find(key)); }
  Kind item_kind(std::size_t) const override { return Kind::kAbsent; }
  void enter(const std::string& key) override {
    YamlValue* next = cur_->find(key);
    cur_ = next ? next : &cur_->set(key, YamlValue::mapping(YamlValue::Style::kBlock));
  }
  void enter(std::size_t) override {}
  void assign(const std::string& key) override { cur_->set(key, value_); }
  void assign(std::size_t) override {}
  bool value_is_collection() const override { return false; }

 private:
  static Kind kind_of(const YamlValue* v) {
    if (!v) return Kind::kAbsent;
    return v->is_mapping() ? Kind::kMapping : Kind::kScalar;
  }
  YamlValue* cur_;
  YamlValue value_;
};

std::vector<std::string> split_dots(const std::string& dotted) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (;;) {
    const std::size_t dot = dotted.find('.', start);
    parts.push_back(dotted.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) return parts;
    start = dot + 1;
  }
}

}  // namespace

void set_scalar(YamlValue& root, const std::string& dotted, std::string value, std::string origin) {
  YamlValue* cur = &root;
  const std::vector<std::string> parts = split_dots(dotted);
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    YamlValue* next = cur->find(parts[i]);
    cur = next ? next : &cur->set(parts[i], YamlValue::mapping(YamlValue::Style::kBlock));
  }
  cur->set(parts.back(), YamlValue::str(value).origin(std::move(origin)));
}

const YamlValue* find_scalar(const YamlValue& root, const std::string& dotted) {
  const YamlValue* cur = &root;
  for (const std::string& part : split_dots(dotted)) {
    if (!cur->is_mapping()) return nullptr;
    cur = cur->find(part);
    if (!cur) return nullptr;
  }
  return cur->kind() == YamlValue::Kind::kScalar ? cur : nullptr;
}

Status apply_import_set(YamlValue& root, const std::string& set) {
  Result<SetArgument> parsed =
      parse_set(set, "for example --set scheduler.max_num_batched_tokens=4096 or --set model.preset=tiny");
  if (!parsed) return parsed.error();
  const SetArgument& a = parsed.value();
  if (a.parts[0] == "requests" || a.parts[0] == "requests_file")
    return set_error(a, 1, a.parts[0] + ": the imported requests cannot be changed with --set",
                     "import picks the requests: use --limit, or edit the written files");
  DocumentSetTarget target(root, YamlValue::str(a.value).origin(a.label));
  Result<std::string> key_path = apply_set(target, a);
  if (!key_path) return key_path.error();
  return Status::Ok();
}

}  // namespace mlasim
