// One step's routing: reorder (§1) + split (§2) + MLA's forward split (§4) or SGLang's per-batch
// dispatch (§6), with a per-row explanation (docs/spec/routing.md).
#pragma once

#include <span>
#include <string>
#include <vector>

#include "attention/reorder.h"
#include "attention/route_explain.h"
#include "attention/row_route.h"
#include "attention/routing_config.h"
#include "attention/split.h"
#include "attention/split_counts.h"

namespace mlasim {

class InputBatch;

struct BatchRoute {
  std::vector<int> order;   // order[pos] = input index of the row at pos after the reorder
  bool modified = false;    // the reorder moved a row
  SplitCounts counts;       // the split (vLLM) or the rows' classification (SGLang), and MLA's forward split
  std::vector<RowRoute> rows;  // reordered order
  SplitRule split_rule = SplitRule::kEmpty;  // kEmpty for sglang (no split)
  // What the reasons quote, filled every step; the words themselves (batch_reason, each row's
  // reason) only with RoutingConfig::row_reasons. A step record keeps the wording and its writers
  // word the reasons (route_explain.h).
  RouteWording wording;
  std::string batch_reason;                  // split rule / SGLang dispatch in words
};

// Routes an explicit batch given in persistent-batch order. reorder = false splits the rows in
// the given order (regions are still reported). sglang never reorders.
BatchRoute route_batch(std::span<const RowInput> rows, const RoutingConfig& config, bool reorder = true);

// Reorders the persistent batch in place (the profile's swaps, once), then routes its rows in
// their new order. `order` refers to the rows as they were before the swaps. reorder = false
// routes the rows as they stand (model runner V2 has ordered them already).
BatchRoute route_batch(InputBatch& batch, const RoutingConfig& config, bool reorder = true);
// The same into `route`, its vectors' and strings' capacity kept from step to step (the step loop's
// form: no allocation once the batch has reached its size).
void route_batch(InputBatch& batch, const RoutingConfig& config, bool reorder, BatchRoute& route);

}  // namespace mlasim
