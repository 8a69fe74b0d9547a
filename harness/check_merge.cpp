// Joining `mlasim check` shard reports (check_merge.h).
#include "harness/check_merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "base/json_document.h"
#include "harness/check_runner.h"

namespace mlasim {
namespace {

Error node_error(const ReportFile& f, const JsonNode& n, const std::string& key, const std::string& message) {
  return merge_error(f.path, n.line, n.column, key, message,
                     "mlasim merge reads the reports `mlasim check --shard I/N --json FILE` wrote, unchanged");
}

// Member `key` of object `n` of kind `kind`, or the error naming it.
Result<const JsonNode*> member(const ReportFile& f, const JsonNode& n, const std::string& parent, const char* key,
                               JsonNode::Kind kind, const char* want) {
  const JsonNode* m = n.find(key);
  const std::string path = json_join_key(parent, key);
  if (!m) return node_error(f, n, path, "missing");
  if (m->kind != kind || (kind == JsonNode::Kind::kNumber && !m->is_integer()))
    return node_error(f, *m, path, json_kind_name(*m) + ", want " + want);
  return m;
}

Result<long long> integer(const ReportFile& f, const JsonNode& n, const std::string& parent, const char* key) {
  Result<const JsonNode*> m = member(f, n, parent, key, JsonNode::Kind::kNumber, "a whole number");
  if (!m) return m.error();
  const std::string& t = m.value()->text;
  if (t.size() > 12 || t[0] == '-') return node_error(f, *m.value(), json_join_key(parent, key), t + " is out of range");
  return std::stoll(t);
}

Result<ShardPlace> read_shard(const ReportFile& f, const JsonNode& root) {
  const JsonNode* s = root.find("shard");
  if (!s)
    return merge_error(f.path, root.line, root.column, "shard",
                       "not a shard's report (an unsharded run's report is already whole)",
                       "merge the reports of `mlasim check --shard I/N` (or --shard auto) for I = 0..N-1");
  if (!s->is_object()) return node_error(f, *s, "shard", json_kind_name(*s) + ", want an object");
  Result<long long> index = integer(f, *s, "shard", "index"), count = integer(f, *s, "shard", "count"),
                    scenarios = integer(f, *s, "shard", "num_scenarios");
  for (const auto* r : {&index, &count, &scenarios})
    if (!*r) return r->error();
  if (count.value() < 1 || index.value() >= count.value())
    return node_error(f, *s, "shard", fmt::format("index {} of count {}", index.value(), count.value()));
  return ShardPlace{index.value(), count.value(), scenarios.value()};
}

Result<ScenarioCheck> read_scenario(const ReportFile& f, const JsonNode& n, const std::string& key) {
  if (!n.is_object()) return node_error(f, n, key, json_kind_name(n) + ", want an object");
  ScenarioCheck c;
  for (auto [field, out] : {std::pair<const char*, std::string*>{"name", &c.name}, {"path", &c.path}}) {
    Result<const JsonNode*> m = member(f, n, key, field, JsonNode::Kind::kString, "a string");
    if (!m) return m.error();
    *out = m.value()->text;
  }
  Result<const JsonNode*> status = member(f, n, key, "status", JsonNode::Kind::kString, "a string");
  if (!status) return status.error();
  const std::string& st = status.value()->text;
  if (st != "pass" && st != "fail" && st != "error")
    return node_error(f, *status.value(), json_join_key(key, "status"), "\"" + st + "\", want pass, fail or error");
  c.status = st == "pass" ? CheckStatus::kPass : st == "fail" ? CheckStatus::kFail : CheckStatus::kBadInput;
  Result<long long> checks = integer(f, n, key, "num_checks");
  if (!checks) return checks.error();
  c.num_checks = static_cast<int>(checks.value());
  Result<const JsonNode*> messages = member(f, n, key, "messages", JsonNode::Kind::kArray, "a list");
  if (!messages) return messages.error();
  for (std::size_t i = 0; i < messages.value()->items.size(); ++i) {
    const JsonNode& m = messages.value()->items[i];
    if (!m.is_string())
      return node_error(f, m, json_index_key(json_join_key(key, "messages"), i), json_kind_name(m) + ", want a string");
    c.messages.push_back(m.text);
  }
  if (c.status != CheckStatus::kPass && c.messages.empty())
    return node_error(f, *messages.value(), json_join_key(key, "messages"), "empty for a scenario that did not pass");
  return c;
}

// Scenarios in the order one run lists them (check sorts its files by path), each once.
Status sort_whole(std::vector<std::pair<ScenarioCheck, std::size_t>>& all, const std::vector<ReportFile>& files,
                  long long num_scenarios) {
  std::stable_sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.first.path < b.first.path; });
  for (std::size_t i = 1; i < all.size(); ++i)
    if (all[i].first.path == all[i - 1].first.path)
      return merge_error(files[all[i].second].path, 0, 0, "", "scenario " + all[i].first.path + " is also in " +
                                                                   files[all[i - 1].second].path,
                         "merge the shards of one campaign");
  if (static_cast<long long>(all.size()) != num_scenarios)
    return merge_error("<command line>", 0, 0, "",
                       fmt::format("the shards hold {} scenarios, their reports say {}", all.size(), num_scenarios), "");
  return Status::Ok();
}

}  // namespace

