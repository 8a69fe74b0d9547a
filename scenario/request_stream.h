// A scenario's requests in arrival order, one at a time: the inline list (sorted by arrival, ties in
// list order) or its requests_file read line by line, so a replay holds only the requests alive.
#pragma once

#include <memory>

#include "config/scenario.h"
#include "base/status.h"

namespace mlasim {

// Thrown by a stream when its file no longer reads as it did when the scenario was loaded (it
// changed underneath the replay); the CLI reports the error with exit code 2.
struct RequestStreamError {
  Error error;
};

class RequestStream {
 public:
  virtual ~RequestStream() = default;
  // The next request in arrival order and its index in the scenario; nullptr at the end. The
  // pointer stays valid until the next call to pop().
  virtual const RequestSpec* peek() = 0;
  virtual int peek_index() const = 0;
  // Moves the peeked request out and advances.
  virtual RequestSpec pop() = 0;
};

std::unique_ptr<RequestStream> open_request_stream(const Scenario& scenario);

}  // namespace mlasim
