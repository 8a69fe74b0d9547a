// Comparison of a RunRecord with the scenario's expectations.
#include "verify/expectations.h"

#include <fmt/format.h>

#include <algorithm>

#include "engine/step_words.h"

namespace mlasim {
namespace {

std::string show(const std::vector<std::string>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
  return out + "]";
}

std::string show(const std::vector<int>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "]";
}

template <typename T>
std::string show_map(const std::vector<std::pair<std::string, T>>& m) {
  std::string out = "{";
  for (std::size_t i = 0; i < m.size(); ++i) {
    out += (i ? ", " : "") + m[i].first + ": ";
    if constexpr (std::is_same_v<T, int>) out += std::to_string(m[i].second);
    else out += show(m[i].second);
  }
  return out + "}";
}

std::vector<std::string> ids_of(const std::vector<int>& requests, const RequestNames& names) {
  std::vector<std::string> out;
  out.reserve(requests.size());
  for (int index : requests) out.push_back(names[index]);
  return out;
}

template <typename T>
std::vector<std::pair<std::string, T>> ids_of(const std::vector<std::pair<int, T>>& m, const RequestNames& names) {
  std::vector<std::pair<std::string, T>> out;
  out.reserve(m.size());
  for (const auto& [index, value] : m) out.emplace_back(names[index], value);
  return out;
}

// {id: value} maps compare as sets of pairs: the YAML order carries no meaning.
template <typename T>
bool same_map(std::vector<std::pair<std::string, T>> a, std::vector<std::pair<std::string, T>> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

class Checker {
 public:
  Checker(const Scenario& s, std::vector<ExpectationFailure>& out) : s_(s), out_(out) {}

  void at(int line, int column) { where_ = fmt::format("{}:{}:{}", s_.source, line, column); }
  template <typename T>
  void eq(const std::string& what, const std::optional<T>& expected, const T& actual) {
    if (expected && !(*expected == actual)) fail(what, show_value(*expected), show_value(actual));
  }
  // Expected ids against the record's requests, named only when there is an expectation.
  void eq_ids(const std::string& what, const std::optional<std::vector<std::string>>& expected,
              const std::vector<int>& actual, const RequestNames& names) {
    if (expected) eq(what, expected, ids_of(actual, names));
  }
  template <typename T>
  void eq_map(const std::string& what, const std::optional<std::vector<std::pair<std::string, T>>>& expected,
              const std::vector<std::pair<int, T>>& actual, const RequestNames& names) {
    if (!expected) return;
    const std::vector<std::pair<std::string, T>> got = ids_of(actual, names);
    if (!same_map(*expected, got)) fail(what, show_map(*expected), show_map(got));
  }
  void fail(const std::string& what, std::string expected, std::string actual) {
    out_.push_back({where_, what, std::move(expected), std::move(actual)});
  }

 private:
  static std::string show_value(int v) { return std::to_string(v); }
  static std::string show_value(const std::string& v) { return v; }
  static std::string show_value(const std::vector<std::string>& v) { return show(v); }
  static std::string show_value(const std::vector<int>& v) { return show(v); }

  const Scenario& s_;
  std::vector<ExpectationFailure>& out_;
  std::string where_;
};

void check_step(Checker& c, const StepExpectation& e, const StepRecord& r, const RequestNames& names) {
  const std::string p = fmt::format("step {} ", e.step);
  c.eq_map(p + "num_scheduled_tokens", e.num_scheduled_tokens, r.num_scheduled_tokens, names);
  c.eq(p + "total_num_scheduled_tokens", e.total_num_scheduled_tokens, r.total_num_scheduled_tokens);
  c.eq(p + "num_free_blocks", e.num_free_blocks, r.num_free_blocks);
  c.eq_ids(p + "new", e.new_reqs, r.new_reqs, names);
  c.eq_ids(p + "resumed", e.resumed, r.resumed, names);
  c.eq_ids(p + "preempted", e.preempted, r.preempted, names);
  c.eq_ids(p + "finished", e.finished, r.finished, names);
  if (e.order) {
    std::vector<int> order;
    for (const RowRecord& row : r.rows) order.push_back(row.index);
    c.eq_ids(p + "order", e.order, order, names);
  }
  c.eq_map(p + "new_block_ids", e.new_block_ids, r.new_block_ids, names);
  c.eq(p + "num_decodes", e.num_decodes, r.counts.num_decodes);
  c.eq(p + "num_decode_tokens", e.num_decode_tokens, r.counts.num_decode_tokens);
  c.eq(p + "num_prefills", e.num_prefills, r.counts.num_prefills);
  c.eq(p + "num_prefill_tokens", e.num_prefill_tokens, r.counts.num_prefill_tokens);
  c.eq(p + "num_mqa_tokens", e.num_mqa_tokens, r.counts.num_mqa_tokens);
  c.eq(p + "num_mha_tokens", e.num_mha_tokens, r.counts.num_mha_tokens);
}

}  // namespace

std::string ExpectationFailure::format() const {
  return fmt::format("{}: expect {}: expected {}, got {}", where, what, expected, actual);
}

ExpectationChecker::ExpectationChecker(const Scenario& scenario)
    : s_(scenario),
      step_failures_(scenario.expect.steps.size()),
      step_seen_(scenario.expect.steps.size(), false),
      request_failures_(scenario.expect.requests.size()) {
  for (const std::string& inv : scenario.expect.invariants)
    check_fresh_ = check_fresh_ || inv == kInvariantNoFreshPrefillOnDecodePath;  // the loader admits no other
  for (std::size_t i = 0; i < scenario.expect.steps.size(); ++i) steps_by_number_.emplace(scenario.expect.steps[i].step, i);
  for (std::size_t i = 0; i < scenario.expect.requests.size(); ++i)
    requests_by_id_.emplace(scenario.expect.requests[i].id, i);
}

void ExpectationChecker::on_step(const StepRecord& st) {
  ++num_steps_;
  if (first_step_ < 0) first_step_ = st.step;
  last_step_ = st.step;
  const std::vector<StepExpectation>& steps = s_.expect.steps;
  for (auto [it, end] = steps_by_number_.equal_range(st.step); it != end; ++it) {
    const std::size_t i = it->second;
    step_seen_[i] = true;
    Checker c(s_, step_failures_[i]);
    c.at(steps[i].line, steps[i].column);
    check_step(c, steps[i], st, names());
  }
  if (check_fresh_)
    for (std::size_t pos = 0; pos < st.rows.size(); ++pos)
      if (const RowRecord& row = st.rows[pos]; row.fresh_on_decode_path)
        invariant_failures_.push_back({s_.source,
                                       fmt::format("invariant {} at step {}", kInvariantNoFreshPrefillOnDecodePath, st.step),
                                       "no row with nct = 0 on the decode path",
                                       fmt::format("{} (q={}, nct=0, P={}) took the decode path: {}", names()[row.index], row.q,
                                                   row.prompt_len, row_reason(st, pos))});
}

bool ExpectationChecker::wants_token_ids() const {
  return std::any_of(s_.expect.requests.begin(), s_.expect.requests.end(),
                     [](const RequestExpectation& e) { return e.output.has_value(); });
}

void ExpectationChecker::on_request_finished(const RequestRecord& r) {
  const std::vector<RequestExpectation>& reqs = s_.expect.requests;
  for (auto [it, end] = requests_by_id_.equal_range(r.id); it != end; ++it) {
    const std::size_t i = it->second;
    const RequestExpectation& e = reqs[i];
    Checker c(s_, request_failures_[i]);
    c.at(e.line, e.column);
    const std::string p = "request " + e.id + " ";
    c.eq(p + "status", e.status, r.status);
    c.eq(p + "num_preemptions", e.num_preemptions, r.num_preemptions);
    c.eq(p + "num_output_tokens", e.num_output_tokens, r.num_output_tokens());
    if (e.output) {
      std::vector<int> outputs(r.token_ids.begin() + r.num_prompt_tokens, r.token_ids.end());
      c.eq(p + "output", e.output, outputs);
    }
  }
}

void ExpectationChecker::on_end(const RunTotals& /*totals*/) {
  failures_.clear();
  const Expectations& ex = s_.expect;
  if (ex.num_steps && *ex.num_steps != num_steps_)
    failures_.push_back({s_.source, "num_steps", std::to_string(*ex.num_steps), std::to_string(num_steps_)});
  for (std::size_t i = 0; i < ex.steps.size(); ++i) {
    if (!step_seen_[i]) {
      Checker c(s_, failures_);
      c.at(ex.steps[i].line, ex.steps[i].column);
      c.fail(fmt::format("step {}", ex.steps[i].step), "a step that ran",
             num_steps_ == 0 ? std::string("no steps") : fmt::format("steps {}..{} ran", first_step_, last_step_));
      continue;
    }
    failures_.insert(failures_.end(), step_failures_[i].begin(), step_failures_[i].end());
  }
  for (const auto& f : request_failures_) failures_.insert(failures_.end(), f.begin(), f.end());
  failures_.insert(failures_.end(), invariant_failures_.begin(), invariant_failures_.end());
}

std::vector<ExpectationFailure> check_expectations(const Scenario& scenario, const RunRecord& run) {
  ExpectationChecker checker(scenario);
  checker.on_start(run.names);
  for (const StepRecord& st : run.steps) checker.on_step(st);
  for (const RequestRecord& r : run.requests) checker.on_request_finished(r);
  RunTotals totals;
  totals.num_steps = static_cast<int>(run.steps.size());
  checker.on_end(totals);
  return checker.failures();
}

int count_expectation_checks(const Scenario& scenario) {
  const Expectations& ex = scenario.expect;
  int n = ex.num_steps ? 1 : 0;
  for (const StepExpectation& e : ex.steps)
    n += !!e.num_scheduled_tokens + !!e.total_num_scheduled_tokens + !!e.num_decodes + !!e.num_decode_tokens +
         !!e.num_prefills + !!e.num_prefill_tokens + !!e.num_mqa_tokens + !!e.num_mha_tokens + !!e.num_free_blocks +
         !!e.new_reqs + !!e.resumed + !!e.preempted + !!e.finished + !!e.order + !!e.new_block_ids;
  for (const RequestExpectation& e : ex.requests)
    n += !!e.status + !!e.num_preemptions + !!e.num_output_tokens + !!e.output;
  return n + static_cast<int>(ex.invariants.size());
}

}  // namespace mlasim
