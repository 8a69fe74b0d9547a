// Side-by-side split and logits differences of two profiles.
#include "verify/profile_diff.h"

#include <fmt/format.h>

#include "base/check.h"
#include "verify/logits_golden.h"
#include "verify/split_golden.h"

namespace mlasim {

ProfileDiff diff_profiles(const RunRecord& a, const RunRecord& b, const std::string& name_a, const std::string& name_b,
                          const LogitsTolerance& tol) {
  ProfileDiff d;
  MLASIM_CHECK(a.steps.size() == b.steps.size(), "profiles do not change the schedule, only the routing");
  const std::size_t width = std::max(name_a.size(), name_b.size());
  for (std::size_t i = 0; i < a.steps.size(); ++i) {
    const std::string la = format_split_line(a.steps[i], a.names), lb = format_split_line(b.steps[i], b.names);
    if (la == lb) continue;
    ++d.num_steps_differing;
    d.text += fmt::format("  {:<{}}  num_mqa={} num_mha={}  {}\n", name_a, width, a.steps[i].counts.num_mqa_tokens,
                          a.steps[i].counts.num_mha_tokens, la);
    d.text += fmt::format("  {:<{}}  num_mqa={} num_mha={}  {}\n", name_b, width, b.steps[i].counts.num_mqa_tokens,
                          b.steps[i].counts.num_mha_tokens, lb);
  }
  std::string out = fmt::format("split: {} of {} steps route differently under {} and {}\n", d.num_steps_differing,
                                a.steps.size(), name_a, name_b);
  out += d.text;
  if (!a.logits.empty()) {
    const auto values = [](const RunRecord& r) {
      return r.logits.values_f64.empty() ? std::vector<double>(r.logits.values.begin(), r.logits.values.end())
                                         : r.logits.values_f64;
    };
    const long rows = static_cast<long>(a.logits.index.size());
    LogitsComparison c = compare_logits(values(b), values(a), rows, a.logits.vocab_size, tol);
    std::vector<std::string> labels;
    for (const LogitsRow& r : a.logits.index) labels.push_back(logits_row_label(r.step, a.names[r.index], r.position));
    d.logits_match = c.pass;
    out += fmt::format("{} vs {}: {}\n", name_b, name_a, c.summary(tol, labels));
    out += c.pass ? "answer: the routing difference does not change the output beyond the " + tol.name +
                        " tolerance\n"
                  : "answer: the routing difference CHANGES the output\n";
  }
  d.text = out;
  return d;
}

}  // namespace mlasim
