// The import loop: checks the options, streams records through the skip rules into the request
// file, then writes the YAML and renames both into place.
#include "tools/import/importer.h"

#include <cstdio>
#include <filesystem>
#include <memory>

#include "config/model_config.h"
#include "base/atomic_file.h"
#include "base/output_set.h"
#include "tools/import/azure_reader.h"
#include "tools/import/burstgpt_reader.h"
#include "tools/import/field_parse.h"
#include "tools/import/mooncake_reader.h"
#include "tools/import/request_line.h"
#include "tools/import/scenario_yaml.h"
#include "scenario/scenario_loader.h"

namespace fs = std::filesystem;

namespace mlasim {
namespace {

Error plain_error(std::string file, std::string message, std::string hint) {
  Error e;
  e.file = std::move(file);
  e.message = std::move(message);
  e.hint = std::move(hint);
  return e;
}

std::string plural(long long n, const char* noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); }

std::string skip_reasons(const ImportSummary& s) {
  return std::to_string(s.skipped_zero_output) + " zero-output, " + std::to_string(s.skipped_zero_prompt) +
         " zero-prompt, " + std::to_string(s.skipped_too_long) + " too long for max_model_len " +
         std::to_string(s.max_model_len);
}

std::unique_ptr<TraceReader> make_reader(TraceFormat f, const std::string& path) {
  switch (f) {
    case TraceFormat::kAzure: return make_azure_reader(path);
    case TraceFormat::kBurstGpt: return make_burstgpt_reader(path);
    case TraceFormat::kMooncake: return make_mooncake_reader(path);
  }
  return nullptr;
}

// The output names: SCENARIO.jsonl beside SCENARIO.yaml, the scenario name from the stem.
struct OutputNames {
  std::string yaml, jsonl, jsonl_file, stem;
};

Result<OutputNames> output_names(const ImportOptions& o) {
  const fs::path out(o.output);
  const std::string ext = out.extension().string();
  if (ext != ".yaml" && ext != ".yml")
    return plain_error(o.output, "-o: the scenario file must end in .yaml",
                       "name it SCENARIO.yaml; the requests go to SCENARIO.jsonl beside it");
  OutputNames n;
  n.yaml = o.output;
  n.stem = out.stem().string();
  n.jsonl = fs::path(out).replace_extension(".jsonl").string();
  n.jsonl_file = n.stem + ".jsonl";
  if (n.stem.empty() || n.stem[0] == '.')
    return plain_error(o.output, "-o: the file name must not start with '.'", "the stem names the scenario");
  for (unsigned char c : n.stem)
    if (c < 0x20 || c == 0x7f)
      return plain_error(o.output, "-o: control character in the file name", "the stem names the scenario");
  const fs::path parent = out.parent_path();
  std::error_code ec;
  if (!parent.empty() && !fs::is_directory(parent, ec))
    return plain_error(o.output, "-o: the directory " + parent.string() + " does not exist",
                       "create it first, or write the scenario elsewhere");
  for (const std::string& target : {n.jsonl, n.yaml})
    if (fs::equivalent(o.input, target, ec))
      return plain_error(o.output, "-o: " + target + " is the input trace itself",
                         "write the scenario under another name so the trace is not overwritten");
  return n;
}

// The scheduler and model keys the importer writes, before --set.
void default_scenario(YamlValue& y, const ImportOptions& o, const OutputNames& n) {
  set_scalar(y, "version", "1");
  set_scalar(y, "name", n.stem);
  set_scalar(y, "description", "");
  set_scalar(y, "model.preset", o.model_preset, "--model");
  set_scalar(y, "scheduler.max_num_batched_tokens", "8192");
  set_scalar(y, "scheduler.max_num_seqs", "256");
  set_scalar(y, "scheduler.num_gpu_blocks", "32768");
  set_scalar(y, "scheduler.enable_chunked_prefill", "true");
  set_scalar(y, "scheduler.enable_prefix_caching", "true");
  set_scalar(y, "requests_file", n.jsonl_file);
}

Error origin_error(const YamlValue& y, const std::string& key, std::string message, std::string hint) {
  const std::string& origin = find_scalar(y, key)->origin();
  Error e = plain_error(origin, std::move(message), std::move(hint));
  e.key_path = key;
  if (origin.rfind("<--set ", 0) == 0) {
    e.line = 1;
    e.column = static_cast<int>(origin.find('=')) - 5;  // first character of the value ("<--set " is 7)
  }
  return e;
}

// max_model_len for the skip rule: scheduler.max_model_len if set, else the model's
// max_position_embeddings (set, or the preset's), as the scenario loader derives it.
Result<long long> resolve_max_model_len(const YamlValue& y) {
  const std::string& preset = find_scalar(y, "model.preset")->text();
  std::optional<ModelConfig> model = model_preset(preset);
  if (!model) {
    std::string known;
    for (const std::string& p : model_preset_names()) known += (known.empty() ? "" : ", ") + p;
    return origin_error(y, "model.preset", "unknown model preset \"" + preset + "\"", "known presets: " + known);
  }
  long long len = model->max_position_embeddings;
  for (const char* key : {"model.max_position_embeddings", "scheduler.max_model_len"}) {
    const YamlValue* found = find_scalar(y, key);
    if (!found) continue;
    const std::string* v = &found->text();
    if (std::optional<FieldProblem> p = parse_count(*v, len); p || len < 2)
      return origin_error(y, key, "expected a whole number >= 2, found \"" + *v + "\"",
                          "prompts of max_model_len tokens or more are skipped");
  }
  return len;
}

}  // namespace

