// Reads a scenario's requests_file: JSONL, one request per line with the keys of `requests[]`
// (scenarios/README.md), strictly (file, line, column and key in every error), one line at a time.
#pragma once

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>

#include "base/json_line.h"
#include "config/scenario.h"
#include "base/status.h"

namespace mlasim {

class RequestFileReader {
 public:
  // `scenario` has its model and scheduler resolved (max_model_len > 0) and requests_file set.
  explicit RequestFileReader(const Scenario& scenario);

  // Reads the next request (blank lines are skipped): true, false at the end of the file, or an
  // error. Checks each request as the loader checks an inline one, and that arrivals do not go
  // back. A request without `id` is named r<index> (a file gives ids on every line or on none).
  Result<bool> next(RequestSpec& out);
  int index() const { return index_; }  // of the request last read (0-based)
  int line() const { return line_no_; }  // 1-based line of the request last read
  bool has_ids() const { return has_ids_ == 1; }

 private:
  Error error(int column, const std::string& key, std::string message, std::string hint = {}) const;
  Result<bool> read_line(RequestSpec& out);
  std::optional<Error> check_arrival_order(const RequestSpec& req, const std::string& key_prefix);

  const Scenario& s_;
  std::string display_;  // the path as the scenario names it
  std::ifstream in_;
  std::string line_;
  JsonLineParser parser_;
  int line_no_ = 0;
  int index_ = -1;
  int has_ids_ = -1;           // unknown until the first request
  int timed_ = -1;             // arrival_time (1) or arrival_step (0); unknown until one is given
  std::int64_t last_arrival_ = 0;
  int last_arrival_line_ = 0;
};

}  // namespace mlasim

namespace mlasim {

// The loader's pass over a requests_file before any replay: reads and checks every request,
// sets scenario.num_requests and timed_arrivals, and checks that ids are unique and that every
// id the expect block names is in the file. Memory: 8 bytes per request with ids, none without.
Status scan_requests_file(Scenario& scenario);

}  // namespace mlasim
