// Writing the HTML check report.
#include "harness/check_report_html.h"

#include <fmt/format.h>

#include <algorithm>

#include "output/xml_text.h"

namespace mlasim {
namespace {

constexpr const char* kStyle = R"(<style>
body{font-family:DejaVu Sans,Helvetica,Arial,sans-serif;font-size:14px;color:#222;margin:24px;max-width:1400px}
h1{font-size:20px;margin:0 0 4px}
.summary{font-size:16px;font-weight:bold}
.summary.ok{color:#2a7a2a}.summary.bad{color:#b3261e}
table{border-collapse:collapse}
#scenarios td,#scenarios th{padding:3px 10px;border-bottom:1px solid #e4e4e4;text-align:left}
#scenarios td.num{text-align:right}
.status-pass{color:#2a7a2a}.status-fail,.status-error{color:#b3261e;font-weight:bold}
section.scenario{margin:10px 0;border:1px solid #ddd;border-radius:4px;padding:4px 10px}
section.scenario.fail,section.scenario.error{border-color:#e0a5a0;background:#fffafa}
summary{cursor:pointer;font-weight:bold;padding:4px 0}
pre{white-space:pre-wrap;margin:2px 0;font-size:12.5px}
.messages li{margin:4px 0}
.split-diff table td,.split-diff table th,.logits table td,.logits table th{border:1px solid #ddd;padding:3px 8px;
  vertical-align:top;font-family:DejaVu Sans Mono,monospace;font-size:12.5px;text-align:left}
.split-diff td.differs{background:#fde2e1}
.logits td.fail{background:#fde2e1}
.timeline{overflow-x:auto;margin-top:8px}
h3{font-size:14px;margin:12px 0 4px}
</style>)";

const char* status_word(CheckStatus s) {
  return s == CheckStatus::kPass ? "pass" : s == CheckStatus::kFail ? "fail" : "error";
}

std::string anchor(std::size_t i) { return fmt::format("scenario-{}", i); }

std::vector<std::string> split_fields(const std::string& line) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (;;) {
    const std::size_t bar = line.find(" | ", start);
    out.push_back(line.substr(start, bar == std::string::npos ? std::string::npos : bar - start));
    if (bar == std::string::npos) return out;
    start = bar + 3;
  }
}

std::string split_section(const GoldenComparison& g) {
  if (g.match || g.line == 0) return "";
  const std::vector<std::string> e = split_fields(g.expected), a = split_fields(g.actual);
  static const char* kFields[] = {"step", "split", "rows in batch order", "preempted", "finished"};
  std::string out = "<div class=\"split-diff\">";
  out += fmt::format("<h3>First differing step: <code>{}</code> line {}{}</h3>", xml_escape(g.golden_path), g.line,
                     g.stale ? " (the scenario changed since the golden was written)" : "");
  out += "<table><thead><tr><th>field</th><th>expected (golden)</th><th>got</th></tr></thead><tbody>";
  for (std::size_t i = 0; i < std::max(e.size(), a.size()); ++i) {
    const std::string* x = i < e.size() ? &e[i] : nullptr;
    const std::string* y = i < a.size() ? &a[i] : nullptr;
    const bool same = x && y && *x == *y;
    out += fmt::format("<tr class=\"{}\"><th>{}</th><td class=\"{}\">{}</td><td class=\"{}\">{}</td></tr>",
                       same ? "same" : "differs", i < 5 ? kFields[i] : "", same ? "" : "differs",
                       x ? xml_escape(*x) : "", same ? "" : "differs", y ? xml_escape(*y) : "");
  }
  out += "</tbody></table></div>";
  return out;
}

std::string logits_section(const LogitsCheck& l) {
  if (!l.compared) return "";
  const LogitsComparison& c = l.comparison;
  const LogitsTolerance& t = l.tolerance;
  std::string out = fmt::format("<div class=\"logits {}\"><h3>Logits against the golden ({} class): {}</h3>",
                                l.pass ? "pass" : "fail", xml_escape(t.name), l.pass ? "match" : "DIFFER");
  if (!c.shape_error.empty())
    return out + fmt::format("<p>shape differs: {}</p></div>", xml_escape(c.shape_error));
  out += "<table><tbody>";
  auto row = [&](const char* what, const std::string& value, const std::string& where, bool bad) {
    out += fmt::format("<tr><th>{}</th><td class=\"{}\">{}</td><td>{}</td></tr>", what, bad ? "fail" : "",
                       xml_escape(value), xml_escape(where));
  };
  row("max abs", fmt::format("{:.3e} (tol {:.0e})", c.max_abs, t.abs_tol), l.max_abs_at, false);
  row("max rel", fmt::format("{:.3e} (tol {:.2e})", c.max_rel, t.rel_tol), l.max_rel_at, false);
  row("elements outside", fmt::format("{} of {}", c.num_failing, c.rows * c.cols), "", c.num_failing > 0);
  row("cos diff", fmt::format("{:.3e} (tol {:.0e})", c.cos_diff, t.cos_tol), "", c.cos_diff > t.cos_tol);
  row("NaN/inf mismatches", std::to_string(c.num_nonfinite_mismatches), "", c.num_nonfinite_mismatches > 0);
  row("top-1 mismatches", fmt::format("{} of {} rows", c.top1_mismatches, c.rows),
      l.first_top1_mismatch_at.empty() ? "" : "first at " + l.first_top1_mismatch_at, c.top1_mismatches > 0);
  out += "</tbody></table></div>";
  return out;
}

}  // namespace

std::string check_report_html(const std::vector<ScenarioCheck>& checks, const std::string& summary) {
  const bool ok = std::all_of(checks.begin(), checks.end(), [](const ScenarioCheck& c) {
    return c.status == CheckStatus::kPass;
  });
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  out += fmt::format("<title>mlasim check: {}</title>", xml_escape(summary));
  out += kStyle;
  out += "</head><body>\n<h1>mlasim check</h1>\n";
  out += fmt::format("<p id=\"summary\" class=\"summary {}\">{}</p>\n", ok ? "ok" : "bad", xml_escape(summary));
  out += "<table id=\"scenarios\"><thead><tr><th>scenario</th><th>status</th><th>checks</th><th>seconds</th>"
         "<th>file</th></tr></thead><tbody>\n";
  for (std::size_t i = 0; i < checks.size(); ++i) {
    const ScenarioCheck& c = checks[i];
    out += fmt::format(
        "<tr class=\"scenario-row {0}\"><td><a href=\"#{1}\">{2}</a></td><td class=\"status-{0}\">{3}</td>"
        "<td class=\"num\">{4}</td><td class=\"num\">{5:.2f}</td><td>{6}</td></tr>\n",
        status_word(c.status), anchor(i), xml_escape(c.name),
        c.status == CheckStatus::kPass ? "PASS" : c.status == CheckStatus::kFail ? "FAIL" : "ERROR", c.num_checks,
        c.seconds, xml_escape(c.path));
  }
  out += "</tbody></table>\n";
  // The sections: the ones that did not pass first (open), then the passing ones (folded).
  std::vector<std::size_t> order(checks.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_partition(order.begin(), order.end(), [&](std::size_t i) { return checks[i].status != CheckStatus::kPass; });
  for (std::size_t i : order) {
    const ScenarioCheck& c = checks[i];
    const bool pass = c.status == CheckStatus::kPass;
    out += fmt::format("<section class=\"scenario {}\" id=\"{}\"><details{}><summary>", status_word(c.status),
                       anchor(i), pass ? "" : " open");
    if (pass)
      out += fmt::format("PASS {} ({} checks)", xml_escape(c.name), c.num_checks);
    else if (c.status == CheckStatus::kFail)
      out += fmt::format("FAIL {} ({} of {} checks failed)", xml_escape(c.name), c.messages.size(), c.num_checks);
    else
      out += fmt::format("ERROR {} (bad input)", xml_escape(c.name));
    out += fmt::format("</summary><p>{}</p>", xml_escape(c.path));
    if (!c.messages.empty()) {
      out += "<ul class=\"messages\">";
      for (const std::string& m : c.messages) out += "<li><pre>" + xml_escape(m) + "</pre></li>";
      out += "</ul>";
    }
    out += split_section(c.split);
    if (!pass || !c.logits.pass) out += logits_section(c.logits);
    if (!c.timeline_svg.empty()) out += "<h3>Timeline</h3><div class=\"timeline\">" + c.timeline_svg + "</div>";
    out += "</details></section>\n";
  }
  out += "</body></html>\n";
  return out;
}

}  // namespace mlasim
