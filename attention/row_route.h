// One row's routing verdict: its region, decode or prefill, the MLA path its tokens take and why
// (docs/spec/routing.md). Shared by the router (route.h) and its explanations (route_explain.h).
#pragma once

#include <string>

#include "attention/reorder.h"

namespace mlasim {

// MLA's two paths: the decode path (absorbed MQA, forward_mqa) and the prefill path (MHA, forward_mha).
enum class MlaPath { kMqa, kMha };
inline const char* to_string(MlaPath p) { return p == MlaPath::kMqa ? "mqa" : "mha"; }

struct RowRoute {
  int input_index = 0;      // index of the row in the batch before the reorder
  int q = 0, nct = 0, prompt_len = 0;
  Region region = Region::kPrefill;  // under the profile's reorder version
  bool is_decode = false;            // the split's (or SGLang's row classification) verdict
  MlaPath path = MlaPath::kMha;
  bool fresh_on_decode_path = false; // nct == 0 and path == mqa
  std::string reason;                // region, threshold, the rule that decided (with RoutingConfig::row_reasons)
};

}  // namespace mlasim
