// One chunk of a prefill row's context (docs/spec/routing.md §4, "Chunked context metadata"):
// what the step plan hands both backends, without the CPU attention code.
#pragma once

namespace mlasim {

// Context positions [start, start + len) of one row, attended non-causally as one chunk.
struct ContextChunk {
  int start = 0;
  int len = 0;
};

}  // namespace mlasim
