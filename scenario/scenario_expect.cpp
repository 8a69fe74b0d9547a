// The `expect` section: per-step values, final request states and named invariants.
#include <algorithm>
#include <set>
#include <unordered_set>

#include "scenario/scenario_sections.h"

namespace mlasim {
namespace {

const std::vector<std::string> kStatuses = {"waiting", "running", "preempted", "finished_stopped",
                                            "finished_length_capped"};

// The scenario's request ids, looked up in O(1) (an expect block may name 100,000 of them).
struct KnownIds {
  explicit KnownIds(const Scenario& s) : any(!s.requests_file.empty()) {
    ids.reserve(s.requests.size());
    for (const RequestSpec& r : s.requests) ids.insert(r.id);
  }
  bool any;  // a requests file: scan_requests_file checks these ids against the file
  std::unordered_set<std::string> ids;
};

bool has_request(const KnownIds& s, const std::string& id) { return s.any || s.ids.count(id) > 0; }

std::string known_id(const YamlReader& r, const YamlNode& node, const std::string& path, const KnownIds& s) {
  std::string id = r.read_string(node, path);
  if (!has_request(s, id))
    r.fail(node, path, "unknown request id \"" + id + "\"", "ids here must name a request of this scenario");
  return id;
}

std::vector<std::string> id_list(const YamlReader& r, const YamlNode& node, const std::string& path,
                                 const KnownIds& s) {
  r.expect_sequence(node, path);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < node.size(); ++i) out.push_back(known_id(r, node[i], index_key(path, i), s));
  return out;
}

StepExpectation read_step(const YamlReader& r, const YamlNode& node, const std::string& p, const KnownIds& s) {
  r.expect_map(node, p,
               {"step", "num_scheduled_tokens", "total_num_scheduled_tokens", "num_decodes", "num_decode_tokens",
                "num_prefills", "num_prefill_tokens", "num_mqa_tokens", "num_mha_tokens", "num_free_blocks", "new",
                "resumed", "preempted", "finished", "order", "new_block_ids"});
  StepExpectation e;
  e.line = node.Mark().line + 1;
  e.column = node.Mark().column + 1;
  if (!node["step"]) r.fail(node, p, "missing required key `step`", "say which step (0-based) this entry checks");
  e.step = r.read_int(node["step"], p + ".step", 0);
  auto count = [&](const char* key, std::optional<int>& field) {
    if (node[key]) field = r.read_int(node[key], join_key(p, key), 0);
  };
  count("total_num_scheduled_tokens", e.total_num_scheduled_tokens);
  count("num_decodes", e.num_decodes);
  count("num_decode_tokens", e.num_decode_tokens);
  count("num_prefills", e.num_prefills);
  count("num_prefill_tokens", e.num_prefill_tokens);
  count("num_mqa_tokens", e.num_mqa_tokens);
  count("num_mha_tokens", e.num_mha_tokens);
  count("num_free_blocks", e.num_free_blocks);
  auto ids = [&](const char* key, std::optional<std::vector<std::string>>& field) {
    if (node[key]) field = id_list(r, node[key], join_key(p, key), s);
  };
  ids("new", e.new_reqs);
  ids("resumed", e.resumed);
  ids("preempted", e.preempted);
  ids("finished", e.finished);
  ids("order", e.order);
  if (const YamlNode m = node["num_scheduled_tokens"]) {
    const std::string mp = p + ".num_scheduled_tokens";
    if (!m.IsMap()) r.fail(m, mp, "expected a mapping", "write {request id: tokens, ...}");
    e.num_scheduled_tokens.emplace();
    std::set<std::string> seen;
    for (std::size_t k = 0; k < m.size(); ++k) {
      std::string id = known_id(r, m.key_at(k), mp, s);
      if (!seen.insert(id).second) r.fail(m.key_at(k), join_key(mp, id), "duplicate key", "each key may appear once in a mapping");
      e.num_scheduled_tokens->emplace_back(id, r.read_int(m.value_at(k), join_key(mp, id), 0));
    }
  }
  if (const YamlNode m = node["new_block_ids"]) {
    const std::string mp = p + ".new_block_ids";
    if (!m.IsMap()) r.fail(m, mp, "expected a mapping", "write {request id: [block ids], ...}");
    e.new_block_ids.emplace();
    std::set<std::string> seen;
    for (std::size_t k = 0; k < m.size(); ++k) {
      std::string id = known_id(r, m.key_at(k), mp, s);
      if (!seen.insert(id).second) r.fail(m.key_at(k), join_key(mp, id), "duplicate key", "each key may appear once in a mapping");
      e.new_block_ids->emplace_back(id, r.read_int_list(m.value_at(k), join_key(mp, id), 0, 1LL << 31));
    }
  }
  return e;
}

RequestExpectation read_request_expectation(const YamlReader& r, const YamlNode& node, const std::string& p,
                                            const KnownIds& s) {
  r.expect_map(node, p, {"id", "status", "num_preemptions", "num_output_tokens", "output"});
  RequestExpectation e;
  e.line = node.Mark().line + 1;
  e.column = node.Mark().column + 1;
  if (!node["id"]) r.fail(node, p, "missing required key `id`", "name the request this entry checks");
  e.id = known_id(r, node["id"], p + ".id", s);
  if (node["status"]) {
    std::string st = r.read_string(node["status"], p + ".status");
    if (std::find(kStatuses.begin(), kStatuses.end(), st) == kStatuses.end())
      r.fail(node["status"], p + ".status", "unknown status \"" + st + "\"",
             "choose one of: waiting | running | preempted | finished_stopped | finished_length_capped");
    e.status = st;
  }
  if (node["num_preemptions"]) e.num_preemptions = r.read_int(node["num_preemptions"], p + ".num_preemptions", 0);
  if (node["num_output_tokens"])
    e.num_output_tokens = r.read_int(node["num_output_tokens"], p + ".num_output_tokens", 0);
  if (node["output"]) e.output = r.read_int_list(node["output"], p + ".output", 0, 1LL << 31);
  return e;
}

}  // namespace

void read_expect_section(const YamlReader& r, const YamlNode& node, Scenario& s) {
  r.expect_map(node, "expect", {"num_steps", "steps", "requests", "invariants"});
  const KnownIds known(s);
  if (node["num_steps"]) s.expect.num_steps = r.read_int(node["num_steps"], "expect.num_steps", 0);
  if (const YamlNode steps = node["steps"]) {
    r.expect_sequence(steps, "expect.steps");
    for (std::size_t i = 0; i < steps.size(); ++i)
      s.expect.steps.push_back(read_step(r, steps[i], index_key("expect.steps", i), known));
  }
  if (const YamlNode reqs = node["requests"]) {
    r.expect_sequence(reqs, "expect.requests");
    for (std::size_t i = 0; i < reqs.size(); ++i)
      s.expect.requests.push_back(read_request_expectation(r, reqs[i], index_key("expect.requests", i), known));
  }
  if (const YamlNode inv = node["invariants"]) {
    s.expect.invariants = r.read_string_list(inv, "expect.invariants");
    for (std::size_t i = 0; i < s.expect.invariants.size(); ++i)
      if (s.expect.invariants[i] != kInvariantNoFreshPrefillOnDecodePath && s.expect.invariants[i] != kInvariantStepInvariants)
        r.fail(inv[i], index_key("expect.invariants", i), "unknown invariant \"" + s.expect.invariants[i] + "\"",
               std::string("known invariants: ") + kInvariantNoFreshPrefillOnDecodePath + ", " + kInvariantStepInvariants);
  }
}

}  // namespace mlasim
