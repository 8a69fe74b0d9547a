// The reasons of a step's routing in words (RowRoute::reason, BatchRoute::batch_reason, the
// records' reasons the writers word on demand, the --explain table), formatted from the decisions
// and the facts they carry (docs/spec/routing.md). The words are printable ASCII without '"' or
// '\\': the run JSON writes a row's reason without an escape pass (tests/engine/test_step_words.cpp
// checks every reason of every repository scenario).
#pragma once

#include <string>
#include <string_view>

#include "attention/reorder.h"
#include "attention/row_route.h"
#include "attention/routing_config.h"
#include "attention/sglang_dispatch.h"
#include "attention/split.h"

namespace mlasim {

// SGLang's dispatch as its words quote it (SglangDispatch without the per-row list).
struct SglangWording {
  SglangForwardMode mode = SglangForwardMode::kDecode;
  long long sum_extend_prefix_lens = 0;
  SglangMhaRule rule = SglangMhaRule::kNotExtend;
  AttentionBackendKind backend = AttentionBackendKind::kFlashAttnMla;
  int chunked_prefix_cache_threshold = 0;
};

// What a step's reasons quote beyond each row's own facts: the router's decision for the batch
// (vLLM's split or SGLang's dispatch) and the configuration it was made under. Plain values (the
// notes view literals), so a step record keeps it as codes and a writer words the reasons when it
// writes them. route_batch fills it (BatchRoute::wording).
struct RouteWording {
  bool sglang = false;
  ReorderVersion reorder_version = ReorderVersion::kFourRegion;
  int reorder_threshold = 0;  // the threshold the regions are named against
  SplitResult split;          // vLLM
  SglangWording dispatch;     // SGLang
  // vLLM: what follows the split's words in the batch's reason (sparse MLA, DeepSeek-V4).
  std::string_view batch_note;
  // What follows each row's words (sparse MLA's note; SGLang's batch reason ends with it too).
  std::string_view row_note;
};

// A row as its reason quotes it (of a RowRoute or a step record's RowRecord).
struct RowFacts {
  int q = 0, nct = 0, prompt_len = 0;
  Region region = Region::kPrefill;
  bool is_decode = false;
  MlaPath path = MlaPath::kMha;
};

// The batch's reason (the split's rule or SGLang's dispatch, and the notes), appended to `out`.
void word_batch_reason(std::string& out, const RouteWording& wording);
// The reason of the row at position `pos` of the reordered batch, appended to `out`: its region
// under the profile's reorder, the split's verdict on it (or SGLang's classification and the
// batch's choice), the notes, then " -> " and its path.
void word_row_reason(std::string& out, const RouteWording& wording, const RowFacts& row, int pos);

}  // namespace mlasim
