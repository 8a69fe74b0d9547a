// Filling the routing matrix with the fuzzer and shrinker, and printing it.
#include "tools/fuzz/matrix.h"

#include <fmt/format.h>

#include "harness/ordered_pool.h"
#include "scenario/scenario_keys.h"
#include "sim/scheduler_rules.h"
#include "tools/fuzz/finding.h"
#include "tools/fuzz/fuzzer.h"
#include "tools/fuzz/shrinker.h"
#include "base/formats/json_writer.h"

namespace mlasim {
namespace {

constexpr EngineProfile kProfiles[] = {EngineProfile::kVllm033, EngineProfile::kStrict, EngineProfile::kSglang,
                                       EngineProfile::kVllm3Region, EngineProfile::kVllm012,
                                       EngineProfile::kVllm011,     EngineProfile::kVllm2025Early};
constexpr AttentionBackendKind kBackends[] = {
    AttentionBackendKind::kFlashMla,   AttentionBackendKind::kFlashAttnMla, AttentionBackendKind::kFlashInferMla,
    AttentionBackendKind::kCutlassMla, AttentionBackendKind::kTritonMla,    AttentionBackendKind::kRocmAiterMla};
constexpr int kSpecTokens[] = {0, 1, 3};

// The cell's base: the tiny model, every other key at its default; max_model_len small enough
// that chunked prefill can be off (max_num_batched_tokens >= max_model_len).
Scenario cell_base(const MatrixCell& c) {
  Scenario s;
  s.model = *model_preset("tiny");
  s.engine.profile = c.profile;
  s.engine.attention_backend = c.backend;
  s.scheduler.rules = scheduler_rules_for(c.profile);
  s.scheduler.num_speculative_tokens = c.num_speculative_tokens;
  // vLLM 0.8's V1 engine runs no MTP: its cells speculate with n-gram.
  if (!s.scheduler.rules.v1_runs_mtp) s.scheduler.speculative_method = SpeculativeMethod::kNgram;
  s.scheduler.enable_chunked_prefill = c.chunked_prefill;
  s.scheduler.max_model_len = c.chunked_prefill ? s.model.max_position_embeddings : 1024;
  return s;
}

void fill_cell(MatrixCell& c, const MatrixOptions& options) {
  FuzzOptions fo;
  fo.distribution.base = cell_base(c);
  // The cell pins profile, backend, k and chunking; the backend's own T is kept.
  fo.distribution.vary = static_cast<unsigned>(Knob::kThresholds) | static_cast<unsigned>(Knob::kBudgets) |
                         static_cast<unsigned>(Knob::kBlocks) | static_cast<unsigned>(Knob::kPrefixCaching);
  fo.properties.properties = {Property::kNoFreshPrefillOnDecodePath};
  fo.seed = options.seed;
  fo.max_runs = options.runs;
  const FuzzResult found = fuzz(fo);
  c.runs = found.runs;
  if (!found.violation) return;
  ShrinkOptions so;
  so.property = Property::kNoFreshPrefillOnDecodePath;
  so.keep_keys = {"scheduler.num_speculative_tokens", "scheduler.enable_chunked_prefill"};
  ShrinkResult shrunk = shrink(*found.trace, *found.violation, so);
  c.smallest = std::move(shrunk.scenario);
  c.violation = std::move(shrunk.violation);
  if (!options.with_model) return;
  const std::optional<Violation> differs = check_property(*c.smallest, Property::kSameLogitsAsStrict, options.faults);
  c.logits_change = differs.has_value();
  c.logits_detail = differs ? differs->detail : "";
}

std::string found_text(const MatrixCell& c, const MatrixOptions& o) {
  return c.smallest ? describe_batch(*c.smallest) : fmt::format("none found in {} runs", o.runs);
}

std::string logits_text(const MatrixCell& c) {
  if (!c.logits_change) return "-";
  return *c.logits_change ? "changed" : "same";
}

}  // namespace

std::size_t matrix_num_cells() { return std::size(kProfiles) * std::size(kBackends) * std::size(kSpecTokens) * 2; }

std::vector<MatrixCell> routing_matrix(const MatrixOptions& options) {
  std::vector<MatrixCell> cells;
  std::size_t index = 0;
  for (EngineProfile p : kProfiles)
    for (AttentionBackendKind b : kBackends)
      for (int k : kSpecTokens)
        for (bool chunked : {true, false}) {
          const std::size_t i = index++;
          if (options.shard && static_cast<int>(i % static_cast<std::size_t>(options.shard->total)) != options.shard->index)
            continue;
          MatrixCell c;
          c.profile = p;
          c.backend = b;
          c.num_speculative_tokens = k;
          c.chunked_prefill = chunked;
          cells.push_back(std::move(c));
        }
  run_ordered(cells.size(), options.jobs, [&](std::size_t i) { fill_cell(cells[i], options); }, [](std::size_t) {});
  return cells;
}

std::string matrix_text(const std::vector<MatrixCell>& cells, const MatrixOptions& options) {
  auto line = [&](const std::string& profile, const std::string& backend, const std::string& k,
                  const std::string& chunked, const std::string& batch, const std::string& logits) {
    std::string l = fmt::format("{:<16} {:<15} {:>1} {:<7} {:<54} {}", profile, backend, k, chunked, batch,
                                options.with_model ? logits : "");
    return l.erase(l.find_last_not_of(' ') + 1) + "\n";
  };
  std::string out = line("profile", "backend", "k", "chunked", "smallest batch with a fresh prefill on the decode path",
                         "logits (fp64) vs strict");
  for (const MatrixCell& c : cells)
    out += line(to_string(c.profile), to_string(c.backend), std::to_string(c.num_speculative_tokens),
                c.chunked_prefill ? "on" : "off", found_text(c, options), logits_text(c));
  return out;
}

std::string matrix_markdown(const std::vector<MatrixCell>& cells, const MatrixOptions& options) {
  std::string out = "| profile | backend | k | chunked prefill | smallest batch with a fresh prefill on the decode path |";
  out += options.with_model ? " logits (fp64) vs strict |\n|---|---|---|---|---|---|\n" : "\n|---|---|---|---|---|\n";
  for (const MatrixCell& c : cells)
    out += fmt::format("| {} | {} | {} | {} | {} |{}\n", to_string(c.profile), to_string(c.backend),
                       c.num_speculative_tokens, c.chunked_prefill ? "on" : "off", found_text(c, options),
                       options.with_model ? " " + logits_text(c) + " |" : "");
  return out;
}

std::string matrix_json(const std::vector<MatrixCell>& cells, const MatrixOptions& options) {
  JsonWriter w;
  w.begin_object();
  w.key("format").value("mlasim-matrix");
  w.key("version").value(1);
  if (options.shard) {
    w.key("shard").begin_object();
    w.key("index").value(options.shard->index);
    w.key("count").value(options.shard->total);
    w.key("num_cells").value(static_cast<long long>(matrix_num_cells()));
    w.end_object();
  }
  w.key("seed").value(static_cast<long long>(options.seed));
  w.key("runs_per_cell").value(options.runs);
  w.key("with_model").value(options.with_model);
  w.key("faults").value(options.faults.to_string());
  w.key("cells").begin_array();
  for (const MatrixCell& c : cells) {
    w.begin_object();
    const Scenario base = cell_base(c);  // the cell's settings, named as their scenario keys
    for (const void* member : std::initializer_list<const void*>{&base.engine.profile, &base.engine.attention_backend,
                               &base.scheduler.num_speculative_tokens, &base.scheduler.enable_chunked_prefill})
      write_key_json(w, key_of(base, member), base);
    w.key("runs").value(c.runs);
    w.key("found").value(c.smallest.has_value());
    if (c.smallest) {
      w.key("batch").value(describe_batch(*c.smallest));
      w.key("requests").begin_array();
      for (const RequestSpec& r : c.smallest->requests) {
        w.begin_object();
        w.key("id").value(r.id);
        w.key("arrival_step").value(r.arrival_step);
        w.key("prompt_len").value(static_cast<int>(r.prompt.size()));
        w.key("max_tokens").value(r.max_tokens);
        w.end_object();
      }
      w.end_array();
      w.key("step").value(c.violation->step);
      w.key("detail").value(c.violation->detail);
    }
    if (c.logits_change) {
      w.key("logits_change").value(*c.logits_change);
      w.key("logits_detail").value(c.logits_detail);
    }
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.str();
}

}  // namespace mlasim
