// Joining `mlasim check` shard reports (check_merge.h).
#include "harness/check_merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "base/json_document.h"
#include "harness/check_runner.h"
#include "scenario/json_field_reader.h"

namespace mlasim {
namespace {

constexpr const char* kHint = "mlasim merge reads the reports `mlasim check --shard I/N --json FILE` wrote, unchanged";

ScenarioCheck read_scenario(const JsonFieldReader& r, const JsonNode& n, const std::string& key) {
  ScenarioCheck c;
  c.name = r.read_string(r.required(n, "name", key), json_join_key(key, "name"));
  c.path = r.read_string(r.required(n, "path", key), json_join_key(key, "path"));
  const JsonNode& status = r.required(n, "status", key);
  const std::string st = r.read_string(status, json_join_key(key, "status"));
  if (st != "pass" && st != "fail" && st != "error")
    r.fail(status, json_join_key(key, "status"), "\"" + st + "\", want pass, fail or error", kHint);
  c.status = st == "pass" ? CheckStatus::kPass : st == "fail" ? CheckStatus::kFail : CheckStatus::kBadInput;
  c.num_checks = r.read_int(r.required(n, "num_checks", key), json_join_key(key, "num_checks"), 0);
  const std::string messages_key = json_join_key(key, "messages");
  const JsonNode& messages = r.required(n, "messages", key);
  r.expect_list(messages, messages_key);
  for (std::size_t i = 0; i < messages.items.size(); ++i)
    c.messages.push_back(r.read_string(messages.items[i], json_index_key(messages_key, i)));
  if (c.status != CheckStatus::kPass && c.messages.empty())
    r.fail(messages, messages_key, "empty for a scenario that did not pass", kHint);
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
  return Error{file, line, column, key, message, hint};
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

Result<ShardPlace> read_report_head(const JsonFieldReader& r, const JsonNode& root, const char* format,
                                    const char* whole_key) {
  const JsonNode& f = r.required(root, "format", "");
  if (r.read_string(f, "format") != format)
    r.fail(f, "format", "\"" + f.text + "\", want \"" + format + "\"", "");
  const JsonNode& version = r.required(root, "version", "");
  if (r.read_integer(version, "version", 0, 1LL << 31) != 1)
    r.fail(version, "version", version.text + ", this mlasim reads 1", "");
  const JsonNode* shard = root.find("shard");
  if (!shard)
    return merge_error(r.file(), root.line, root.column, "shard",
                       "not a shard's report (an unsharded run's report is already whole)",
                       "merge the reports each shard I = 0..N-1 of one --shard I/N campaign wrote");
  ShardPlace place;
  place.index = r.read_integer(r.required(*shard, "index", "shard"), "shard.index", 0, 1LL << 31);
  place.count = r.read_integer(r.required(*shard, "count", "shard"), "shard.count", 1, 1LL << 31);
  if (whole_key)
    place.whole = r.read_integer(r.required(*shard, whole_key, "shard"), json_join_key("shard", whole_key), 0, 1LL << 40);
  if (place.index >= place.count) r.fail(*shard, "shard", fmt::format("index {} of count {}", place.index, place.count), "");
  return place;
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
    const JsonFieldReader r(f.path);
    try {
      Result<ShardPlace> shard = read_report_head(r, root, "mlasim-check", "num_scenarios");
      if (!shard) return shard.error();
      shards.push_back(shard.value());
      const JsonNode& scenarios = r.required(root, "scenarios", "");
      r.expect_list(scenarios, "scenarios");
      long long passed = 0;
      for (std::size_t k = 0; k < scenarios.items.size(); ++k) {
        ScenarioCheck c = read_scenario(r, scenarios.items[k], json_index_key("scenarios", k));
        passed += c.status == CheckStatus::kPass;
        all.emplace_back(std::move(c), i);
      }
      const long long p = r.read_integer(r.required(root, "passed", ""), "passed", 0, 1LL << 40),
                      failed = r.read_integer(r.required(root, "failed", ""), "failed", 0, 1LL << 40);
      if (p != passed || failed != static_cast<long long>(scenarios.items.size()) - passed)
        r.fail(root, "passed",
               fmt::format("passed {} and failed {} disagree with the {} scenarios listed ({} passed)", p, failed,
                           scenarios.items.size(), passed),
               kHint);
    } catch (LoadError& e) {
      e.error.hint = kHint;
      return e.error;
    }
  }
  if (Status st = check_shards_whole(files, shards, "scenarios"); !st) return st.error();
  if (Status st = sort_whole(all, files, shards[0].whole); !st) return st.error();
  std::vector<ScenarioCheck> checks;
  for (auto& [c, file] : all) checks.push_back(std::move(c));
  return check_reports_json(checks);
}

}  // namespace mlasim
