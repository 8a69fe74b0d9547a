// The release matrix (deploy/release_matrix.h): its cells against the routing rules of each
// release (docs/spec/routing.md §1, §3, §7), its three outputs agreeing, and its conformance counts
// held to tools/bench/RESULTS.md.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "base/formats/json_value.h"
#include "deploy/release_matrix.h"

namespace mlasim {
namespace {

using K = AttentionBackendKind;
using P = EngineProfile;

const ReleaseCell& cell(const std::vector<ReleaseCell>& cells, P profile, K backend) {
  for (const ReleaseCell& c : cells)
    if (c.release->profile == profile && c.backend == backend) return c;
  FAIL("no cell " << to_string(profile) << " " << to_string(backend));
  return cells.front();
}

// "decode* 1/0": path, fresh on the decode path, num_mqa/num_mha.
std::string probe(const ReleaseCell& c, int column) {
  const ProbeResult& p = c.probes.at(static_cast<std::size_t>(column));
  if (p.id.empty()) return "-";
  return std::string(p.decode_path ? "decode" : "prefill") + (p.fresh_on_decode_path ? "*" : "") + " " +
         std::to_string(p.num_mqa) + "/" + std::to_string(p.num_mha);
}

TEST_CASE("the release matrix: each release's probes as its routing rules give them", "[report]") {
  auto built = release_matrix();
  REQUIRE(built.ok());
  const std::vector<ReleaseCell>& cells = built.value();
  REQUIRE(cells.size() == 26U);  // 4 releases x 6 backends + vLLM 0.8's FlashMLA and Triton-MLA

  // vLLM 0.33 on FlashInfer-MLA (T = 1, VARLEN): a lone 1-token prompt and one behind a decode take
  // the decode path; 5 tokens do not; k raises T to 1 + k, so a 1 + k-token fresh prompt does.
  const ReleaseCell& v033 = cell(cells, P::kVllm033, K::kFlashInferMla);
  CHECK(v033.model_runner == ModelRunner::kV2);
  CHECK(v033.decode_threshold == 1);
  CHECK(probe(v033, 0) == "decode* 1/0");
  CHECK(probe(v033, 1) == "prefill 0/5");
  CHECK(probe(v033, 2) == "decode* 2/0");
  CHECK(probe(v033, 3) == "decode* 2/0");
  CHECK(probe(v033, 4) == "decode* 4/0");
  // CUTLASS-MLA is SINGLE_ONLY: T stays 1 under speculation.
  CHECK(probe(cell(cells, P::kVllm033, K::kCutlassMla), 3) == "prefill 0/2");
  // ROCm-AITER-MLA: SINGLE_ONLY in 0.12 (no spec raise), UNIFORM from 0.14.
  CHECK(probe(cell(cells, P::kVllm012, K::kRocmAiterMla), 3) == "prefill 0/2");
  CHECK(probe(cell(cells, P::kVllm3Region, K::kRocmAiterMla), 3) == "decode* 2/0");
  // FlashMLA: class threshold 1 in 0.11.0, 128 from 0.11.1.
  CHECK(cell(cells, P::kVllm011, K::kFlashMla).decode_threshold == 1);
  CHECK(probe(cell(cells, P::kVllm011, K::kFlashMla), 1) == "prefill 0/5");
  CHECK(probe(cell(cells, P::kVllm012, K::kFlashMla), 1) == "decode* 5/0");
  // vLLM 0.8: only q == 1 is a decode, whatever k (n-gram drafts: its V1 engine runs no MTP).
  const ReleaseCell& early = cell(cells, P::kVllm2025Early, K::kFlashMla);
  CHECK(probe(early, 0) == "decode* 1/0");
  CHECK(probe(early, 2) == "decode* 2/0");
  CHECK(probe(early, 4) == "prefill 0/4");
  for (const ReleaseCell& c : cells) {
    CHECK(c.probes.size() == 5U);
    for (int i = 0; i < kReleaseProbeColumns; ++i) CHECK(probe(c, i) != "-");
    CHECK(c.model_runner == (c.release->profile == P::kVllm033 ? ModelRunner::kV2 : ModelRunner::kV1));
  }

  const std::string md = release_matrix_markdown(cells);
  CHECK(md.find("|  | rocm-aiter-mla | 1 | decode* 1/0 | prefill 0/5 | decode* 2/0 | prefill 0/2 | prefill 0/4 |\n") !=
        std::string::npos);
  CHECK(md.find("| vLLM 0.8.x (`vllm-2025-early`, model runner v1); run: vLLM 0.8.5: suite 41") != std::string::npos);
  const std::string text = release_matrix_text(cells);
  CHECK(text.find("  flashattn-mla    512  decode* 1/0") != std::string::npos);
  Result<JsonValue> json = parse_json(release_matrix_json(cells), "releases.json");
  REQUIRE(json.ok());
  REQUIRE(json.value().find("cells"));
  CHECK(json.value().find("cells")->array().size() == 26U);
  // The same every time.
  auto again = release_matrix();
  REQUIRE(again.ok());
  CHECK(release_matrix_json(again.value()) == release_matrix_json(cells));
}

// The lines of RESULTS.md's per-release section.
std::vector<std::string> per_release_rows() {
  std::ifstream in(std::string(MLASIM_SOURCE_DIR) + "/tools/bench/RESULTS.md");
  std::vector<std::string> rows;
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind("### Per-release conformance", 0) == 0) inside = true;
    else if (inside && line.rfind("#", 0) == 0) break;
    else if (inside) rows.push_back(line);
  }
  return rows;
}

TEST_CASE("the release matrix's conformance counts are RESULTS.md's", "[report]") {
  const std::vector<std::string> rows = per_release_rows();
  REQUIRE(rows.size() > 10U);
  int checked = 0;
  for (const ReleaseEntry& r : release_table()) {
    const std::string c = r.conformance;
    if (c.empty()) continue;
    // "0.12.0: suite 41 identical, 0 differing; random 300 identical, 0 differing"
    const std::string version = c.substr(0, c.find(':'));
    const std::string minor = version.substr(0, version.rfind('.'));
    const std::size_t s = c.find("suite ") + 6, semi = c.find(';');
    const std::string suite = c.substr(s, semi - s);
    const std::string random = c.substr(c.find("random ") + 7);
    bool suite_row = false, random_row = false;
    for (const std::string& row : rows) {
      const bool of_release = row.find("vllm-" + minor + "-venv") != std::string::npos ||
                              row.find("(vLLM " + version) != std::string::npos;
      if (!of_release) continue;
      const bool is_random = row.find("--random 300 ") != std::string::npos;
      suite_row |= !is_random && row.find("| " + suite) != std::string::npos;
      random_row |= is_random && row.find("| " + random + " |") != std::string::npos;
    }
    INFO(r.releases);
    CHECK(suite_row);
    CHECK(random_row);
    ++checked;
  }
  CHECK(checked == 5);
}

}  // namespace
}  // namespace mlasim
