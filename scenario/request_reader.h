// One request reader for both forms a scenario gives its requests in: the YAML `requests:` list
// and the JSONL lines of a `requests_file`. Each form supplies its fields through RequestFields
// (typed reads with the form's own syntax messages, and errors at a key, its value, a list item or
// the request); the rules of scenarios/README.md `requests[]` and their messages are written once,
// in read_request.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/scenario.h"

namespace mlasim {

// The keys a request takes, in the order scenarios/README.md lists them.
const std::vector<std::string>& request_keys();

class RequestFields {
 public:
  enum class At { kValue, kKey, kRequest };  // where an error points

  virtual ~RequestFields() = default;
  virtual bool has(const char* key) const = 0;
  // Reads of a present key; each throws (through fail) with the form's message on a value of
  // the wrong type or out of [lo, hi].
  virtual std::string read_string(const char* key) const = 0;
  virtual long long read_int(const char* key, long long lo, long long hi) const = 0;
  virtual double read_seconds(const char* key) const = 0;  // a finite number >= 0
  virtual bool read_bool(const char* key) const = 0;
  virtual std::vector<long long> read_int_list(const char* key, long long lo, long long hi) const = 0;
  // Throws the form's error at `key` (or the request, for At::kRequest and key ""), with the key
  // path "<request>.<key>"; fail_item at entry `item` of a list, "<request>.<key>[item]".
  [[noreturn]] virtual void fail(At at, const char* key, std::string message, std::string hint = {}) const = 0;
  [[noreturn]] virtual void fail_item(const char* key, std::size_t item, std::string message,
                                      std::string hint = {}) const = 0;
};

// One request, checked: every key's value, the prompt (token ids or a seeded length that fits
// max_model_len), outputs, stop ids and drafts against the vocabulary and the scheduler.
// `s` has its model and scheduler resolved. A request without `id` is named `default_id`, or
// refused when there is none. A prompt given by prompt_len stays unresolved (seeded_prompt_len),
// and the outputs past the listed ones are left to the request's seeded stream, as the replay
// draws both (prompt_tokens / resolved_request give them).
RequestSpec read_request(const RequestFields& f, const Scenario& s, const std::optional<std::string>& default_id);

}  // namespace mlasim
