// The routing matrix (`mlasim matrix`): for every engine profile x attention backend x speculative
// tokens {0, 1, 3} x chunked prefill on/off, the smallest batch the fuzzer and shrinker find that
// puts a fresh prefill on MLA's decode path, or none in N runs; with the model, whether routing
// that batch this way changes the logits in fp64 (against the strict profile's routing).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "attention/faults.h"
#include "harness/check_shard.h"
#include "config/scenario.h"
#include "tools/fuzz/property.h"

namespace mlasim {

struct MatrixOptions {
  int runs = 300;           // fuzz runs per cell
  std::uint64_t seed = 0;
  bool with_model = false;  // also: does the misrouting change the logits (fp64)?
  FaultSet faults;          // injected into those model runs
  int jobs = 1;             // cells filled at once (the cells are independent; the result is the same)
  std::optional<Shard> shard;  // --shard I/N: only the cells whose index i has i % N == I
};

struct MatrixCell {
  EngineProfile profile;
  AttentionBackendKind backend;
  int num_speculative_tokens = 0;
  bool chunked_prefill = true;
  int runs = 0;                          // fuzz runs spent
  std::optional<Scenario> smallest;      // the shrunk batch, when found
  std::optional<Violation> violation;    // its violation
  std::optional<bool> logits_change;     // with the model, when found
  std::string logits_detail;
};

// The number of cells of the whole matrix.
std::size_t matrix_num_cells();

// The cells in the order profile, backend, k, chunked (on first); a shard's only. Deterministic
// for the options.
std::vector<MatrixCell> routing_matrix(const MatrixOptions& options);

std::string matrix_text(const std::vector<MatrixCell>& cells, const MatrixOptions& options);
std::string matrix_markdown(const std::vector<MatrixCell>& cells, const MatrixOptions& options);
// "format": "mlasim-matrix", version 1; a shard's report also "shard": {"index", "count",
// "num_cells"}, which `mlasim merge` reads (merge_matrix_reports) to join the shards into the
// whole matrix's report.
std::string matrix_json(const std::vector<MatrixCell>& cells, const MatrixOptions& options);

}  // namespace mlasim