Error merge_error(const std::string& file, int line, int column, const std::string& key, const std::string& message,
                  const std::string& hint) {
  Error e;
  e.file = file;
  e.line = line;
  e.column = column;
  e.key_path = key;
  e.message = message;
  e.hint = hint;
  return e;
}

Status check_shards_whole(const std::vector<ReportFile>& files, const std::vector<ShardPlace>& places,
                          const char* whole_name) {
  if (places.empty()) return merge_error("<command line>", 0, 0, "", "no reports to merge", "name the shards' reports");
  std::map<long long, std::size_t> seen;
  const ShardPlace& first = places[0];
  for (std::size_t i = 0; i < places.size(); ++i) {
    const ShardPlace& s = places[i];
    if (s.count != first.count || s.whole != first.whole)
      return merge_error(files[i].path, 0, 0, "shard",
                         fmt::format("shard {}/{} of {} {}, but {} is shard {}/{} of {}", s.index, s.count, s.whole,
                                     whole_name, files[0].path, first.index, first.count, first.whole),
                         "merge the shards of one campaign: the same inputs, the same N");
    if (auto [it, fresh] = seen.emplace(s.index, i); !fresh)
      return merge_error(files[i].path, 0, 0, "shard",
                         fmt::format("shard {}/{} again (also {})", s.index, s.count, files[it->second].path),
                         "name each shard's report once");
  }
  for (long long i = 0; i < first.count; ++i)
    if (!seen.count(i))
      return merge_error("<command line>", 0, 0, "", fmt::format("shard {}/{} is missing", i, first.count),
                         fmt::format("merge all {} shards' reports", first.count));
  return Status::Ok();
}

std::string report_kind(const std::string& text) {
  const std::size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string::npos) return "";
  if (text.compare(start, 5, "<?xml") == 0 && text.find("<testsuite name=\"mlasim check\"") != std::string::npos)
    return "check-junit";
  if (text[start] != '{') return "";
  const std::size_t format = text.find("\"format\"");
  if (format == std::string::npos) return "";
  const std::size_t value = text.find('"', text.find(':', format));
  if (text.compare(value, 14, "\"mlasim-check\"") == 0) return "check-json";
  if (text.compare(value, 13, "\"mlasim-fuzz\"") == 0) return "fuzz-json";
  if (text.compare(value, 15, "\"mlasim-matrix\"") == 0) return "matrix-json";
  return "";
}

Result<std::string> merge_check_json(const std::vector<ReportFile>& files) {
  std::vector<ShardPlace> shards;
  std::vector<std::pair<ScenarioCheck, std::size_t>> all;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const ReportFile& f = files[i];
    Result<JsonDocument> doc = parse_json_document(f.text, f.path);
    if (!doc) return doc.error();
    const JsonNode& root = doc.value().root;
    if (!root.is_object()) return node_error(f, root, "", json_kind_name(root) + ", want a check report's object");
    Result<const JsonNode*> format = member(f, root, "", "format", JsonNode::Kind::kString, "a string");
    if (!format) return format.error();
    if (format.value()->text != "mlasim-check")
      return node_error(f, *format.value(), "format", "\"" + format.value()->text + "\", want \"mlasim-check\"");
    Result<long long> version = integer(f, root, "", "version");
    if (!version) return version.error();
    if (version.value() != 1)
      return node_error(f, *root.find("version"), "version", fmt::format("{}, this mlasim reads 1", version.value()));
    Result<ShardPlace> shard = read_shard(f, root);
    if (!shard) return shard.error();
    shards.push_back(shard.value());
    Result<const JsonNode*> scenarios = member(f, root, "", "scenarios", JsonNode::Kind::kArray, "a list");
    if (!scenarios) return scenarios.error();
    long long passed = 0;
    for (std::size_t k = 0; k < scenarios.value()->items.size(); ++k) {
      Result<ScenarioCheck> c = read_scenario(f, scenarios.value()->items[k], json_index_key("scenarios", k));
      if (!c) return c.error();
      passed += c.value().status == CheckStatus::kPass;
      all.emplace_back(std::move(c.value()), i);
    }
    Result<long long> p = integer(f, root, "", "passed"), failed = integer(f, root, "", "failed");
    if (!p) return p.error();
    if (!failed) return failed.error();
    if (p.value() != passed || failed.value() != static_cast<long long>(scenarios.value()->items.size()) - passed)
      return node_error(f, root, "passed",
                        fmt::format("passed {} and failed {} disagree with the {} scenarios listed ({} passed)",
                                    p.value(), failed.value(), scenarios.value()->items.size(), passed));
  }
  if (Status st = check_shards_whole(files, shards, "scenarios"); !st) return st.error();
  if (Status st = sort_whole(all, files, shards[0].whole); !st) return st.error();
  std::vector<ScenarioCheck> checks;
  for (auto& [c, file] : all) checks.push_back(std::move(c));
  return check_reports_json(checks);
}

}  // namespace mlasim
