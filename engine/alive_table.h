// The requests that arrived and have not finished, by scenario index: the times the summary needs.
// Their ids are in the engine's RequestNames.
#pragma once

#include <cstdint>

#include "engine/slot_table.h"

namespace mlasim {

struct AliveRequest {
  std::int64_t arrival_ns = 0;
  std::int64_t first_token_ns = -1;
};

using AliveTable = SlotTable<AliveRequest>;

}  // namespace mlasim
