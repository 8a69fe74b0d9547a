// Which vLLM release's scheduler rules an engine profile replays (docs/spec/scheduler.md §9).
#pragma once

#include "config/scenario.h"

namespace mlasim {

// vllm-0.33 (alias vllm-current), strict and sglang: vLLM 0.33.0's rules. vllm-0.11,
// vllm-3region and vllm-2025-early: the rules before them (none of the 0.33 additions; the
// length cap checked before EOS), as vLLM 0.11.0's scheduler has them.
SchedulerRules scheduler_rules_for(EngineProfile profile);

}  // namespace mlasim
