// Building and checking AttentionMetadata (docs/spec/routing.md §4).
#include "attention/attention_metadata.h"

#include "attention/slot_mapping.h"

#include <algorithm>
#include <cstddef>

namespace mlasim {
namespace {

std::size_t sz(int i) { return static_cast<std::size_t>(i); }
std::string num(long long v) { return std::to_string(v); }

}  // namespace

int chunked_prefill_workspace_size(const RoutingConfig& config) {
  const int cap = config.profile == EngineProfile::kVllm2025Early ? kWorkspaceCapEarly2025 : kWorkspaceCap;
  return chunked_prefill_workspace_size(config.max_model_len, config.max_num_seqs, config.block_size, cap);
}

AttentionMetadata build_attention_metadata(const BatchRoute& route, const RoutingConfig& config, const BlockIdsFn& block_ids) {
  AttentionMetadata m;
  build_attention_metadata(m, route, config, block_ids);
  return m;
}

void build_attention_metadata(AttentionMetadata& out, const BatchRoute& route, const RoutingConfig& config,
                              const BlockIdsFn& block_ids, MetadataDetail detail) {
  // Every vector is resized or cleared, not freed, so a step reuses the previous step's capacity;
  // the per-row ones are sized once and filled by index.
  const int n = static_cast<int>(route.rows.size());
  out.query_start_loc.resize(sz(n) + 1);
  out.seq_lens.resize(sz(n));
  out.context_lens.resize(sz(n));
  out.num_prompt_tokens.resize(sz(n));
  out.is_prefilling.resize(sz(n));
  out.positions.clear();
  out.slot_mapping.clear();
  out.is_decode.resize(sz(n));
  out.regions.resize(sz(n));
  out.paths.resize(sz(n));
  out.max_query_len = 0;
  out.max_seq_len = 0;
  out.profile = config.profile;
  out.sparse_mla = config.sparse_mla;
  out.block_size = config.block_size;
  out.num_reqs = n;
  out.has_token_arrays = detail == MetadataDetail::kFull;
  out.block_table.resize(out.has_token_arrays ? sz(n) : 0);
  out.query_start_loc[0] = 0;
  for (int i = 0; i < n; ++i) {
    const RowRoute& r = route.rows[sz(i)];
    const std::size_t row = sz(i);
    out.query_start_loc[row + 1] = out.query_start_loc[row] + r.q;
    out.seq_lens[row] = r.nct + r.q;
    out.context_lens[row] = r.nct;
    out.num_prompt_tokens[row] = r.prompt_len;
    out.is_prefilling[row] = r.nct < r.prompt_len;
    out.is_decode[row] = r.is_decode;
    out.regions[row] = r.region;
    out.paths[row] = r.path;
    out.max_query_len = std::max(out.max_query_len, r.q);
    out.max_seq_len = std::max(out.max_seq_len, r.nct + r.q);
    if (!out.has_token_arrays) continue;
    const std::span<const int> ids = block_ids(i);
    out.block_table[sz(i)].assign(ids.begin(), ids.end());
    SlotWalker slots(out.block_table[sz(i)], r.nct, config.block_size);  // -1 outside: the check reports it
    for (int j = 0; j < r.q; ++j, slots.next()) {
      out.positions.push_back(r.nct + j);
      out.slot_mapping.push_back(static_cast<int>(slots.slot()));
    }
  }
  out.num_actual_tokens = out.query_start_loc.back();
  out.counts = route.counts;

  // Decode-path rows form a prefix (vLLM: the decodes; sparse: every row; SGLang: all or none).
  int num_mqa_rows = 0;
  while (num_mqa_rows < n && out.paths[sz(num_mqa_rows)] == MlaPath::kMqa) ++num_mqa_rows;
  // The sub-metadata is kept from the previous step when present, reusing its vectors; an absent
  // one leaves its vectors to this thread's spare, which the next one present takes.
  thread_local DecodeMetadata spare_decode;
  thread_local PrefillMetadata spare_prefill;
  if (num_mqa_rows == 0 && out.decode) {
    spare_decode = std::move(*out.decode);
    out.decode.reset();
  }
  if (num_mqa_rows == n && out.prefill) {
    spare_prefill = std::move(*out.prefill);
    out.prefill.reset();
  }
  if (num_mqa_rows > 0) {
    DecodeMetadata& d = out.decode ? *out.decode : out.decode.emplace(std::move(spare_decode));
    d.max_query_len = 0;
    d.num_rows = num_mqa_rows;
    d.query_start_loc.assign(out.query_start_loc.begin(), out.query_start_loc.begin() + num_mqa_rows + 1);
    d.seq_lens.assign(out.seq_lens.begin(), out.seq_lens.begin() + num_mqa_rows);
    for (int i = 0; i < num_mqa_rows; ++i) d.max_query_len = std::max(d.max_query_len, route.rows[sz(i)].q);
  }
  if (num_mqa_rows < n) {
    PrefillMetadata& p = out.prefill ? *out.prefill : out.prefill.emplace(std::move(spare_prefill));
    p.query_start_loc.clear();
    p.max_query_len = 0;
    p.row_start = num_mqa_rows;
    p.num_rows = n - num_mqa_rows;
    p.token_start = out.query_start_loc[sz(num_mqa_rows)];
    thread_local std::vector<int> ctx;
    ctx.clear();
    for (int i = num_mqa_rows; i <= n; ++i) p.query_start_loc.push_back(out.query_start_loc[sz(i)] - p.token_start);
    for (int i = num_mqa_rows; i < n; ++i) {
      p.max_query_len = std::max(p.max_query_len, route.rows[sz(i)].q);
      ctx.push_back(route.rows[sz(i)].nct);
    }
    build_chunked_context(ctx, chunked_prefill_workspace_size(config), config.block_size, p.chunked_context);
  }
}

AttentionMetadata build_attention_metadata(const BatchRoute& route, const RoutingConfig& config,
                                           std::span<const std::vector<int>> block_ids) {
  return build_attention_metadata(route, config, [block_ids](int row) -> std::span<const int> {
    if (row < 0 || sz(row) >= block_ids.size()) return {};
    return block_ids[sz(row)];
  });
}

std::string AttentionMetadata::validate() const {
  const std::size_t n = sz(num_reqs);
  if (!has_token_arrays) return "built without positions, block tables and slot mapping (MetadataDetail::kRows)";
  if (num_reqs < 0) return "num_reqs is negative";
  if (query_start_loc.size() != n + 1) return "query_start_loc has " + num(static_cast<long long>(query_start_loc.size())) + " entries, want num_reqs + 1";
  if (seq_lens.size() != n || context_lens.size() != n || num_prompt_tokens.size() != n || is_prefilling.size() != n ||
      block_table.size() != n || is_decode.size() != n || regions.size() != n || paths.size() != n)
    return "a per-row array does not have num_reqs entries";
  if (query_start_loc[0] != 0) return "query_start_loc[0] is not 0";
  int max_q = 0, max_s = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const int q = query_start_loc[i + 1] - query_start_loc[i];
    if (q < 0) return "query_start_loc decreases at row " + num(static_cast<long long>(i));
    if (seq_lens[i] != context_lens[i] + q) return "seq_lens[" + num(static_cast<long long>(i)) + "] != context_lens + q";
    if (is_prefilling[i] != (context_lens[i] < num_prompt_tokens[i])) return "is_prefilling[" + num(static_cast<long long>(i)) + "] != (nct < P)";
    max_q = std::max(max_q, q);
    max_s = std::max(max_s, seq_lens[i]);
  }
  if (query_start_loc[n] != num_actual_tokens) return "query_start_loc[num_reqs] != num_actual_tokens";
  if (max_q != max_query_len) return "max_query_len " + num(max_query_len) + " != " + num(max_q);
  if (max_s != max_seq_len) return "max_seq_len " + num(max_seq_len) + " != " + num(max_s);
  if (positions.size() != sz(num_actual_tokens) || slot_mapping.size() != sz(num_actual_tokens))
    return "positions/slot_mapping do not have num_actual_tokens entries";
  for (std::size_t i = 0; i < n; ++i) {
    SlotWalker slots(block_table[i], context_lens[i], block_size);
    for (int t = query_start_loc[i]; t < query_start_loc[i + 1]; ++t, slots.next()) {
      const int pos = context_lens[i] + (t - query_start_loc[i]);
      if (positions[sz(t)] != pos) return "positions[" + num(t) + "] != nct + j";
      const int slot = static_cast<int>(slots.slot());
      if (slot < 0) return "token " + num(t) + " (row " + num(static_cast<long long>(i)) + ", position " + num(pos) + ") is outside the row's block table";
      if (slot_mapping[sz(t)] != slot) return "slot_mapping[" + num(t) + "] = " + num(slot_mapping[sz(t)]) + ", want " + num(slot);
    }
  }

