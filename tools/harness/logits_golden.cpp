// Logits files and goldens.
#include "tools/harness/logits_golden.h"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "sim/seeded_tokens.h"
#include "tools/harness/atomic_file.h"
#include "tools/harness/json_value.h"
#include "tools/harness/json_writer.h"
#include "tools/harness/npy.h"
#include "tools/harness/split_golden.h"

namespace mlasim {
namespace {

std::string index_json(const LogitsRecord& logits) {
  JsonWriter w;
  w.begin_object();
  w.key("format").value("mlasim-logits-index");
  w.key("version").value(1);
  w.key("vocab_size").value(logits.vocab_size);
  w.key("rows").begin_array();
  for (const LogitsRow& r : logits.index) {
    w.begin_object();
    w.key("step").value(r.step);
    w.key("id").value(r.id);
    w.key("position").value(r.position);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.str();
}

Error file_error(const std::string& path, const std::string& key, const std::string& message) {
  Error e;
  e.file = path;
  e.key_path = key;
  e.message = message;
  e.hint = "regenerate goldens with `mlasim golden update`; never edit them by hand";
  return e;
}

std::string yaml_tolerance(const LogitsTolerance& t) {
  return fmt::format("  {}:\n    abs: {:g}\n    rel: {:g}\n    cos: {:g}\n    reason: \"{}\"\n", t.name, t.abs_tol,
                     t.rel_tol, t.cos_tol, t.reason);
}

}  // namespace

Status write_logits_files(const std::string& dir, const LogitsRecord& logits) {
  const long rows = static_cast<long>(logits.index.size());
  if (Status st = write_file_atomically(dir + "/logits.npy", npy_float32_bytes(rows, logits.vocab_size, logits.values));
      !st)
    return st;
  return write_file_atomically(dir + "/logits_index.json", index_json(logits));
}

std::string model_fingerprint(const ModelConfig& m) {
  const std::string canon =
      fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{:.17g}|{:.17g}|{:.17g}|{:.17g}|{}|{:.17g}|{:.17g}|{}|{}",
                  m.vocab_size, m.hidden_size, m.num_hidden_layers, m.num_attention_heads, m.q_lora_rank,
                  m.kv_lora_rank, m.qk_nope_head_dim, m.qk_rope_head_dim, m.v_head_dim, m.intermediate_size,
                  m.max_position_embeddings, m.rms_norm_eps, m.rope_theta, m.rope_scaling_factor, m.mscale_all_dim,
                  m.original_max_position_embeddings, m.beta_fast, m.beta_slow, m.seed, m.eos_token_id);
  return fmt::format("{:016x}", stable_hash(canon));
}

Status write_logits_golden(const std::string& dir, const Scenario& scenario, const LogitsRecord& logits,
                           const std::string& generator) {
  LogitsRecord exact = logits;
  if (!logits.values_f64.empty())  // the golden keeps the double values rounded once, to float32
    for (std::size_t i = 0; i < exact.values.size(); ++i) exact.values[i] = static_cast<float>(logits.values_f64[i]);
  if (Status st = write_logits_files(dir, exact); !st) return st;
  std::string meta = "# Written by `mlasim golden update`; never edited by hand.\n";
  meta += "format: 1\n";
  meta += fmt::format("scenario: {}\n", scenario.name);
  meta += fmt::format("fingerprint: {}\n", scenario_fingerprint(scenario));
  meta += fmt::format("model_hash: {}\n", model_fingerprint(scenario.model));
  meta += fmt::format("generator: \"{}\"\n", generator);
  meta += "reference:\n  backend: cpu\n  precision: fp64\n  tensor_parallel_size: 1\n";
  meta += "  path: prefill  # every token through the MHA form, whatever the profile routes\n";
  meta += "  stored_as: float32\n";
  meta += fmt::format("rows: {}\nvocab_size: {}\n", logits.index.size(), logits.vocab_size);
  meta += "tolerances:  # the class is chosen by the precision of the backend under test\n";
  meta += yaml_tolerance(logits_tolerance(PrecisionClass::kFp64)) + yaml_tolerance(logits_tolerance(PrecisionClass::kFp32)) +
          yaml_tolerance(logits_tolerance(PrecisionClass::kBf16));
  return write_file_atomically(dir + "/meta.yaml", meta);
}

Result<LogitsFiles> read_logits_files(const std::string& dir) {
  LogitsFiles f;
  Result<NpyArray> npy = read_npy(dir + "/logits.npy");
  if (!npy) return npy.error();
  f.rows = static_cast<long>(npy.value().rows);
  f.cols = static_cast<long>(npy.value().cols);
  f.values = std::move(npy.value().data);
  const std::string index_path = dir + "/logits_index.json";
  std::ifstream in(index_path, std::ios::binary);
  if (!in) return file_error(index_path, "", "cannot read the file");
  std::ostringstream buf;
  buf << in.rdbuf();
  Result<JsonValue> json = parse_json(buf.str(), index_path);
  if (!json) return json.error();
  const JsonValue* rows = json.value().find("rows");
  if (!rows || !rows->is_array()) return file_error(index_path, "rows", "missing the rows list");
  for (std::size_t i = 0; i < rows->array().size(); ++i) {
    const JsonValue& r = rows->array()[i];
    const JsonValue *step = r.find("step"), *id = r.find("id"), *pos = r.find("position");
    if (!step || !step->is_number() || !id || !id->is_string() || !pos || !pos->is_number())
      return file_error(index_path, fmt::format("rows[{}]", i), "needs step (number), id (string), position (number)");
    f.index.push_back({static_cast<int>(step->number()), id->string(), static_cast<int>(pos->number())});
  }
  if (static_cast<long>(f.index.size()) != f.rows)
    return file_error(index_path, "rows", fmt::format("lists {} rows but logits.npy has {}", f.index.size(), f.rows));
  return f;
}

LogitsCheck check_logits_against(const LogitsFiles& golden, const LogitsRecord& actual, const LogitsTolerance& tol,
                                 const std::string& golden_dir) {
  LogitsCheck c;
  const std::size_t n = std::max(golden.index.size(), actual.index.size());
  for (std::size_t i = 0; i < n; ++i) {
    auto show = [](const std::vector<LogitsRow>& v, std::size_t k) {
      return k < v.size() ? fmt::format("step {} {} position {}", v[k].step, v[k].id, v[k].position)
                          : std::string("(no more rows)");
    };
    const bool same = i < golden.index.size() && i < actual.index.size() &&
                      golden.index[i].step == actual.index[i].step && golden.index[i].id == actual.index[i].id &&
                      golden.index[i].position == actual.index[i].position;
    if (!same) {
      c.pass = false;
      c.message = fmt::format("{}/logits_index.json: logits row {} differs: expected {}, got {}", golden_dir, i,
                              show(golden.index, i), show(actual.index, i));
      return c;
    }
  }
  std::vector<double> values(actual.values.begin(), actual.values.end());
  if (!actual.values_f64.empty()) values = actual.values_f64;
  LogitsComparison cmp = compare_logits(values, golden.values, golden.rows, golden.cols, tol);
  std::vector<std::string> labels;
  for (const LogitsRow& r : golden.index)
    labels.push_back(fmt::format("step {} {} position {}", r.step, r.id, r.position));
  c.pass = cmp.pass;
  c.message = cmp.summary(tol, labels);
  c.compared = true;
  c.comparison = cmp;
  c.tolerance = tol;
  auto at = [&](long row, long col) {
    return row >= 0 && row < static_cast<long>(labels.size())
               ? fmt::format("{} token {}", labels[static_cast<std::size_t>(row)], col)
               : std::string();
  };
  c.max_abs_at = at(cmp.max_abs_row, cmp.max_abs_col);
  c.max_rel_at = at(cmp.max_rel_row, cmp.max_rel_col);
  if (cmp.first_top1_mismatch_row >= 0 && cmp.first_top1_mismatch_row < static_cast<long>(labels.size()))
    c.first_top1_mismatch_at = labels[static_cast<std::size_t>(cmp.first_top1_mismatch_row)];
  return c;
}

}  // namespace mlasim