std::optional<TraceFormat> parse_trace_format(std::string_view name) {
  if (name == "azure") return TraceFormat::kAzure;
  if (name == "burstgpt") return TraceFormat::kBurstGpt;
  if (name == "mooncake") return TraceFormat::kMooncake;
  return std::nullopt;
}

const char* to_string(TraceFormat f) {
  switch (f) {
    case TraceFormat::kAzure: return "azure";
    case TraceFormat::kBurstGpt: return "burstgpt";
    case TraceFormat::kMooncake: return "mooncake";
  }
  return "?";
}

namespace {

// The scenario import writes (the --set entries applied), with one stand-in request for the file's,
// as the scenario loader reads it: an unknown key or a value `run` refuses is an error here, named
// by the --set that wrote it, before anything is read or written.
Status check_sets(const YamlValue& scenario, const std::vector<std::string>& sets) {
  if (sets.empty()) return {};
  YamlValue probe = scenario;
  probe.erase("requests_file");
  YamlValue request = YamlValue::mapping(YamlValue::Style::kFlow);
  request.set("id", YamlValue::plain("stand_in"));
  request.set("prompt_len", YamlValue::number(1));
  request.set("max_tokens", YamlValue::number(1));
  probe.set("requests", YamlValue::sequence(YamlValue::Style::kBlock)).push(std::move(request));
  auto loaded = load_scenario_text(emit_yaml(probe), "<the imported scenario>");
  if (loaded) return {};
  Error e = loaded.error();
  for (auto it = sets.rbegin(); it != sets.rend(); ++it) {  // the last --set of a key wins
    const std::string key = it->substr(0, it->find('='));
    const std::string& k = e.key_path;
    if (k == key || k.rfind(key + ".", 0) == 0 || key.rfind(k + ".", 0) == 0) {
      e.file = "<--set " + *it + ">";
      e.line = 1;
      e.column = e.message.find("unknown key") != std::string::npos ? 1 : static_cast<int>(key.size()) + 2;
      break;
    }
  }
  return e;
}

}  // namespace