  if (counts.num_decodes + counts.num_prefills != num_reqs) return "num_decodes + num_prefills != num_reqs";
  if (counts.num_decode_tokens + counts.num_prefill_tokens != num_actual_tokens) return "num_decode_tokens + num_prefill_tokens != num_actual_tokens";
  if (counts.num_mqa_tokens + counts.num_mha_tokens != num_actual_tokens) return "num_mqa_tokens + num_mha_tokens != num_actual_tokens";
  int decodes = 0, decode_tokens = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!is_decode[i]) continue;
    ++decodes;
    decode_tokens += query_start_loc[i + 1] - query_start_loc[i];
  }
  if (decodes != counts.num_decodes || decode_tokens != counts.num_decode_tokens) return "num_decodes/num_decode_tokens disagree with the per-row split";
  if (profile != EngineProfile::kSglang) {
    for (std::size_t i = 0; i < n; ++i)
      if (is_decode[i] != (i < sz(counts.num_decodes))) return "row " + num(static_cast<long long>(i)) + ": the decodes must be rows [0, num_decodes)";
  }
  std::size_t mqa_rows = 0;
  while (mqa_rows < n && paths[mqa_rows] == MlaPath::kMqa) ++mqa_rows;
  for (std::size_t i = mqa_rows; i < n; ++i)
    if (paths[i] == MlaPath::kMqa) return "decode-path row " + num(static_cast<long long>(i)) + " after a prefill-path row";
  if (query_start_loc[mqa_rows] != counts.num_mqa_tokens) return "num_mqa_tokens != tokens of the decode-path rows";
  // Sparse MLA: every token on the decode path, or (vLLM 0.33's dense MHA prefill) the split's.
  if (sparse_mla && counts.num_mha_tokens != 0 && counts.num_mqa_tokens != counts.num_decode_tokens)
    return "sparse MLA with prefill-path tokens other than the split's prefills";
  if (profile != EngineProfile::kSglang && !sparse_mla && counts.num_mqa_tokens != counts.num_decode_tokens)
    return "num_mqa_tokens != num_decode_tokens";

  if (decode.has_value() != (mqa_rows > 0)) return "decode metadata present iff a row takes the decode path";
  if (decode) {
    if (sz(decode->num_rows) != mqa_rows || decode->seq_lens.size() != mqa_rows ||
        decode->query_start_loc.size() != mqa_rows + 1)
      return "decode metadata size mismatch";
    for (std::size_t i = 0; i < mqa_rows; ++i)
      if (decode->seq_lens[i] != seq_lens[i] ||
          decode->query_start_loc[i + 1] != query_start_loc[i + 1])
        return "decode metadata row " + num(static_cast<long long>(i)) + " differs from the batch";
  }
  if (prefill.has_value() != (mqa_rows < n)) return "prefill metadata present iff a row takes the prefill path";
  if (prefill) {
    if (sz(prefill->row_start) != mqa_rows || sz(prefill->num_rows) != n - mqa_rows ||
        prefill->query_start_loc.size() != n - mqa_rows + 1 || prefill->token_start != counts.num_mqa_tokens)
      return "prefill metadata size mismatch";
    for (std::size_t k = 0; k + mqa_rows <= n; ++k)
      if (prefill->query_start_loc[k] != query_start_loc[mqa_rows + k] - counts.num_mqa_tokens) return "prefill query_start_loc mismatch";
    const ChunkedContextMetadata& cc = prefill->chunked_context;
    if (cc.context_lens.size() != n - mqa_rows) return "chunked context does not cover the prefill rows";
    for (std::size_t k = 0; k < cc.context_lens.size(); ++k)
      if (cc.context_lens[k] != context_lens[mqa_rows + k]) return "chunked context_lens != the prefill rows' nct";
    if (std::string e = cc.validate(block_size); !e.empty()) return "chunked context: " + e;
  }
  return "";
}

}  // namespace mlasim
