// `mlasim route --batch ...`: reorder and split one explicit batch.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <limits>
#include <sstream>

#include "attention/route.h"
#include "attention/routing_config.h"
#include "base/formats/json_writer.h"
#include "output/run_json.h"
#include "scenario/scenario_loader.h"
#include "tools/mlasim/commands.h"

namespace mlasim::cli {
namespace {

struct RouteOptions {
  std::string batch;
  std::string profile = "vllm-0.33";
  std::string backend = "flashattn-mla";
  int threshold = 0;
  std::string query_len_support;
  int spec_tokens = 0;
  bool no_reorder = false;
  bool json = false;
  std::string scenario;           // the deployment of a scenario instead of the flags above
  std::vector<std::string> sets;  // its --set overrides
  bool routing_flags_given = false;
};

// Parses "q:nct:P,q:nct:P"; on error prints a message naming the entry and returns false.
bool parse_batch(const std::string& text, std::vector<RowInput>& rows) {
  int index = 0;
  long long total_q = 0;
  // Every comma separates two entries, so an empty or trailing entry is an error, not skipped.
  for (std::size_t start = 0; !text.empty() && start <= text.size(); ++index) {
    std::size_t end = std::min(text.find(',', start), text.size());
    const std::string entry = text.substr(start, end - start);
    start = end + 1;
    if (entry.find_first_not_of(' ') == std::string::npos) {
      std::cerr << "--batch: entry " << index << " is empty (a doubled or trailing comma?)\n"
                << "  hint: separate q:nct:P rows with single commas, e.g. --batch 1:20:10,1:0:1\n";
      return false;
    }
    RowInput r;
    char c1 = 0, c2 = 0;
    std::stringstream e(entry);
    std::string rest;
    if (!(e >> r.q >> c1 >> r.nct >> c2 >> r.prompt_len) || c1 != ':' || c2 != ':' || (e >> rest) || r.q < 0 ||
        r.nct < 0 || r.prompt_len < 1) {
      std::cerr << "--batch: entry " << index << " \"" << entry
                << "\" is not q:nct:P with q >= 0, nct >= 0, P >= 1\n  hint: e.g. --batch 1:20:10,1:0:1\n";
      return false;
    }
    total_q += r.q;
    if (total_q > std::numeric_limits<int>::max()) {
      std::cerr << "--batch: the rows up to entry " << index << " schedule " << total_q
                << " tokens, more than a batch can count (" << std::numeric_limits<int>::max()
                << ")\n  hint: use smaller q values\n";
      return false;
    }
    rows.push_back(r);
  }
  if (rows.empty()) {
    std::cerr << "--batch: no rows\n  hint: e.g. --batch 1:0:1\n";
    return false;
  }
  return true;
}

// The routing of the flags, or of the scenario's deployment; nullopt after saying why.
std::optional<RoutingConfig> route_config(RouteOptions& o) {
  if (o.scenario.empty()) {
    if (!o.sets.empty()) {
      std::cerr << "mlasim route: --set overrides a scenario's keys: give --scenario FILE\n";
      return std::nullopt;
    }
    std::optional<int> threshold;
    if (o.threshold > 0) threshold = o.threshold;
    std::optional<QueryLenSupport> support;
    if (!o.query_len_support.empty()) support = parse_query_len_support(o.query_len_support);
    return make_routing_config(*parse_engine_profile(o.profile), *parse_attention_backend(o.backend), threshold, support,
                               o.spec_tokens);
  }
  if (o.routing_flags_given) {
    std::cerr << "mlasim route: with --scenario the routing is the scenario's deployment; --profile, --backend,\n"
                 "--threshold, --query-len-support and --spec-tokens do not apply (use --set engine.profile=... etc.)\n";
    return std::nullopt;
  }
  Result<Scenario> loaded = load_scenario_file(o.scenario, o.sets);
  if (!loaded) {
    std::cerr << loaded.error().format() << "\n";
    return std::nullopt;
  }
  const Scenario& s = loaded.value();
  o.profile = to_string(s.engine.profile);
  o.backend = to_string(s.engine.attention_backend);
  return make_routing_config(s);
}

int run_route(RouteOptions& o) {
  std::vector<RowInput> rows;
  if (!parse_batch(o.batch, rows)) return kExitBadInput;
  const std::optional<RoutingConfig> resolved = route_config(o);
  if (!resolved) return kExitBadInput;
  const RoutingConfig& config = *resolved;
  const BatchRoute r = route_batch(rows, config, !o.no_reorder);
  if (o.json) {
    JsonWriter w;
    w.begin_object();
    w.key("profile").value(o.profile);
    w.key("backend").value(o.backend);
    w.key("decode_threshold").value(config.decode_threshold);
    w.key("require_uniform").value(config.require_uniform);
    w.key("order").int_array(r.order);
    w.key("modified").value(r.modified);
    write_split_counts(w, r.counts);
    w.key("reason").value(r.batch_reason);
    w.key("rows").begin_array();
    for (const RowRoute& row : r.rows)  // id: the row's index in the given batch
      write_row_json(w,
                     {row.input_index, row.q, row.nct, row.prompt_len, row.region, row.is_decode, row.path,
                      row.fresh_on_decode_path},
                     std::to_string(row.input_index), row.reason);
    w.end_array();
    w.end_object();
    std::cout << w.str();
    return kExitOk;
  }
  std::cout << fmt::format("profile {} ({}), backend {}, T={}, require_uniform={}\n", o.profile,
                           modeled_vllm_version(config.profile), o.backend, config.decode_threshold,
                           config.require_uniform ? "true" : "false");
  std::string order;
  for (int i : r.order) order += (order.empty() ? "" : ",") + std::to_string(i);
  std::cout << "order: " << order << (r.modified ? "  (reordered)" : "  (unchanged)") << "\n";
  std::cout << fmt::format("num_decodes={} num_prefills={} num_decode_tokens={} num_prefill_tokens={}\n", r.counts.num_decodes,
                           r.counts.num_prefills, r.counts.num_decode_tokens, r.counts.num_prefill_tokens);
  std::cout << fmt::format("num_mqa={} num_mha={} total_toks={}\n", r.counts.num_mqa_tokens, r.counts.num_mha_tokens,
                           r.counts.num_actual_tokens());
  std::cout << "batch: " << r.batch_reason << "\n";
  for (const RowRoute& row : r.rows)
    std::cout << fmt::format("  row {} (q={},nct={},P={}) region={} path={}{}\n      {}\n", row.input_index, row.q,
                             row.nct, row.prompt_len, to_string(row.region), to_string(row.path),
                             row.fresh_on_decode_path ? " [fresh-on-decode-path]" : "", row.reason);
  return kExitOk;
}

}  // namespace

void add_route_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<RouteOptions>();
  CLI::App* cmd = app.add_subcommand(
      "route",
      "Evaluate the batch reorder and the decode/prefill split on an explicit batch, given as\n"
      "q:nct:P per row in persistent-batch order (q scheduled tokens, nct computed tokens, P prompt\n"
      "length). Prints the order after reorder, the split counts and each row's region and path.\n"
      "With --scenario FILE the routing is that scenario's deployment (its model, GPU, TP, KV cache\n"
      "dtype and the backend vLLM 0.33 picks for them, sparse MLA's prefill rules included).\n"
      "Example: mlasim route --batch 1:0:1 --backend flashinfer-mla   (a lone 1-token prompt)\n"
      "         mlasim route --scenario scenarios/deploy/glm5_dsa_h200_tp8.yaml --batch 1:40:30,3000:0:3000");
  cmd->add_option("--batch", o->batch, "Rows as q:nct:P,q:nct:P,...")->required();
  cmd->add_option("--scenario", o->scenario, "Route with this scenario's deployment instead of the flags below");
  cmd->add_option("--set", o->sets, "Override a key of --scenario's file (repeatable)");
  auto* profile = cmd->add_option("--profile", o->profile, "Engine profile (vllm-current is an alias of vllm-0.33)")
      ->check(CLI::IsMember(
          {"vllm-2025-early", "vllm-0.11", "vllm-0.12", "vllm-3region", "vllm-0.33", "vllm-current", "strict",
           "sglang"}));
  auto* backend = cmd->add_option("--backend", o->backend, "Attention backend")
      ->check(CLI::IsMember(attention_backend_names()));
  auto* threshold = cmd->add_option("--threshold", o->threshold, "Override the decode threshold T")->check(CLI::Range(1, std::numeric_limits<int>::max()));
  auto* support = cmd->add_option("--query-len-support", o->query_len_support, "Override: single, uniform or varlen")
      ->check(CLI::IsMember({"single", "uniform", "varlen"}));
  // 1 + k must stay an int (the decode threshold with speculation).
  auto* spec = cmd->add_option("--spec-tokens", o->spec_tokens, "Speculative tokens k")
      ->check(CLI::Range(0, std::numeric_limits<int>::max() - 1));
  cmd->add_flag("--no-reorder", o->no_reorder, "Split the batch in the given order, without reordering");
  cmd->add_flag("--json", o->json, "Print JSON instead of text");
  cmd->callback([o, &exit_code, profile, backend, threshold, support, spec] {
    o->routing_flags_given = profile->count() + backend->count() + threshold->count() + support->count() + spec->count() > 0;
    exit_code = run_route(*o);
  });
}

}  // namespace mlasim::cli
