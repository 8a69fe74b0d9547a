// WAITING queue: FCFS deque or (priority, arrival) ordered set.
#include "sim/request_queue.h"

#include <algorithm>

#include "base/check.h"

namespace mlasim {

void RequestQueue::add_request(Request* r) {
  if (policy_ == SchedulingPolicy::kFcfs) fcfs_.push_back(r);
  else MLASIM_CHECK(prio_.insert(r).second, "duplicate (priority, arrival) in the waiting queue");
}

void RequestQueue::prepend_request(Request* r) {
  if (policy_ == SchedulingPolicy::kFcfs) fcfs_.push_front(r);
  else add_request(r);
}

Request* RequestQueue::peek_request() const {
  MLASIM_CHECK(!empty(), "peek on an empty waiting queue");
  return policy_ == SchedulingPolicy::kFcfs ? fcfs_.front() : *prio_.begin();
}

Request* RequestQueue::pop_request() {
  Request* r = peek_request();
  if (policy_ == SchedulingPolicy::kFcfs) fcfs_.pop_front();
  else prio_.erase(prio_.begin());
  return r;
}

bool RequestQueue::remove_request(const Request* r) {
  if (policy_ == SchedulingPolicy::kFcfs) {
    auto it = std::find(fcfs_.begin(), fcfs_.end(), r);
    if (it == fcfs_.end()) return false;
    fcfs_.erase(it);
    return true;
  }
  return prio_.erase(const_cast<Request*>(r)) > 0;
}

int RequestQueue::size() const {
  return static_cast<int>(policy_ == SchedulingPolicy::kFcfs ? fcfs_.size() : prio_.size());
}

std::vector<const Request*> RequestQueue::in_order() const {
  std::vector<const Request*> out;
  if (policy_ == SchedulingPolicy::kFcfs) out.assign(fcfs_.begin(), fcfs_.end());
  else out.assign(prio_.begin(), prio_.end());
  return out;
}

}  // namespace mlasim
