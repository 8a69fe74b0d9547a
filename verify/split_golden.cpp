// The canonical split printer and the golden comparison.
#include "base/file_read.h"
#include "verify/split_golden.h"

#include <fmt/format.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <vector>

#include "config/request_tokens.h"
#include "config/seeded_tokens.h"
#include "output/scenario_printer.h"

namespace mlasim {
namespace {

std::string joined(const std::vector<int>& requests, const RequestNames& names) {
  std::string out;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (i) out += ',';
    out += names[requests[i]];
  }
  return out.empty() ? "-" : out;
}

std::string ints(const std::vector<int>& v) {
  std::string out;
  for (int x : v) out += std::to_string(x) + ",";
  return out;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

std::string header_value(const std::vector<std::string>& lines, const std::string& key) {
  const std::string prefix = "# " + key + ": ";
  for (const auto& l : lines)
    if (l.rfind(prefix, 0) == 0) return l.substr(prefix.size());
  return "";
}

// FNV-1a over a file's bytes, read in pieces ("unreadable" if it cannot be read).
std::string file_fingerprint(const std::string& path) {
  if (!check_regular_input(path, "the file")) return "unreadable";
  std::ifstream in(path, std::ios::binary);
  if (!in) return "unreadable";
  std::uint64_t h = 0xcbf29ce484222325ULL;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    for (std::streamsize i = 0; i < in.gcount(); ++i) {
      h ^= static_cast<unsigned char>(buf[i]);
      h *= 0x100000001b3ULL;
    }
  }
  return fmt::format("{:016x}", h);
}

}  // namespace

std::string scenario_fingerprint(const Scenario& s) {
  std::string canon = describe_scenario(s);
  for (const RequestSpec& spec : s.requests) {
    const RequestSpec r = resolved_request(spec, s);  // by token ids, however the file gives them
    canon += fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", r.id, r.arrival_step, ints(r.prompt), r.max_tokens,
                         r.min_tokens, r.ignore_eos, ints(r.stop_token_ids), ints(r.output), r.priority,
                         ints(r.accepted_drafts));
    if (r.arrival_time_ns) canon += fmt::format("|t={}", *r.arrival_time_ns);
    canon += "\n";
  }
  // The clock decides when timed requests are admitted.
  if (s.timed_arrivals)
    canon += fmt::format("timing {} {} {} {}\n", s.timing.fixed_us, s.timing.per_scheduled_token_us,
                         s.timing.per_context_token_us, s.timing.per_request_us);
  // describe_scenario names the source file and the requests file; the fingerprint must not depend
  // on where they live, but on the requests file's bytes.
  const std::string src = "(" + s.source + ")";
  if (auto pos = canon.find(src); pos != std::string::npos) canon.erase(pos, src.size());
  // Nor on the description (its own line after the first) or the expect block (the last line).
  if (!s.description.empty()) {
    const std::string line = "  " + s.description + "\n";
    if (auto pos = canon.find(line); pos != std::string::npos) canon.erase(pos, line.size());
  }
  if (auto pos = canon.rfind("\nexpect: "); pos != std::string::npos) canon.erase(pos + 1, canon.find('\n', pos + 1) - pos);
  if (!s.requests_file.empty()) {
    if (auto pos = canon.find(s.requests_file); pos != std::string::npos) canon.erase(pos, s.requests_file.size());
    canon += "requests_file " + file_fingerprint(s.requests_file) + "\n";
  }
  // Nor on how the deployment was resolved (auto or given, the GPU): only on what the replay runs
  // with, which the scheduler and engine lines hold.
  if (auto pos = canon.find("\ndeployment: "); pos != std::string::npos) canon.erase(pos + 1, canon.find('\n', pos + 1) - pos);
  for (const std::string marker : {" (auto)", " (default)"})
    for (auto pos = canon.find(marker); pos != std::string::npos; pos = canon.find(marker)) canon.erase(pos, marker.size());
  // The same for the model's config.json: its bytes, not its path.
  if (!s.model.hf_config.empty()) {
    if (auto pos = canon.find(s.model.hf_config); pos != std::string::npos) canon.erase(pos, s.model.hf_config.size());
    canon += "hf_config " + file_fingerprint(s.model.hf_config) + "\n";
  }
  return fmt::format("{:016x}", stable_hash(canon));
}

std::string format_split_counts(const SplitCounts& counts) {
  return fmt::format("decode {}/{} prefill {}/{}", counts.num_decodes, counts.num_decode_tokens, counts.num_prefills,
                     counts.num_prefill_tokens);
}

std::string format_split_line(const StepRecord& st, const RequestNames& names) {
  std::string rows;
  for (const RowRecord& r : st.rows)
    rows += fmt::format("{}{}:{}[{},{}]", rows.empty() ? "" : " ", names[r.index], to_string(r.path), r.q, r.nct);
  std::string counts = format_split_counts(st.counts);
  if (st.has_linear_attention) {  // linear-attention (KDA) layers: their own split
    const LinearAttentionSplit& l = st.linear_attention;
    counts += fmt::format("; kda spec {}/{} decode {}/{} prefill {}/{}", l.num_spec_decodes, l.num_spec_decode_tokens,
                          l.num_decodes, l.num_decode_tokens, l.num_prefills, l.num_prefill_tokens);
  }
  return fmt::format("step {} | {} | {} | preempted {} | finished {}", st.step, counts, rows.empty() ? "-" : rows,
                     joined(st.preempted, names), joined(st.finished, names));
}

