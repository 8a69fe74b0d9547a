// The reasons of a step's routing in words (RowRoute::reason, BatchRoute::batch_reason, the
// --explain table), formatted from the decisions and the facts they carry (docs/spec/routing.md).
#pragma once

#include <string>
#include <string_view>

#include "attention/row_route.h"
#include "attention/routing_config.h"
#include "attention/sglang_dispatch.h"
#include "attention/split.h"

namespace mlasim {


// vLLM: the split's rule for the whole batch.
std::string explain_split(const SplitResult& split);
// vLLM: the row's region under the profile's reorder, then the split's verdict on the row at
// position `pos` of the reordered batch.
// split_text: explain_split(split), worded once per batch by the caller.
// Appended to `out`.
void explain_vllm_row(std::string& out, const RowRoute& row, int pos, const SplitResult& split,
                      const RoutingConfig& config, std::string_view split_text);

// SGLang: the batch's forward mode and its MHA / absorbed MLA choice.
std::string explain_sglang_batch(const SglangDispatch& dispatch, const RoutingConfig& config);
// SGLang: the row's classification, then the batch's choice.
// Appended to `out`.
void explain_sglang_row(std::string& out, const RowRoute& row, const SglangDispatch& dispatch,
                        const RoutingConfig& config);

}  // namespace mlasim
