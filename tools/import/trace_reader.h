// One request as a trace records it, and the interface of the per-format readers that produce
// them in file order.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace mlasim {

struct TraceRecord {
  int line = 0;                              // 1-based line of the trace
  long long time_ns = 0;                     // arrival time on the trace's own clock
  std::string_view time_text;                // the timestamp as written, for messages (valid until the next read)
  int time_column = 0;                       // 1-based column of the timestamp
  long long prompt_len = 0;                  // input tokens
  long long output_len = 0;                  // output tokens
  std::vector<unsigned long long> hash_ids;  // Mooncake: one id per 512-token prompt block
};

class TraceReader {
 public:
  virtual ~TraceReader() = default;
  // Opens the trace and reads what precedes the requests (a CSV header).
  virtual Status open() = 0;
  // Reads the next request into `rec`, or sets `done` at the end of the trace.
  virtual Status next(TraceRecord& rec, bool& done) = 0;
  // True when records carry hash_ids (written as prompt_hash_ids).
  virtual bool has_hash_ids() const { return false; }
  // The name of the timestamp column or key, for messages.
  virtual const char* time_key() const = 0;
};

// An Error at `line`:`column` of `file` about `key` (a column name or JSON key; may be empty).
Error trace_error(const std::string& file, int line, int column, std::string key, std::string message,
                  std::string hint);

// True when the line holds nothing but spaces or tabs: blank lines are skipped by every reader.
bool is_blank(std::string_view line);

}  // namespace mlasim
