// The fuzz campaign's JSON report, read back and merged (fuzz_report.h).
#include "tools/fuzz/fuzz_report.h"

#include <fmt/format.h>


#include "base/formats/json_writer.h"
#include "base/json_document.h"

namespace mlasim {
namespace {

constexpr const char* kHint = "mlasim merge reads the reports `mlasim fuzz --shard I/N --json FILE` wrote, unchanged";

Error report_error(const std::string& file, int line, int column, const std::string& key, const std::string& message,
                   const std::string& hint = kHint) {
  return merge_error(file, line, column, key, message, hint);
}

class Reader {
 public:
  explicit Reader(const ReportFile& f) : f_(f) {}

  const JsonNode* get(const JsonNode& n, const std::string& parent, const char* key, JsonNode::Kind kind,
                      const char* want, bool nullable = false) {
    if (error_) return nullptr;
    const JsonNode* m = n.find(key);
    const std::string path = json_join_key(parent, key);
    if (!m) {
      fail(n, path, "missing");
      return nullptr;
    }
    if (nullable && m->is_null()) return nullptr;
    if (m->kind != kind || (kind == JsonNode::Kind::kNumber && !m->is_integer())) {
      fail(*m, path, json_kind_name(*m) + ", want " + want);
      return nullptr;
    }
    return m;
  }
  std::string text(const JsonNode& n, const std::string& parent, const char* key) {
    const JsonNode* m = get(n, parent, key, JsonNode::Kind::kString, "a string");
    return m ? m->text : "";
  }
  std::optional<int> integer(const JsonNode& n, const std::string& parent, const char* key, bool nullable = false) {
    const JsonNode* m = get(n, parent, key, JsonNode::Kind::kNumber, "a whole number", nullable);
    if (!m) return std::nullopt;
    if (m->text.size() > 10 || std::stoll(m->text) > 2147483647LL || std::stoll(m->text) < -1) {
      fail(*m, json_join_key(parent, key), m->text + " is out of range");
      return std::nullopt;
    }
    return static_cast<int>(std::stoll(m->text));
  }
  void fail(const JsonNode& n, const std::string& key, const std::string& message) {
    if (!error_) error_ = report_error(f_.path, n.line, n.column, key, message);
  }
  const std::optional<Error>& error() const { return error_; }

