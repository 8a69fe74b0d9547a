// The release matrix: for each vLLM release mlasim reproduces x the MLA backends it ships, what
// happens to the misrouting report's probes (deploy/misrouting_probes.h): the path, whether a
// fresh prefill takes the decode path, and num_mqa / num_mha. Each release says whether its real
// code was run against its profile (tools/conformance/, counts in tools/bench/RESULTS.md).
// `mlasim releases` prints it; the README holds its Markdown (tools/readme-matrix).
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "config/engine_enums.h"
#include "deploy/misrouting_probes.h"

namespace mlasim {

struct ReleaseEntry {
  const char* releases;  // "vLLM 0.12.0 - 0.13.x"
  EngineProfile profile;
  std::vector<AttentionBackendKind> backends;  // the dense MLA backends the release ships
  // The release whose real code was run against the profile (tools/conformance/ --venv) and its
  // counts, as tools/bench/RESULTS.md ("Per-release conformance") records them; "" when none was.
  const char* conformance;
};

// Newest first.
const std::vector<ReleaseEntry>& release_table();

// The probe columns: the lone 1-token prompt, the lone 5-token prompt and the 1-token prompt
// behind a decode with k = 0, then the short fresh prompt (1 + k tokens) with k = 1 and k = 3.
struct ReleaseCell {
  const ReleaseEntry* release = nullptr;
  AttentionBackendKind backend{};
  ModelRunner model_runner{};
  int decode_threshold = 0;                 // the backend card's T with k = 0
  std::vector<ProbeResult> probes;          // the five columns, in order
};

inline constexpr int kReleaseProbeColumns = 5;
const char* release_probe_column(int i);  // the column's heading

// Replays each release x backend's probe scenarios dry. An error only if a probe scenario does not
// load (a bug: they are generated).
Result<std::vector<ReleaseCell>> release_matrix();

std::string release_matrix_text(const std::vector<ReleaseCell>& cells);
std::string release_matrix_markdown(const std::vector<ReleaseCell>& cells);
std::string release_matrix_json(const std::vector<ReleaseCell>& cells);

}  // namespace mlasim
