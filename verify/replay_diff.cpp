// Side-by-side split and logits differences of two replays of one scenario.
#include "verify/replay_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "verify/logits_golden.h"
#include "verify/split_golden.h"

namespace mlasim {

namespace {

const double* row_values(const LogitsRecord& r, std::size_t row, std::vector<double>& scratch) {
  const std::size_t v = static_cast<std::size_t>(r.vocab_size);
  if (!r.values_f64.empty()) return r.values_f64.data() + row * v;
  scratch.assign(r.values.begin() + static_cast<std::ptrdiff_t>(row * v),
                 r.values.begin() + static_cast<std::ptrdiff_t>((row + 1) * v));
  return scratch.data();
}

// Each row's key: (request, position, how many earlier rows had both).
std::vector<std::tuple<int, int, int>> row_keys(const LogitsRecord& r) {
  std::map<std::pair<int, int>, int> seen;
  std::vector<std::tuple<int, int, int>> keys;
  keys.reserve(r.index.size());
  for (const LogitsRow& row : r.index) keys.emplace_back(row.index, row.position, seen[{row.index, row.position}]++);
  return keys;
}

std::string compare_logits_text(const RunRecord& a, const RunRecord& b, const std::string& name_a,
                                 const std::string& name_b, const LogitsTolerance& tol, ReplayDiff& d) {
  if (a.logits.empty() && b.logits.empty()) return "";
  if (a.logits.vocab_size != b.logits.vocab_size)
    return fmt::format("logits: not compared: the vocabularies differ ({} under {}, {} under {})\n",
                       a.logits.vocab_size, name_a, b.logits.vocab_size, name_b);
  const auto keys_a = row_keys(a.logits), keys_b = row_keys(b.logits);
  std::map<std::tuple<int, int, int>, std::size_t> in_b;
  for (std::size_t i = 0; i < keys_b.size(); ++i) in_b.emplace(keys_b[i], i);
  const long cols = a.logits.vocab_size;
  LogitsComparer comparer(cols, tol);
  std::vector<std::string> labels;
  std::vector<double> sa, sb;
  long matched = 0;
  for (std::size_t i = 0; i < keys_a.size(); ++i) {
    const auto it = in_b.find(keys_a[i]);
    if (it == in_b.end()) {
      ++d.rows_only_a;
      continue;
    }
    const LogitsRow& r = a.logits.index[i];
    labels.push_back(logits_row_label(r.step, a.names[r.index], r.position));
    const long before = comparer.num_outside();
    comparer.add_row(row_values(b.logits, it->second, sb), row_values(a.logits, i, sa));
    if (d.first_differing_row < 0 && comparer.num_outside() > before) {
      d.first_differing_row = matched;
      d.first_differing_label = labels.back();
    }
    ++matched;
  }
  d.rows_only_b = static_cast<long>(keys_b.size()) - matched;
  d.logits_compared = true;
  d.logits = comparer.result();
  d.logits_match = d.logits.pass;
  std::string out = fmt::format("logits: {} sampling rows compared", matched);
  if (d.rows_only_a || d.rows_only_b)
    out += fmt::format(" ({} only under {}, {} only under {})", d.rows_only_a, name_a, d.rows_only_b, name_b);
  out += fmt::format("\n{} vs {}: {}\n", name_b, name_a, d.logits.summary(tol, labels));
  if (d.first_differing_row >= 0) out += "first differing row: " + d.first_differing_label + "\n";
  out += d.logits.pass ? "answer: the difference does not change the output beyond the " + tol.name + " tolerance\n"
                       : "answer: the difference CHANGES the output\n";
  return out;
}

}  // namespace

ReplayDiff diff_replays(const RunRecord& a, const RunRecord& b, const std::string& name_a, const std::string& name_b,
                        const LogitsTolerance& tol) {
  ReplayDiff d;
  d.num_steps_a = static_cast<int>(a.steps.size());
  d.num_steps_b = static_cast<int>(b.steps.size());
  const std::size_t width = std::max(name_a.size(), name_b.size());
  const std::size_t both = std::min(a.steps.size(), b.steps.size());
  std::string lines;
  for (std::size_t i = 0; i < both; ++i) {
    const std::string la = format_split_line(a.steps[i], a.names), lb = format_split_line(b.steps[i], b.names);
    if (la == lb) continue;
    ++d.num_steps_differing;
    lines += fmt::format("  {:<{}}  num_mqa={} num_mha={}  {}\n", name_a, width, a.steps[i].counts.num_mqa_tokens,
                         a.steps[i].counts.num_mha_tokens, la);
    lines += fmt::format("  {:<{}}  num_mqa={} num_mha={}  {}\n", name_b, width, b.steps[i].counts.num_mqa_tokens,
                         b.steps[i].counts.num_mha_tokens, lb);
  }
  std::string out = fmt::format("split: {} of {} steps route differently under {} and {}\n", d.num_steps_differing,
                                both, name_a, name_b);
  if (a.steps.size() != b.steps.size())
    out += fmt::format("schedule: {} ran {} steps, {} ran {} (steps compared in order up to the shorter)\n", name_a,
                       a.steps.size(), name_b, b.steps.size());
  out += lines;
  out += compare_logits_text(a, b, name_a, name_b, tol, d);
  d.text = out;
  return d;
}

}  // namespace mlasim
