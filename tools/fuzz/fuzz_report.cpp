// The fuzz campaign's JSON report, read back and merged (fuzz_report.h).
#include "tools/fuzz/fuzz_report.h"

#include <fmt/format.h>


#include "base/formats/json_writer.h"
#include "base/json_document.h"
#include "scenario/json_field_reader.h"

namespace mlasim {
namespace {

constexpr const char* kHint = "mlasim merge reads the reports `mlasim fuzz --shard I/N --json FILE` wrote, unchanged";

Error report_error(const std::string& file, int line, int column, const std::string& key, const std::string& message,
                   const std::string& hint = kHint) {
  return merge_error(file, line, column, key, message, hint);
}

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
  const JsonFieldReader r(f.path);
  FuzzReport out;
  try {
    Result<ShardPlace> place = read_report_head(r, root, "mlasim-fuzz", nullptr);
    if (place) out.shard = FuzzReport::ShardPart{static_cast<int>(place.value().index), static_cast<int>(place.value().count)};
    out.campaign = r.read_string(r.required(root, "campaign", ""), "campaign");
    if (const JsonNode& asked = r.required(root, "runs_asked", ""); !asked.is_null())
      out.runs_asked = r.read_int(asked, "runs_asked", 0);
    out.runs = r.read_int(r.required(root, "runs", ""), "runs", 0);
    if (const JsonNode& v = r.required(root, "violation", ""); !v.is_null()) {
      FuzzReport::Found found;
      auto text = [&](const char* key) { return r.read_string(r.required(v, key, "violation"), json_join_key("violation", key)); };
      found.run = r.read_int(r.required(v, "run", "violation"), "violation.run", 0);
      found.trace = text("trace");
      found.batch = text("batch");
      found.property = text("property");
      found.step = r.read_int(r.required(v, "step", "violation"), "violation.step", -1);
      found.detail = text("detail");
      if (const JsonNode& p = r.required(v, "finding", "violation"); !p.is_null())
        found.finding = r.read_string(p, "violation.finding");
      out.violation = std::move(found);
    }
  } catch (LoadError& e) {
    e.error.hint = kHint;
    return e.error;
  }
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
