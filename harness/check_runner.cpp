// Scenario discovery, per-scenario checking and the check reports.
#include "harness/check_runner.h"

#include "base/file_read.h"

#include "config/scenario_deployment.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <iostream>
#include <sstream>

#include "base/check.h"
#include "scenario/request_stream.h"
#include "scenario/scenario_loader.h"
#include "engine/engine.h"
#include "verify/expectations.h"
#include "base/atomic_file.h"
#include "base/formats/json_writer.h"
#include "verify/logits_golden_gate.h"
#include "verify/split_golden.h"
#include "verify/split_golden_checker.h"
#include "harness/command_rows.h"
#include "harness/replay_session.h"
#include "output/timeline.h"
#include "output/timeline_svg.h"
#include "output/xml_text.h"

namespace mlasim {
namespace fs = std::filesystem;

Result<std::vector<std::string>> collect_scenarios(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) {
      files.push_back(p);
    } else if (fs::is_directory(p, ec)) {
      for (auto it = fs::recursive_directory_iterator(p, ec); it != fs::recursive_directory_iterator(); ++it)
        if (it->is_regular_file() && it->path().extension() == ".yaml") files.push_back(it->path().string());
    } else {
      Error e;
      e.file = p;
      const std::string why = unopenable_path_hint(p);
      const bool missing = why.rfind("no such file", 0) == 0;
      e.message = missing ? "no such scenario file or directory" : "cannot read this scenario path: " + why;
      e.hint = "give scenario .yaml files or directories holding them";
      return e;
    }
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

namespace {

// The split golden check, one of the scenario's checks: a missing golden says how to write it; one
// that is no regular file is bad input.
std::vector<std::string> split_golden_messages(const ReplaySession& session, const std::string& golden_dir,
                                               ScenarioCheck& c) {
  if (const Status& read = session.split_golden_read(); !read) {
    c.status = CheckStatus::kBadInput;
    return {read.error().format()};
  }
  if (session.split_golden()) return {};
  const std::string path = split_golden_path(golden_dir, c.name);
  return {fmt::format("{}: no split golden; write it with `mlasim golden update {}`", path, c.path)};
}

// The logits golden check's verdict (the gate compared the rows as they came): the index
// exactly, then the values within the backend's class. A golden that could not be read is bad
// input, reported first.
void report_logits_golden(const Status& opened, const LogitsGoldenGate& gate, ScenarioCheck& c) {
  c.num_checks += 1;
  if (!opened) {
    c.status = CheckStatus::kBadInput;
    c.messages.insert(c.messages.begin(), opened.error().format());
    return;
  }
  LogitsGoldenVerdict golden = gate.finish();
  if (!golden.found) {
    c.messages.push_back(
        fmt::format("{}/logits.npy: no logits golden; write it with `mlasim golden update {}`", golden.dir, c.path));
    return;
  }
  if (!golden.stale.empty()) {
    c.messages.push_back(golden.stale);
    return;
  }
  if (!golden.check->pass) c.messages.push_back(golden.check->message);
  c.logits = std::move(*golden.check);
}

// A per-step check that failed during the replay: the step_invariants expectation failing when
// the scenario pins it, else a bug report.
std::string failed_step_check(const Scenario& s, int step, const InvariantViolation& e, bool pinned) {
  const std::string got = fmt::format("{} ({})", e.message, e.condition);
  if (pinned)
    return ExpectationFailure{s.source, fmt::format("invariant {} at step {}", kInvariantStepInvariants, step),
                              "every per-step check holds", got}
        .format();
  return fmt::format("{}: a per-step check failed at step {} (a bug in mlasim's scheduler or metadata builder, not in "
                     "the scenario): {}",
                     s.source, step, got);
}

// Why the scenario's model cannot be replayed here ("" when it can): it does not fit in memory,
// or the backend under test cannot run it.
std::string cannot_replay(const Scenario& s, const std::string& path, const CheckOptions& options) {
  if (!options.replay.with_model) return "";
  if (!options.replay.weights)
    if (Status st = model_memory_check(s, options.replay.precision); !st) return st.error().format();
  if (options.backend_support_error)
    if (std::string why = options.backend_support_error(s, options.replay.faults); !why.empty())
      return path + ": the backend under test cannot run this scenario: " + why;
  return "";
}

// The verdicts of a replay that ran to its end: the expectations, the split golden (a malformed
// one is bad input, reported first) and a model run's logits golden.
void judge(const ReplaySession& session, std::vector<std::string> split_messages, ScenarioCheck& c) {
  for (const ExpectationFailure& f : session.expectations().failures()) c.messages.push_back(f.format());
  c.messages.insert(c.messages.end(), split_messages.begin(), split_messages.end());
  const SplitGoldenChecker* split = session.split_golden();
  if (split && split->result().malformed) {
    c.status = CheckStatus::kBadInput;
    c.messages.insert(c.messages.begin(), split->result().message);
  } else if (split && !split->result().match) {
    c.messages.push_back(split->result().message);
  }
  if (split) c.split = split->result();
  if (session.precision()) report_logits_golden(session.logits_golden_read(), session.logits_golden(), c);
  if (!c.messages.empty() && c.status == CheckStatus::kPass) c.status = CheckStatus::kFail;
}

// Replays the scenario through a session asking for the check's rows, streaming the expectations,
// the split golden and a model run's logits golden step by step, and judges it.
void replay_and_judge(const Scenario& s, const std::string& path, const CheckOptions& options, ScenarioCheck& c) {
  c.num_checks = count_expectation_checks(s) + 1;  // and the split golden
  ReplaySession session(s, check_rows(options.golden_dir, options.replay.with_model, options.timelines), std::cout);
  const bool pinned = std::find(s.expect.invariants.begin(), s.expect.invariants.end(), kInvariantStepInvariants) !=
                      s.expect.invariants.end();
  ReplayOptions replay_options = options.replay;
  replay_options.audit_every_step = replay_options.audit_every_step || pinned;
  const MemoryLease memory(options.replay.with_model ? options.memory : nullptr,
                           model_memory(s, options.replay.precision).total());
  // A scenario that did not pass keeps its picture (the steps up to a failed per-step check).
  auto keep_timeline = [&] {
    if (options.timelines && c.status != CheckStatus::kPass) c.timeline_svg = session.timeline_svg();
  };
  try {
    ThrowOnCheckFailure throw_on_failure;
    MLASIM_CHECK(session.start(replay_options).ok(), "a check's rows open no file");
    std::vector<std::string> split_messages = split_golden_messages(session, options.golden_dir, c);
    session.run(/*finish_at_vllm_stop=*/false);
    judge(session, std::move(split_messages), c);
    keep_timeline();
  } catch (const RequestStreamError& e) {
    c.status = CheckStatus::kBadInput;
    c.messages = {e.error.format()};
  } catch (const VllmCannotRun& e) {  // a trace vLLM cannot run is no regression test
    c.status = CheckStatus::kBadInput;
    c.messages = {path + ": vLLM cannot run this trace: " + e.what()};
  } catch (const InvariantViolation& e) {
    // The run stops at a failed per-step check, so nothing after it can be judged.
    c.status = CheckStatus::kFail;
    c.messages = {failed_step_check(s, session.expectations().steps_seen(), e, pinned)};
    keep_timeline();
  }
}

}  // namespace

ScenarioCheck check_scenario(const std::string& path, const CheckOptions& options) {
  auto start = std::chrono::steady_clock::now();
  Result<Scenario> loaded = load_scenario_file(path);
  ScenarioCheck c;
  if (loaded) {
    c = check_scenario(loaded.value(), path, options);
  } else {
    c.path = path;
    c.name = fs::path(path).stem().string();
    c.status = CheckStatus::kBadInput;
    c.messages.push_back(loaded.error().format());
  }
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return c;
}

ScenarioCheck check_scenario(const Scenario& s, const std::string& path, const CheckOptions& options) {
  auto start = std::chrono::steady_clock::now();
  ScenarioCheck c;
  c.path = path;
  c.name = s.name;
  if (options.explain) c.deployment_chain = explain_deployment(s);
  if (std::string why = cannot_replay(s, path, options); !why.empty()) {
    c.status = CheckStatus::kBadInput;
    c.messages.push_back(why);
  } else {
    replay_and_judge(s, path, options, c);
  }
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return c;
}

std::string format_check_line(const ScenarioCheck& c) {
  switch (c.status) {
    case CheckStatus::kPass: return fmt::format("PASS {} ({} checks)", c.name, c.num_checks);
    case CheckStatus::kFail: {
      std::string out = fmt::format("FAIL {} ({} of {} checks failed)", c.name, c.messages.size(), c.num_checks);
      for (const auto& m : c.messages) out += "\n  " + m;
      return out;
    }
    case CheckStatus::kBadInput: return fmt::format("ERROR {}\n  {}", c.name, c.messages.front());
  }
  return "";
}

std::string check_reports_junit(const std::vector<ScenarioCheck>& checks, const std::optional<ShardPlace>& shard) {
  int failures = 0, errors = 0;
  double total = 0;
  for (const auto& c : checks) {
    failures += c.status == CheckStatus::kFail;
    errors += c.status == CheckStatus::kBadInput;
    total += c.seconds;
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites>\n  <testsuite name=\"mlasim check\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{:.3f}\">\n",
                     checks.size(), failures, errors, total);
  if (shard)
    out += fmt::format("    <properties><property name=\"mlasim.shard\" value=\"{}/{} of {}\"/></properties>\n",
                       shard->index, shard->count, shard->whole);
  for (const auto& c : checks) {
    out += fmt::format("    <testcase classname=\"mlasim.scenarios\" name=\"{}\" file=\"{}\" time=\"{:.3f}\"",
                       xml_escape(c.name), xml_escape(c.path), c.seconds);
    if (c.status == CheckStatus::kPass) {
      out += "/>\n";
      continue;
    }
    std::string body;
    for (const auto& m : c.messages) body += m + "\n";
    const char* tag = c.status == CheckStatus::kFail ? "failure" : "error";
    out += fmt::format(">\n      <{} message=\"{}\">{}</{}>\n    </testcase>\n", tag, xml_escape(c.messages.front()),
                       xml_escape(body), tag);
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

std::string check_reports_json(const std::vector<ScenarioCheck>& checks, const std::optional<ShardPlace>& shard) {
  JsonWriter w;
  w.begin_object();
  w.key("format").value("mlasim-check");
  w.key("version").value(1);
  if (shard) {
    w.key("shard").begin_object();
    w.key("index").value(shard->index);
    w.key("count").value(shard->count);
    w.key("num_scenarios").value(shard->whole);
    w.end_object();
  }
  int passed = 0;
  for (const auto& c : checks) passed += c.status == CheckStatus::kPass;
  w.key("passed").value(passed);
  w.key("failed").value(static_cast<int>(checks.size()) - passed);
  w.key("scenarios").begin_array();
  for (const auto& c : checks) {
    w.begin_object();
    w.key("name").value(c.name);
    w.key("path").value(c.path);
    w.key("status").value(c.status == CheckStatus::kPass ? "pass" : c.status == CheckStatus::kFail ? "fail" : "error");
    w.key("num_checks").value(c.num_checks);
    w.key("messages").string_array(c.messages);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.str();
}

}  // namespace mlasim
