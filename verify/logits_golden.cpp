// Logits files and goldens.
#include "verify/logits_golden.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "attention/kv_cache_quant.h"
#include "base/file_read.h"
#include "config/mla_backends.h"
#include "config/seeded_tokens.h"
#include "scenario/yaml_reader.h"
#include "scenario/yaml_tree.h"
#include "base/atomic_file.h"
#include "base/formats/json_value.h"
#include "verify/logits_stream.h"
#include "base/formats/npy.h"
#include "verify/split_golden.h"

namespace mlasim {
namespace {

// FNV-1a 64 of the npy file's bytes, as 16 hex digits: binds the index to its array.
std::string npy_fingerprint(const std::string& bytes) {
  return fmt::format("{:016x}", stable_hash(bytes));
}

constexpr const char* kRegenerateHint = "regenerate goldens with `mlasim golden update`; never edit them by hand";

Error file_error(const std::string& path, const std::string& key, const std::string& message) {
  Error e;
  e.file = path;
  e.key_path = key;
  e.message = message;
  e.hint = kRegenerateHint;
  return e;
}

std::string yaml_tolerance(const LogitsTolerance& t) {
  return fmt::format("  {}:\n    abs: {:g}\n    rel: {:g}\n    cos: {:g}\n    reason: \"{}\"\n", t.name, t.abs_tol,
                     t.rel_tol, t.cos_tol, t.reason);
}

}  // namespace

std::string logits_row_label(int step, std::string_view id, int position) {
  return fmt::format("step {} {} position {}", step, id, position);
}

Status write_logits_files(const std::string& dir, const LogitsRecord& logits, const RequestNames& names) {
  LogitsFilesStream files;
  if (Status st = files.open(dir, logits.vocab_size); !st) return st;
  files.add(logits, names);
  if (Status st = files.finish(); !st) return st;
  return files.publish();
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

namespace {

// The tolerance classes a golden lists: on an fp8 cache also its format's class (the float CPU
// backend's) and fp8_bf16 (the CUDA backend's).
std::vector<PrecisionClass> golden_precision_classes(const Scenario& scenario) {
  std::vector<PrecisionClass> v{PrecisionClass::kFp64, PrecisionClass::kFp32, PrecisionClass::kBf16};
  const KvCacheQuantKind kind = scenario_kv_cache_quant(scenario).quant.kind;
  if (kind != KvCacheQuantKind::kNone) {
    v.push_back(kind == KvCacheQuantKind::kFp8DsMla ? PrecisionClass::kFp8DsMla : PrecisionClass::kFp8);
    v.push_back(PrecisionClass::kFp8Bf16);
  }
  return v;
}

}  // namespace

Status write_logits_golden(const std::string& dir, const Scenario& scenario, const LogitsRecord& logits,
                           const RequestNames& names, const std::string& generator) {
  LogitsRecord exact = logits;
  if (!logits.values_f64.empty())  // the golden keeps the double values rounded once, to float32
    for (std::size_t i = 0; i < exact.values.size(); ++i) exact.values[i] = static_cast<float>(logits.values_f64[i]);
  if (Status st = write_logits_files(dir, exact, names); !st) return st;
  std::string meta = "# Written by `mlasim golden update`; never edited by hand.\n";
  meta += "format: 1\n";
  meta += fmt::format("scenario: {}\n", scenario.name);
  meta += fmt::format("fingerprint: {}\n", scenario_fingerprint(scenario));
  meta += fmt::format("model_hash: {}\n", model_fingerprint(scenario.model));
  meta += fmt::format("generator: \"{}\"\n", generator);
  meta += "reference:\n  backend: cpu\n  precision: fp64\n  tensor_parallel_size: 1\n";
  const KvCacheQuant quant = scenario_kv_cache_quant(scenario).quant;
  meta += quant.quantized() ? "  path: routed  # an fp8 KV cache: every token through the form the profile routes it to\n"
                            : "  path: prefill  # every token through the MHA form, whatever the profile routes\n";
  if (quant.quantized())  // what the numpy oracle needs to quantize as the cache does (tools/oracle/)
    meta += fmt::format("  kv_cache: {{format: {}, backend: {}, writer_input: {}}}\n", to_string(quant.kind),
                        vllm_backend_name(scenario.engine.attention_backend), quant.input_bf16 ? "bf16" : "float32");
  meta += "  stored_as: float32\n";
  meta += fmt::format("rows: {}\nvocab_size: {}\n", logits.index.size(), logits.vocab_size);
  meta += "tolerances:  # the class is chosen by the precision of the backend under test\n";
  for (PrecisionClass pc : golden_precision_classes(scenario)) meta += yaml_tolerance(logits_tolerance(pc));
  return write_file_atomically(dir + "/meta.yaml", meta);
}

Result<LogitsFiles> read_logits_files(const std::string& dir) {
  LogitsFiles f;
  const std::string npy_path = dir + "/logits.npy";
  Result<std::string> npy_bytes = read_file_bounded(npy_path, kMaxNpyBytes, "the .npy file");
  if (!npy_bytes) return npy_bytes.error();
  Result<NpyArray> npy = parse_npy(npy_bytes.value(), npy_path);
  if (!npy) return npy.error();
  f.rows = static_cast<long>(npy.value().rows);
  f.cols = static_cast<long>(npy.value().cols);
  f.values = std::move(npy.value().data);
  const std::string index_path = dir + "/logits_index.json";
  Result<std::string> text = read_file_bounded(index_path, kMaxGoldenTextBytes, "the logits index");
  if (!text) return text.error();
  Result<JsonValue> json = parse_json(text.value(), index_path);
  if (!json) return json.error();
  const JsonValue& doc = json.value();
  if (!doc.is_object()) return file_error(index_path, "", "expected a JSON object");
  const JsonValue* format = doc.find("format");
  if (!format || !format->is_string() || format->string() != "mlasim-logits-index")
    return file_error(index_path, "format", "expected \"mlasim-logits-index\"");
  const JsonValue* version = doc.find("version");
  if (!version || !version->is_number() || version->number() != 1)
    return file_error(index_path, "version", "expected version 1 (the only one this mlasim reads)");
  const JsonValue* vocab = doc.find("vocab_size");
  if (!vocab || !vocab->is_number() || vocab->number() != static_cast<double>(f.cols))
    return file_error(index_path, "vocab_size", fmt::format("expected {}, the columns of logits.npy", f.cols));
  const JsonValue* bound = doc.find("logits_npy_fnv1a64");
  const std::string npy_hash = npy_fingerprint(npy_bytes.value());
  if (!bound || !bound->is_string() || bound->string() != npy_hash) {
    Error e = file_error(index_path, "logits_npy_fnv1a64",
                         fmt::format("the index belongs to another logits.npy (it names {}, the file is {}): the two "
                                     "files come from different writes",
                                     bound && bound->is_string() ? bound->string() : "none", npy_hash));
    e.hint = "an interrupted or mixed write; write both again (`mlasim golden update` for a golden)";
    return e;
  }
  // A whole number in [0, 2^31): steps and positions are ints.
  auto whole = [](const JsonValue* v) {
    return v && v->is_number() && v->number() >= 0 && v->number() < 2147483648.0 &&
           v->number() == static_cast<double>(static_cast<long long>(v->number()));
  };
  const JsonValue* rows = doc.find("rows");
  if (!rows || !rows->is_array()) return file_error(index_path, "rows", "missing the rows list");
  for (std::size_t i = 0; i < rows->array().size(); ++i) {
    const JsonValue& r = rows->array()[i];
    const JsonValue *step = r.find("step"), *id = r.find("id"), *pos = r.find("position");
    if (!r.is_object() || !whole(step) || !id || !id->is_string() || !whole(pos))
      return file_error(index_path, fmt::format("rows[{}]", i),
                        "needs step and position (whole numbers >= 0) and id (a string)");
    f.index.push_back({static_cast<int>(step->number()), id->string(), static_cast<int>(pos->number())});
  }
  if (static_cast<long>(f.index.size()) != f.rows)
    return file_error(index_path, "rows", fmt::format("lists {} rows but logits.npy has {}", f.index.size(), f.rows));
  return f;
}

namespace {

// The meta.yaml key at `path` (dotted), or an error naming it.
Result<YamlNode> meta_key(const YamlNode& root, const std::string& file, const std::string& path) {
  YamlNode n = root;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!n.IsMap() || !n[part]) return file_error(file, path, "missing");
    n = n[part];
    if (dot == std::string::npos) return n;
    start = dot + 1;
  }
}

Error meta_error(const std::string& file, const YamlNode& at, const std::string& key, const std::string& message) {
  Error e = file_error(file, key, message);
  e.line = at.Mark().line + 1;
  e.column = at.Mark().column + 1;
  return e;
}

}  // namespace

