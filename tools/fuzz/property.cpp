// Checking the fuzz properties on one scenario with engine/'s Engine (the replay every
// command uses): a dry run stops at the first violation; same_logits_as_strict replays the model.
#include "base/file_read.h"
#include "tools/fuzz/property.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <utility>

#include "base/check.h"
#include "config/model_config.h"
#include "engine/engine.h"
#include "verify/logits_compare.h"
#include "verify/logits_golden.h"
#include "engine/replay.h"
#include "verify/split_golden.h"
#include "verify/split_golden_checker.h"
#include "harness/command_rows.h"
#include "harness/replay_session.h"

namespace mlasim {

const std::vector<PropertyInfo>& property_infos() {
  static const std::vector<PropertyInfo> infos = {
      {Property::kNoFreshPrefillOnDecodePath, kInvariantNoFreshPrefillOnDecodePath, false,
       "no row with nct = 0 (a fresh prefill) takes MLA's decode\npath in any step"},
      {Property::kStepInvariants, kInvariantStepInvariants, false,
       "the scheduler's per-step checks (token budget, max_num_seqs,\n"
       "KV slots for every scheduled token, the block pool audit,\n"
       "progress) and the attention metadata's consistency hold"},
      {Property::kSameLogitsAsStrict, "same_logits_as_strict", true,
       "the logits of the fp64 CPU reference equal those of the\n"
       "same schedule routed by the strict profile, within the fp64\n"
       "tolerance class (needs --model; --inject a decode-path fault\n"
       "to see a misrouting change them; on an fp8 KV cache the two\n"
       "forms differ, so every row routed unlike strict's shows)"},
      {Property::kMatchesGoldenSplit, "matches_golden_split", false,
       "the run's split equals --golden-dir DIR/<trace>/split.txt,\n"
       "recorded earlier with --record-golden DIR and the same seed\n"
       "and flags: a scheduler or routing change between two builds\n"
       "(not shrunk: a smaller trace has no golden)"},
      {Property::kSparseEqualsDenseWithinTopk, "sparse_equals_dense_within_topk", true,
       "on a sparse (DSA) model, the fp64 logits of every query\n"
       "whose positions all fit index_topk equal those of the model\n"
       "made dense (no indexer), within the fp64 tolerance class\n"
       "(needs --model; --inject topk_off_by_one breaks it)"},
  };
  return infos;
}

const char* to_string(Property p) {
  for (const PropertyInfo& i : property_infos())
    if (i.property == p) return i.name;
  return "?";
}

std::optional<Property> parse_property(std::string_view name) {
  for (const PropertyInfo& i : property_infos())
    if (name == i.name) return i.property;
  return std::nullopt;
}

namespace {

// The first fresh prefill on the decode path in `step`, when there is one.
std::optional<Violation> fresh_on_decode_path(const StepRecord& step, const RequestNames& names) {
  for (const RowRecord& row : step.rows)
    if (row.fresh_on_decode_path)
      return Violation{Property::kNoFreshPrefillOnDecodePath, step.step,
                       fmt::format("step {}: {}(q={},nct={},P={}) is a fresh prefill on the decode path (region {}, "
                                   "num_mqa={} num_mha={})",
                                   step.step, names[row.index], row.q, row.nct, row.prompt_len, to_string(row.region),
                                   step.counts.num_mqa_tokens, step.counts.num_mha_tokens)};
  return std::nullopt;
}

// Dry run of a session asking for fuzz's rows: the first fresh prefill on the decode path (when
// asked), the first failed step check, or (with the split golden of matches_golden_split) the
// first split difference. The thread's last dry run's engine lends its storage to this one's.
std::optional<Violation> dry_run(ReplaySession& session, bool want_fresh) {
  thread_local std::unique_ptr<Engine> last_engine;
  ReplayOptions options;
  options.with_model = false;
  options.audit_every_step = true;
  options.engine_donor = last_engine.get();
  struct HandOn {  // the engine is handed on however the run ends
    ReplaySession& session;
    ~HandOn() { last_engine = session.release_engine(); }
  } hand_on{session};
  std::optional<Violation> fresh;
  try {
    ThrowOnCheckFailure throw_on_failure;
    const bool started = session.start(options).ok();
    last_engine.reset();  // its storage is the new engine's now
    MLASIM_CHECK(started, "fuzz's rows open no file");
    if (session.request().asks(OutputRow::kSplitGolden) && !session.split_golden())
      return Violation{Property::kMatchesGoldenSplit, -1,
                       fmt::format("{}: no split golden (record them with mlasim fuzz --record-golden and the same "
                                   "seed and flags)",
                                   split_golden_path(session.request().path(OutputRow::kSplitGolden), session.name()))};
    session.run_until([&](const StepRecord& step) {
      if (want_fresh) fresh = fresh_on_decode_path(step, session.request_names());
      return fresh.has_value();
    });
  } catch (const InvariantViolation& e) {
    return Violation{Property::kStepInvariants, -1, e.what()};
  } catch (const VllmCannotRun&) {
    return std::nullopt;  // the replay ends where vLLM's does: nothing after it to check
  }
  if (fresh) return fresh;
  const SplitGoldenChecker* golden = session.split_golden();
  if (golden && !golden->result().match) return Violation{Property::kMatchesGoldenSplit, -1, golden->result().message};
  return std::nullopt;
}

// One replay of `s` keeping its record.
RunRecord recorded_replay(const Scenario& s, const ReplayOptions& options) {
  ReplaySession session(s, record_rows(), std::cout);
  MLASIM_CHECK(session.start(options).ok(), "the record row opens no file");
  session.run(/*finish_at_vllm_stop=*/false);
  return session.take_record();
}

// Rows keyed by (request, position): the same schedule gives the same rows under both replays.
std::map<std::pair<int, int>, std::size_t> rows_by_key(const LogitsRecord& l) {
  std::map<std::pair<int, int>, std::size_t> m;
  for (std::size_t i = 0; i < l.index.size(); ++i) m[{l.index[i].index, l.index[i].position}] = i;
  return m;
}

// Two replays' fp64 logits rows matched by (request, position): a's rows that `keep` picks, with b's.
struct MatchedRows {
  std::vector<double> a, b;
  std::vector<std::string> labels;
  std::vector<int> steps;
  std::optional<LogitsRow> missing;  // a's first kept row that b does not have (skipped)
};

template <class Keep>
MatchedRows match_rows(const RunRecord& a, const RunRecord& b, Keep keep) {
  MatchedRows m;
  const auto rows_b = rows_by_key(b.logits);
  const std::size_t vocab = static_cast<std::size_t>(a.logits.vocab_size);
  for (std::size_t i = 0; i < a.logits.index.size(); ++i) {
    const LogitsRow& row = a.logits.index[i];
    if (!keep(row)) continue;
    auto it = rows_b.find({row.index, row.position});
    if (it == rows_b.end()) {
      if (!m.missing) m.missing = row;
      continue;
    }
    const auto row_a = a.logits.values_f64.begin() + static_cast<std::ptrdiff_t>(i * vocab);
    const auto row_b = b.logits.values_f64.begin() + static_cast<std::ptrdiff_t>(it->second * vocab);
    m.a.insert(m.a.end(), row_a, row_a + static_cast<std::ptrdiff_t>(vocab));
    m.b.insert(m.b.end(), row_b, row_b + static_cast<std::ptrdiff_t>(vocab));
    m.labels.push_back(logits_row_label(row.step, a.names[row.index], row.position));
    m.steps.push_back(row.step);
  }
  return m;
}

// The matched rows within the fp64 tolerance class, or the violation of `p` saying `what`.
std::optional<Violation> compare_matched(Property p, const MatchedRows& m, int vocab, const std::string& what) {
  if (m.labels.empty()) return std::nullopt;
  const LogitsTolerance tol = logits_tolerance(PrecisionClass::kFp64);
  const LogitsComparison cmp = compare_logits(m.a, m.b, static_cast<long>(m.labels.size()), vocab, tol);
  if (cmp.pass) return std::nullopt;
  const int step = cmp.max_abs_row >= 0 ? m.steps[static_cast<std::size_t>(cmp.max_abs_row)] : -1;
  return Violation{p, step, what + cmp.summary(tol, m.labels)};
}

ReplayOptions fp64_model_run(const FaultSet& faults) {
  ReplayOptions options;
  options.precision = CpuPrecision::kDouble;  // so only the routing (or the model), not float rounding, can differ
  options.faults = faults;
  return options;
}

std::optional<Violation> logits_vs_strict(const Scenario& s, const FaultSet& faults) {
  Scenario strict = s;
  strict.engine.profile = EngineProfile::kStrict;  // the routing only: the scheduler rules stay
  strict.engine.model_runner = ModelRunner::kV1;
  const ReplayOptions options = fp64_model_run(faults);
  const RunRecord a = recorded_replay(s, options), b = recorded_replay(strict, options);
  const MatchedRows m = match_rows(a, b, [](const LogitsRow&) { return true; });
  if (m.missing)
    return Violation{Property::kSameLogitsAsStrict, m.missing->step,
                     fmt::format("{} position {} has logits here but not under strict", a.names[m.missing->index],
                                 m.missing->position)};
  return compare_matched(Property::kSameLogitsAsStrict, m, a.logits.vocab_size, "logits differ from strict's: ");
}

// The model's rows of queries at positions < index_topk against the same schedule on the model
// without its indexer (index_topk dropped, the dense architecture). Rows only one side has (a
// schedule the dense model's KV pool changed) are skipped.
std::optional<Violation> sparse_vs_dense(const Scenario& s, const FaultSet& faults) {
  if (!has_dsa_indexer(s.model)) return std::nullopt;
  const int topk = *s.model.index_topk;
  Scenario dense = s;
  dense.model.index_topk.reset();
  dense.model.architecture = "DeepseekV3ForCausalLM";
  const ReplayOptions options = fp64_model_run(faults);
  const RunRecord a = recorded_replay(s, options), b = recorded_replay(dense, options);
  // Past index_topk sparse attention reads a subset: those rows may differ.
  const MatchedRows m = match_rows(a, b, [topk](const LogitsRow& row) { return row.position < topk; });
  return compare_matched(Property::kSparseEqualsDenseWithinTopk, m, a.logits.vocab_size,
                         fmt::format("logits within index_topk {} differ from the dense model's: ", topk));
}

}  // namespace

std::string split_golden_text(const Scenario& s, const std::string& generator) {
  ReplaySession session(s, record_rows(), std::cout);
  ReplayOptions options;
  options.with_model = false;
  MLASIM_CHECK(session.start(options).ok(), "the record row opens no file");
  session.run(/*finish_at_vllm_stop=*/true);  // the steps before vLLM's stop (matches_golden_split stops there too)
  return format_split_golden(s, session.take_record(), generator);
}

std::optional<Violation> check_properties(const Scenario& s, const PropertyOptions& options) {
  auto wanted = [&](Property p) {
    return std::find(options.properties.begin(), options.properties.end(), p) != options.properties.end();
  };
  // One dry run serves the three dry properties. A failed step check ends the run, so the
  // properties after it cannot be judged: it counts only when step_invariants is asked for.
  const bool wants_golden = wanted(Property::kMatchesGoldenSplit);
  MLASIM_CHECK(!wants_golden || !options.golden_dir.empty(), "matches_golden_split needs a golden directory");
  ReplaySession session(s, fuzz_rows(wants_golden ? options.golden_dir : ""), std::cout);
  std::optional<Violation> dry = dry_run(session, wanted(Property::kNoFreshPrefillOnDecodePath));
  if (dry) return dry->property == Property::kStepInvariants && !wanted(Property::kStepInvariants) ? std::nullopt : dry;
  if (!wanted(Property::kSameLogitsAsStrict) && !wanted(Property::kSparseEqualsDenseWithinTopk)) return std::nullopt;
  try {
    ThrowOnCheckFailure throw_on_failure;
    // The model properties in the order asked for; the first violated one is reported.
    for (Property p : options.properties) {
      std::optional<Violation> v;
      if (p == Property::kSameLogitsAsStrict) v = logits_vs_strict(s, options.faults);
      if (p == Property::kSparseEqualsDenseWithinTopk) v = sparse_vs_dense(s, options.faults);
      if (v) return v;
    }
    return std::nullopt;
  } catch (const InvariantViolation& e) {
    if (wanted(Property::kStepInvariants)) return Violation{Property::kStepInvariants, -1, e.what()};
    return std::nullopt;
  } catch (const VllmCannotRun&) {
    return std::nullopt;  // as the dry run: nothing past vLLM's stop
  }
}

std::optional<Violation> check_property(const Scenario& s, Property p, const FaultSet& faults,
                                        const std::string& golden_dir) {
  return check_properties(s, PropertyOptions{{p}, faults, golden_dir});
}

}  // namespace mlasim
