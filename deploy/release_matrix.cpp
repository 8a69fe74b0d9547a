// The release matrix: the probes replayed under each release's profile and backend.
#include "deploy/release_matrix.h"

#include <fmt/format.h>

#include "deploy/model_families.h"
#include "engine/replay.h"
#include "base/formats/json_writer.h"
#include "scenario/scenario_keys.h"
#include "scenario/scenario_loader.h"
#include "scenario/yaml_document.h"
#include "sim/scheduler_rules.h"

namespace mlasim {
namespace {

using K = AttentionBackendKind;

const std::vector<K> kDense{K::kFlashMla,   K::kFlashAttnMla, K::kFlashInferMla,
                            K::kCutlassMla, K::kTritonMla,    K::kRocmAiterMla};

struct Column {
  const char* heading;
  int k;
  const char* probe_id;
};
constexpr Column kColumns[kReleaseProbeColumns] = {
    {"lone 1-token prompt", 0, "lone_1_token"},
    {"lone 5-token prompt", 0, "lone_5_tokens"},
    {"1-token prompt behind a decode", 0, "behind_decode_1_token"},
    {"short fresh prompt, k=1", 1, "short_fresh"},
    {"short fresh prompt, k=3", 3, "short_fresh"},
};

// The probes' scenario for a release's profile, a backend and k (the budgets of `mlasim deploy`'s).
std::string probe_scenario_yaml(EngineProfile profile, K backend, int k) {
  using V = YamlValue;
  V doc = V::mapping(V::Style::kBlock);
  doc.set("version", V::number(1));
  Scenario s;  // written through the key table
  SchedulerConfig& sc = s.scheduler;
  sc.max_num_batched_tokens = 2048;
  sc.max_num_seqs = 16;
  sc.max_model_len = 4096;
  sc.num_gpu_blocks = 512;
  sc.num_speculative_tokens = k;
  std::vector<const void*> given = {&sc.max_num_batched_tokens, &sc.max_num_seqs, &sc.max_model_len, &sc.num_gpu_blocks};
  if (k > 0) given.push_back(&sc.num_speculative_tokens);
  // vLLM 0.8's V1 engine runs n-gram, not MTP (SchedulerRules::v1_runs_mtp).
  if (k > 0 && !scheduler_rules_for(profile).v1_runs_mtp)
    sc.speculative_method = SpeculativeMethod::kNgram, given.push_back(&sc.speculative_method);
  doc.set("scheduler", keys_yaml(s, given));
  s.engine.profile = profile;
  s.engine.attention_backend = backend;
  doc.set("engine", keys_yaml(s, {&s.engine.profile, &s.engine.attention_backend}));
  doc.set("requests", probe_requests_yaml(k));
  return emit_yaml(doc);
}

std::string cell_text(const ProbeResult* p) {
  if (!p) return "-";
  return fmt::format("{}{} {}/{}", p->decode_path ? "decode" : "prefill", p->fresh_on_decode_path ? "*" : "",
                     p->num_mqa, p->num_mha);
}

const ProbeResult* probe_at(const ReleaseCell& c, int i) {
  const std::size_t at = static_cast<std::size_t>(i);
  return at < c.probes.size() && !c.probes[at].id.empty() ? &c.probes[at] : nullptr;
}

std::string release_heading(const ReleaseCell& c) {
  const ReleaseEntry& r = *c.release;
  return fmt::format("{} (`{}`, model runner {})", r.releases, to_string(r.profile), to_string(c.model_runner));
}

std::string conformance_text(const ReleaseEntry& r) {
  return *r.conformance ? fmt::format("run: vLLM {}", r.conformance) : std::string("not run (read from source)");
}

}  // namespace

const std::vector<ReleaseEntry>& release_table() {
  // Counts: tools/bench/RESULTS.md, "Per-release conformance" (the suite and 300 random traces;
  // a test holds these strings to that file).
  static const std::vector<ReleaseEntry> table{
      {"vLLM 0.33.0", EngineProfile::kVllm033, kDense,
       "0.33.0: suite 41 identical, 0 differing; random 300 identical, 0 differing"},
      {"vLLM 0.14.0 - 0.18.x", EngineProfile::kVllm3Region, kDense,
       "0.16.0: suite 41 identical, 0 differing; random 300 identical, 0 differing"},
      {"vLLM 0.12.0 - 0.13.x", EngineProfile::kVllm012, kDense,
       "0.12.0: suite 41 identical, 0 differing; random 300 identical, 0 differing"},
      {"vLLM 0.11.0", EngineProfile::kVllm011, kDense,
       "0.11.0: suite 41 identical, 0 differing; random 300 identical, 0 differing"},
      {"vLLM 0.8.x", EngineProfile::kVllm2025Early, {K::kFlashMla, K::kTritonMla},
       "0.8.5: suite 41 identical, 0 differing; random 300 identical, 0 differing"},
  };
  return table;
}

const char* release_probe_column(int i) { return kColumns[i].heading; }

Result<std::vector<ReleaseCell>> release_matrix() {
  std::vector<ReleaseCell> cells;
  for (const ReleaseEntry& r : release_table()) {
    for (K backend : r.backends) {
      ReleaseCell cell;
      cell.release = &r;
      cell.backend = backend;
      cell.probes.resize(kReleaseProbeColumns);
      for (int k : {0, 1, 3}) {
        const std::string name = fmt::format("release-matrix {} {} k={}", to_string(r.profile), to_string(backend), k);
        auto loaded = load_scenario_text(probe_scenario_yaml(r.profile, backend, k), name);
        if (!loaded) return loaded.error();
        const Scenario& s = loaded.value();
        if (k == 0) {
          cell.model_runner = s.engine.model_runner;
          cell.decode_threshold = s.deployment.selection.card.reorder_batch_threshold;
        }
        ReplayOptions ro;
        ro.with_model = false;
        const std::vector<ProbeResult> probes = probe_results(replay(s, ro), k);
        for (int i = 0; i < kReleaseProbeColumns; ++i) {
          if (kColumns[i].k != k) continue;
          for (const ProbeResult& p : probes)
            if (p.id == kColumns[i].probe_id) cell.probes[static_cast<std::size_t>(i)] = p;
        }
      }
      cells.push_back(std::move(cell));
    }
  }
  return cells;
}

std::string release_matrix_text(const std::vector<ReleaseCell>& cells) {
  std::string out;
  const ReleaseEntry* last = nullptr;
  for (const ReleaseCell& c : cells) {
    if (c.release != last) {
      out += fmt::format("{}{}: {}\n", last ? "\n" : "", release_heading(c), conformance_text(*c.release));
      out += fmt::format("  {:<16} {:>3}", "backend", "T");
      for (int i = 0; i < kReleaseProbeColumns; ++i) out += fmt::format("  {:<30}", kColumns[i].heading);
      while (out.back() == ' ') out.pop_back();
      out += "\n";
      last = c.release;
    }
    out += fmt::format("  {:<16} {:>3}", to_string(c.backend), c.decode_threshold);
    for (int i = 0; i < kReleaseProbeColumns; ++i) out += fmt::format("  {:<30}", cell_text(probe_at(c, i)));
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "\n";
  }
  out += "\ndecode* = the fresh prompt takes MLA's decode path (the misrouting); a/b = num_mqa/num_mha of its step;\n"
         "k > 0: MTP speculation, n-gram for vLLM 0.8 (its V1 engine runs no MTP)\n";
  return out + model_families_text();
}

std::string release_matrix_markdown(const std::vector<ReleaseCell>& cells) {
  std::string out = "| release (profile, runner; real code run) | backend | T |";
  for (int i = 0; i < kReleaseProbeColumns; ++i) out += fmt::format(" {} |", kColumns[i].heading);
  out += "\n|---|---|---|";
  for (int i = 0; i < kReleaseProbeColumns; ++i) out += "---|";
  out += "\n";
  const ReleaseEntry* last = nullptr;
  for (const ReleaseCell& c : cells) {
    const std::string head =
        c.release == last ? "" : fmt::format("{}; {}", release_heading(c), conformance_text(*c.release));
    last = c.release;
    out += fmt::format("| {} | {} | {} |", head, to_string(c.backend), c.decode_threshold);
    for (int i = 0; i < kReleaseProbeColumns; ++i) out += fmt::format(" {} |", cell_text(probe_at(c, i)));
    out += "\n";
  }
  return out + model_families_markdown();
}

std::string release_matrix_json(const std::vector<ReleaseCell>& cells) {
  JsonWriter w;
  w.begin_object();
  w.key("format").value("mlasim-releases");
  w.key("version").value(1);
  w.key("cells").begin_array();
  for (const ReleaseCell& c : cells) {
    w.begin_object();
    w.key("releases").value(c.release->releases);
    w.key("profile").value(to_string(c.release->profile));
    w.key("conformance").value(c.release->conformance);
    w.key("backend").value(to_string(c.backend));
    w.key("model_runner").value(to_string(c.model_runner));
    w.key("decode_threshold").value(c.decode_threshold);
    w.key("probes").begin_array();
    for (int i = 0; i < kReleaseProbeColumns; ++i) {
      const ProbeResult* p = probe_at(c, i);
      w.begin_object();
      w.key("column").value(kColumns[i].heading);
      w.key(key_of(&Scenario::scheduler, &SchedulerConfig::num_speculative_tokens).name).value(kColumns[i].k);
      w.key("scheduled").value(p != nullptr);
      if (p) {
        w.key("step").value(p->step);
        w.key("q").value(p->q);
        w.key("nct").value(p->nct);
        w.key("path").value(p->decode_path ? "decode" : "prefill");
        w.key("fresh_on_decode_path").value(p->fresh_on_decode_path);
        w.key("num_mqa").value(p->num_mqa);
        w.key("num_mha").value(p->num_mha);
      }
      w.end_object();
    }
    w.end_array();
    w.end_object();
  }
  w.end_array();
  write_model_families_json(w);
  w.end_object();
  return w.str();
}

}  // namespace mlasim