Result<LogitsGolden> read_logits_golden(const std::string& dir, const Scenario& scenario) {
  LogitsGolden g;
  Result<LogitsFiles> files = read_logits_files(dir);
  if (!files) return files.error();
  g.files = std::move(files.value());
  const std::string path = dir + "/meta.yaml";
  Result<std::string> text = read_file_bounded(path, kMaxGoldenTextBytes, "the golden's meta.yaml");
  if (!text) return text.error();
  YamlTree tree;
  YamlNode root;
  try {
    root = tree.parse(text.value());
  } catch (const YamlSyntaxError& e) {
    return syntax_error_at(path, e, "not YAML: " + e.msg, kRegenerateHint);
  }
  if (!root.IsMap()) return file_error(path, "", "expected the mapping `golden update` writes");
  // Scalars compared as text, as written.
  auto expect_text = [&](const std::string& key, const std::string& want) -> std::optional<Error> {
    Result<YamlNode> n = meta_key(root, path, key);
    if (!n) return n.error();
    if (!n.value().IsScalar() || n.value().Scalar() != want)
      return meta_error(path, n.value(), key,
                        fmt::format("expected {}, found {}", want, n.value().IsScalar() ? n.value().Scalar() : "a collection"));
    return std::nullopt;
  };
  if (auto e = expect_text("format", "1")) return *e;
  if (auto e = expect_text("scenario", scenario.name)) return *e;
  if (auto e = expect_text("rows", std::to_string(g.files.rows))) return *e;
  if (auto e = expect_text("vocab_size", std::to_string(g.files.cols))) return *e;
  for (PrecisionClass pc : golden_precision_classes(scenario)) {
    const LogitsTolerance t = logits_tolerance(pc);
    for (const auto& [name, value] : {std::pair{"abs", t.abs_tol}, std::pair{"rel", t.rel_tol}, std::pair{"cos", t.cos_tol}})
      if (auto e = expect_text("tolerances." + t.name + "." + name, fmt::format("{:g}", value))) {
        e->message += " (tolerances are mlasim's; an edited meta.yaml changes nothing and is refused)";
        return *e;
      }
  }
  Result<YamlNode> hash = meta_key(root, path, "model_hash");
  if (!hash) return hash.error();
  const std::string want = model_fingerprint(scenario.model);
  if (!hash.value().IsScalar()) return meta_error(path, hash.value(), "model_hash", "expected a hash");
  if (hash.value().Scalar() != want)
    g.stale = fmt::format("{}:{}: the logits golden was written for another model (model_hash {}, the scenario's is {}); "
                          "run `mlasim golden update`",
                          path, hash.value().Mark().line + 1, hash.value().Scalar(), want);
  // The scenario's fingerprint: the same as split.txt's, written with it. Staleness is judged on
  // split.txt's (check); the logits are compared whatever the scenario's routing flags (`run --set
  // engine.profile=strict` against the same golden), and each row's request and position are
  // checked against the index.
  Result<YamlNode> fingerprint = meta_key(root, path, "fingerprint");
  if (!fingerprint) return fingerprint.error();
  if (!fingerprint.value().IsScalar()) return meta_error(path, fingerprint.value(), "fingerprint", "expected a hash");
  if (Status st = check_regular_input(dir + "/split.txt", "the split golden"); !st) return st.error();
  std::ifstream split(dir + "/split.txt");
  std::string line;
  for (int i = 0; i < 8 && std::getline(split, line); ++i) {
    const std::string tag = "# fingerprint: ";
    if (line.rfind(tag, 0) != 0) continue;
    if (line.substr(tag.size()) != fingerprint.value().Scalar())
      return meta_error(path, fingerprint.value(), "fingerprint",
                        fmt::format("{} differs from {}/split.txt's {}: the two files are from different updates (or "
                                    "one was edited)",
                                    fingerprint.value().Scalar(), dir, line.substr(tag.size())));
    break;
  }
  return g;
}

Result<LogitsGoldenLookup> find_logits_golden(const std::string& golden_dir, const Scenario& scenario) {
  LogitsGoldenLookup lookup;
  lookup.dir = golden_dir + "/" + scenario.name;
  std::error_code ec;
  lookup.found = std::filesystem::exists(lookup.dir + "/logits.npy", ec);
  if (ec) return Error{lookup.dir + "/logits.npy", 0, 0, "", "cannot look for the logits golden: " + ec.message(), ""};
  if (!lookup.found) return lookup;
  Result<LogitsGolden> golden = read_logits_golden(lookup.dir, scenario);
  if (!golden) return golden.error();
  lookup.golden = std::move(golden.value());
  return lookup;
}

LogitsCheck check_logits_against(const LogitsFiles& golden, const LogitsRecord& actual, const RequestNames& names,
                                 const LogitsTolerance& tol, const std::string& golden_dir) {
  LogitsGoldenCheck check(golden, tol, golden_dir);
  check.add(actual, names);
  return check.finish();
}

}  // namespace mlasim