std::string format_split_golden(const Scenario& scenario, const RunRecord& run, const std::string& generator) {
  std::string out = fmt::format("# mlasim split golden, format {}\n", kSplitGoldenFormat);
  out += fmt::format("# scenario: {}\n", scenario.name);
  out += fmt::format("# fingerprint: {}\n", scenario_fingerprint(scenario));
  out += fmt::format("# generator: {}\n", generator);
  out += "# step | decode reqs/tokens prefill reqs/tokens | id:path[q,nct] in batch order | preempted | finished\n";
  for (const StepRecord& st : run.steps) out += format_split_line(st, run.names) + "\n";
  return out;
}

GoldenComparison check_split_golden_header(const std::string& golden_path,
                                           const std::vector<std::pair<int, std::string>>& header,
                                           const std::string& scenario_name, const std::string& fingerprint) {
  GoldenComparison c;
  c.golden_path = golden_path;
  auto fail = [&](int line, bool malformed, const std::string& message) {
    c.match = false;
    c.malformed = malformed;
    c.message = fmt::format("{}:{}: {}", golden_path, line, message);
    return c;
  };
  const std::string format_line = fmt::format("# mlasim split golden, format {}", kSplitGoldenFormat);
  if (header.empty() || header.front().first != 1 || header.front().second != format_line)
    return fail(1, true,
                fmt::format("error: not an mlasim split golden of format {} (the first line is \"{}\")\n  hint: "
                            "regenerate it with `mlasim golden update`; never edit goldens by hand",
                            kSplitGoldenFormat, header.empty() || header.front().first != 1 ? "" : header.front().second));
  auto find = [&](const std::string& key) -> const std::pair<int, std::string>* {
    const std::string prefix = "# " + key + ": ";
    for (const auto& l : header)
      if (l.second.rfind(prefix, 0) == 0) return &l;
    return nullptr;
  };
  const auto* name = find("scenario");
  const auto* fp = find("fingerprint");
  if (!name || !fp)
    return fail(1, true,
                fmt::format("error: the header has no `# {}:` line\n  hint: regenerate it with `mlasim golden update`",
                            name ? "fingerprint" : "scenario"));
  const std::string golden_name = name->second.substr(std::string("# scenario: ").size());
  if (golden_name != scenario_name)
    return fail(name->first, false,
                fmt::format("the golden is scenario \"{}\"'s, not \"{}\"'s (a golden folder copied or renamed?)",
                            golden_name, scenario_name));
  c.stale = fp->second.substr(std::string("# fingerprint: ").size()) != fingerprint;
  c.line = fp->first;
  return c;
}

GoldenComparison stale_split_golden(const std::string& golden_path, int fingerprint_line) {
  GoldenComparison c;
  c.match = false;
  c.stale = true;
  c.golden_path = golden_path;
  c.message = fmt::format(
      "{}:{}: the golden is stale: the scenario changed since it was written (fingerprint differs), though every step "
      "matches; run `mlasim golden update` so the logits golden follows",
      golden_path, fingerprint_line);
  return c;
}

GoldenComparison compare_split_golden(const std::string& golden_path, const std::string& golden_text,
                                      const std::string& actual_text) {
  const std::vector<std::string> golden = lines_of(golden_text), actual = lines_of(actual_text);
  std::vector<std::pair<int, std::string>> header;
  for (std::size_t i = 0; i < golden.size() && (golden[i].empty() || golden[i][0] == '#'); ++i)
    if (!golden[i].empty()) header.emplace_back(static_cast<int>(i) + 1, golden[i]);
  GoldenComparison c = check_split_golden_header(golden_path, header, header_value(actual, "scenario"),
                                                 header_value(actual, "fingerprint"));
  if (!c.match) return c;
  const int fingerprint_line = c.line;
  c.line = 0;
  // Step lines with their 1-based line numbers in the golden file.
  std::vector<std::pair<int, std::string>> g, a;
  for (std::size_t i = 0; i < golden.size(); ++i)
    if (!golden[i].empty() && golden[i][0] != '#') g.emplace_back(static_cast<int>(i) + 1, golden[i]);
  for (const auto& l : actual)
    if (!l.empty() && l[0] != '#') a.emplace_back(0, l);
  const std::string stale_note =
      c.stale ? "\n  note: the scenario changed since this golden was written (fingerprint differs); if the new "
                "split is intended, run `mlasim golden update`"
              : "";
  for (std::size_t i = 0; i < std::max(g.size(), a.size()); ++i) {
    const std::string* exp = i < g.size() ? &g[i].second : nullptr;
    const std::string* act = i < a.size() ? &a[i].second : nullptr;
    if (exp && act && *exp == *act) continue;
    c.match = false;
    int line = i < g.size() ? g[i].first : (g.empty() ? 1 : g.back().first + 1);
    c.golden_path = golden_path;
    c.line = line;
    c.expected = exp ? *exp : "(no more steps)";
    c.actual = act ? *act : "(no more steps)";
    c.message = fmt::format("{}:{}: split differs from the golden\n  expected: {}\n  actual:   {}{}", golden_path, line,
                            exp ? *exp : "(no more steps)", act ? *act : "(no more steps)", stale_note);
    return c;
  }
  if (c.stale) return stale_split_golden(golden_path, fingerprint_line);
  return c;
}

std::string split_golden_path(const std::string& golden_dir, const std::string& scenario_name) {
  return golden_dir + "/" + scenario_name + "/split.txt";
}

}  // namespace mlasim