 private:
  const ReportFile& f_;
  std::optional<Error> error_;
};

// How many of the runs r < below with r % count == index the shard has.
long long runs_below(int index, int count, long long below) {
  return below > index ? (below - index + count - 1) / count : 0;
}

}  // namespace

std::string fuzz_report_json(const FuzzReport& r) {
  JsonWriter w;
  w.begin_object();
  w.key("format").value("mlasim-fuzz");
  w.key("version").value(1);
  w.key("campaign").value(r.campaign);
  w.key("runs_asked");
  if (r.runs_asked) w.value(*r.runs_asked);
  else w.null();
  if (r.shard) {
    w.key("shard").begin_object();
    w.key("index").value(r.shard->index);
    w.key("count").value(r.shard->count);
    w.end_object();
  }
  w.key("runs").value(r.runs);
  w.key("violation");
  if (!r.violation) {
    w.null();
  } else {
    const FuzzReport::Found& v = *r.violation;
    w.begin_object();
    w.key("run").value(v.run);
    w.key("trace").value(v.trace);
    w.key("batch").value(v.batch);
    w.key("property").value(v.property);
    w.key("step").value(v.step);
    w.key("detail").value(v.detail);
    w.key("finding");
    if (v.finding) w.value(*v.finding);
    else w.null();
    w.end_object();
  }
  w.end_object();
  return w.str();
}

Result<FuzzReport> read_fuzz_report(const ReportFile& f) {
  Result<JsonDocument> doc = parse_json_document(f.text, f.path);
  if (!doc) return doc.error();
  const JsonNode& root = doc.value().root;
  if (!root.is_object()) return report_error(f.path, root.line, root.column, "", json_kind_name(root) + ", want an object");
  Reader r(f);
  FuzzReport out;
  if (r.text(root, "", "format") != "mlasim-fuzz" && !r.error())
    r.fail(*root.find("format"), "format", "\"" + root.find("format")->text + "\", want \"mlasim-fuzz\"");
  if (std::optional<int> v = r.integer(root, "", "version"); v && *v != 1)
    r.fail(*root.find("version"), "version", fmt::format("{}, this mlasim reads 1", *v));
  out.campaign = r.text(root, "", "campaign");
  out.runs_asked = r.integer(root, "", "runs_asked", /*nullable=*/true);
  if (const JsonNode* s = root.find("shard")) {
    if (!s->is_object()) r.fail(*s, "shard", json_kind_name(*s) + ", want an object");
    const std::optional<int> index = r.integer(*s, "shard", "index"), count = r.integer(*s, "shard", "count");
    if (index && count && (*count < 1 || *index < 0 || *index >= *count))
      r.fail(*s, "shard", fmt::format("index {} of count {}", *index, *count));
    if (index && count) out.shard = FuzzReport::ShardPart{*index, *count};
  }
  out.runs = r.integer(root, "", "runs").value_or(0);
  if (const JsonNode* v = r.get(root, "", "violation", JsonNode::Kind::kObject, "an object or null", true)) {
    FuzzReport::Found found;
    found.run = r.integer(*v, "violation", "run").value_or(0);
    found.trace = r.text(*v, "violation", "trace");
    found.batch = r.text(*v, "violation", "batch");
    found.property = r.text(*v, "violation", "property");
    found.step = r.integer(*v, "violation", "step").value_or(-1);
    found.detail = r.text(*v, "violation", "detail");
    if (const JsonNode* p = r.get(*v, "violation", "finding", JsonNode::Kind::kString, "a string or null", true))
      found.finding = p->text;
    out.violation = std::move(found);
  }
  if (r.error()) return *r.error();
  return out;
}

Result<std::string> merge_fuzz_reports(const std::vector<ReportFile>& files) {
  std::vector<FuzzReport> reports;
  std::vector<ShardPlace> places;
  for (std::size_t i = 0; i < files.size(); ++i) {
    Result<FuzzReport> r = read_fuzz_report(files[i]);
    if (!r) return r.error();
    const FuzzReport& rep = r.value();
    if (!rep.shard)
      return report_error(files[i].path, 0, 0, "shard", "not a shard's report (an unsharded campaign's is already whole)",
                          "merge the reports of `mlasim fuzz --shard I/N --json FILE` for I = 0..N-1");
    if (!reports.empty() && rep.campaign != reports[0].campaign)
      return report_error(files[i].path, 0, 0, "campaign",
                          fmt::format("shard {}/{} of \"{}\", but {} is a shard of \"{}\"", rep.shard->index,
                                      rep.shard->count, rep.campaign, files[0].path, reports[0].campaign),
                          "merge the shards of one campaign: the same flags");
    places.push_back(ShardPlace{rep.shard->index, rep.shard->count, 0});
    reports.push_back(r.value());
  }
  if (Status st = check_shards_whole(files, places, "runs"); !st) return st.error();
  const int count = reports[0].shard->count;
  // The lowest violating run of all shards is the campaign's once every lower run has passed.
  const FuzzReport* lowest = nullptr;
  for (const FuzzReport& r : reports)
    if (r.violation && (!lowest || r.violation->run < lowest->violation->run)) lowest = &r;
  FuzzReport merged = reports[0];
  merged.shard.reset();
  merged.violation.reset();
  if (lowest) {
    const int below = lowest->violation->run;
    for (std::size_t i = 0; i < reports.size(); ++i) {
      const FuzzReport& r = reports[i];
      const long long need = runs_below(r.shard->index, count, below);
      if (r.runs < need)
        return report_error(files[i].path, 0, 0, "runs",
                            fmt::format("shard {}/{} replayed {} runs, not all {} of its runs below run {} (a "
                                        "violation there would come first)",
                                        r.shard->index, count, r.runs, need, below),
                            "give that shard more --time, or --runs alone");
    }
    merged.runs = below + 1;
    merged.violation = lowest->violation;
  } else {
    // No violation in the runs replayed: all of them, or (--time) as many as each shard fit.
    merged.runs = 0;
    for (const FuzzReport& r : reports) merged.runs += r.runs;
  }
  return fuzz_report_json(merged);
}

}  // namespace mlasim
