// Which vLLM release's scheduler rules an engine profile replays (docs/spec/scheduler.md §9).
#pragma once

#include "config/scenario.h"

namespace mlasim {

// vllm-0.33 (alias vllm-current), strict and sglang: vLLM 0.33.0's rules. vllm-0.11,
// vllm-0.12, vllm-3region and vllm-2025-early: the rules before them (none of the 0.33
// additions), with each release's differences (docs/spec/scheduler.md §10).
SchedulerRules scheduler_rules_for(EngineProfile profile);

}  // namespace mlasim