Result<ImportSummary> import_trace(const ImportOptions& o) {
  if (o.limit < 0) return plain_error("--limit", "expected a number >= 1", "--limit N imports the first N requests");
  Result<OutputNames> names = output_names(o);
  if (!names) return names.error();
  const OutputNames& n = names.value();
  YamlValue yaml = YamlValue::mapping(YamlValue::Style::kBlock);
  default_scenario(yaml, o, n);
  for (const std::string& set : o.sets)
    if (Status st = apply_import_set(yaml, set); !st) return st.error();
  Result<long long> max_model_len = resolve_max_model_len(yaml);
  if (!max_model_len) return max_model_len.error();
  if (Status st = check_sets(yaml, o.sets); !st) return st.error();

  ImportSummary s;
  s.input = o.input;
  s.yaml_path = n.yaml;
  s.jsonl_path = n.jsonl;
  s.max_model_len = max_model_len.value();
  s.limit = o.limit;
  std::unique_ptr<TraceReader> reader = make_reader(o.format, o.input);
  if (Status st = reader->open(); !st) return st.error();
  for (const std::string& note : recover_output_leftovers({n.jsonl, n.yaml}))
    std::fprintf(stderr, "note: %s\n", note.c_str());
  AtomicOutputFile jsonl;
  if (Status st = jsonl.open(n.jsonl); !st) return st.error();

  TraceRecord rec;
  std::string prev_text;  // the previous request's timestamp as written
  int prev_line = 0;
  long long prev_ns = 0, first_ns = 0;
  std::string line;
  const bool hashes = reader->has_hash_ids();
  for (;;) {
    bool done = false;
    if (Status st = reader->next(rec, done); !st) return st.error();
    if (done) break;
    if (prev_line > 0 && rec.time_ns < prev_ns)
      return trace_error(o.input, rec.line, rec.time_column, reader->time_key(),
                         "arrival time goes back: " + std::string(rec.time_text) + " is earlier than " + prev_text +
                             " on line " + std::to_string(prev_line),
                         "requests must be in arrival order: sort the trace by " + std::string(reader->time_key()));
    prev_text.assign(rec.time_text);
    prev_line = rec.line;
    prev_ns = rec.time_ns;
    if (rec.output_len == 0) {
      ++s.skipped_zero_output;
    } else if (rec.prompt_len == 0) {
      ++s.skipped_zero_prompt;
    } else if (rec.prompt_len >= s.max_model_len) {
      ++s.skipped_too_long;
    } else {
      if (s.imported == 0) first_ns = rec.time_ns;
      // The scenario's arrival_time is seconds since the first request, at most 1e9 (31.7 years).
      if (rec.time_ns - first_ns > 1'000'000'000LL * 1'000'000'000LL)
        return trace_error(o.input, rec.line, rec.time_column, reader->time_key(),
                           std::string(rec.time_text) + " arrives more than 1e9 seconds after the first request (" +
                               std::to_string((rec.time_ns - first_ns) / 1'000'000'000LL) + " s)",
                           "a scenario's arrival_time is at most 1e9 seconds: is this timestamp's unit or year "
                           "right?");
      s.duration_us = (rec.time_ns - first_ns + 500) / 1000;
      line.clear();
      append_request_line(line, s.duration_us, rec.prompt_len, rec.output_len, hashes ? &rec.hash_ids : nullptr);
      jsonl.write(line);  // a write error is reported by finish()
      ++s.imported;
      s.prompt_tokens += static_cast<double>(rec.prompt_len);
      s.output_tokens += static_cast<double>(rec.output_len);
      if (s.imported == o.limit) {
        s.stopped_at_limit = true;
        break;
      }
    }
  }
  if (s.imported == 0)
    return plain_error(o.input,
                       "no request to import: " + plural(s.skipped(), "request") + " skipped (" + skip_reasons(s) + ")",
                       "a scenario needs at least one request with a prompt and an output that fit max_model_len");

  if (find_scalar(yaml, "description")->origin().empty()) {
    std::string d = "Imported by mlasim import " + std::string(to_string(o.format)) + " from " +
                    fs::path(o.input).filename().string() + ": " + plural(s.imported, "request") + ", " +
                    std::to_string(s.skipped()) + " skipped (" + skip_reasons(s) + ")";
    if (s.stopped_at_limit) d += ", stopped at --limit " + std::to_string(o.limit);
    set_scalar(yaml, "description", d + ".");
  }
  const std::string text = emit_yaml(yaml, "Written by `mlasim import " + std::string(to_string(o.format)) +
                                                "` from " + fs::path(o.input).filename().string() +
                                                "; the requests are in " + n.jsonl_file + ".");
  AtomicOutputFile yaml_file;
  if (Status st = yaml_file.open(n.yaml); !st) return st.error();
  yaml_file.write(text);
  if (Status st = jsonl.finish(); !st) return st.error();
  if (Status st = yaml_file.finish(); !st) return st.error();
  if (Status st = publish_together({&jsonl, &yaml_file}); !st) return st.error();  // the requests, then their scenario
  return s;
}

std::string format_import_summary(const ImportSummary& s) {
  std::string out = "imported " + plural(s.imported, "request") + " (" + std::to_string(s.skipped()) +
                    " skipped: " + skip_reasons(s) + ") from " + s.input + " -> " + s.yaml_path + " + " + s.jsonl_path +
                    "\n";
  std::string span;
  append_seconds(span, s.duration_us);
  char means[96];
  std::snprintf(means, sizeof means, "mean prompt %.1f tokens, mean output %.1f tokens",
                s.prompt_tokens / static_cast<double>(s.imported), s.output_tokens / static_cast<double>(s.imported));
  out += "spread: arrivals over " + span + " s, " + means;
  if (s.stopped_at_limit) out += " (stopped at --limit " + std::to_string(s.limit) + ")";
  return out + "\n";
}

}  // namespace mlasim
