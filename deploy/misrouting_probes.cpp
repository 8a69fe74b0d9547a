// The misrouting report's probes and their outcome in a replay.
#include "deploy/misrouting_probes.h"

namespace mlasim {

std::vector<ProbeSpec> misrouting_probe_specs(int k) {
  std::vector<ProbeSpec> specs{
      {"lone 1-token prompt", "lone_1_token", 0, 1, 1},
      {"lone 5-token prompt", "lone_5_tokens", 1, 5, 1},
      {"decode in flight", "decoder", 2, 10, 6},
      {"1-token prompt behind a decode", "behind_decode_1_token", 3, 1, 1},
  };
  if (k > 0) specs.push_back({"short fresh prompt (1 + k tokens)", "short_fresh", 12, 1 + k, 1});
  return specs;
}

YamlValue probe_requests_yaml(int k) {
  using V = YamlValue;
  V requests = V::sequence(V::Style::kBlock);
  for (const ProbeSpec& p : misrouting_probe_specs(k)) {
    V r = V::mapping(V::Style::kFlow);
    r.set("id", V::plain(p.id));
    r.set("arrival_step", V::number(p.arrival_step));
    r.set("prompt_len", V::number(p.prompt_len));
    r.set("max_tokens", V::number(p.max_tokens));
    r.set("ignore_eos", V::boolean(true));
    requests.push(std::move(r)).comment(p.name);
  }
  return requests;
}

std::vector<ProbeResult> probe_results(const RunRecord& run, int k) {
  std::vector<ProbeResult> results;
  for (const ProbeSpec& p : misrouting_probe_specs(k)) {
    if (std::string(p.id) == "decoder") continue;  // the backdrop of the next probe
    for (const StepRecord& step : run.steps) {
      const RowRecord* row = nullptr;
      for (const RowRecord& r : step.rows)
        if (run.names[r.index] == p.id) row = &r;
      if (!row) continue;
      ProbeResult d;
      d.name = p.name;
      d.id = p.id;
      d.step = step.step;
      d.q = row->q;
      d.nct = row->nct;
      d.prompt_len = row->prompt_len;
      d.decode_path = row->path == MlaPath::kMqa;
      d.fresh_on_decode_path = row->fresh_on_decode_path;
      d.num_mqa = step.counts.num_mqa_tokens;
      d.num_mha = step.counts.num_mha_tokens;
      d.has_linear_attention = step.has_linear_attention;
      d.linear_attention = step.linear_attention;
      results.push_back(d);
      break;
    }
  }
  return results;
}

}  // namespace mlasim
