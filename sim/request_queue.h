// The WAITING queue (vllm/v1/core/sched/request_queue.py): a deque under FCFS, ordered by
// (priority, arrival) under the priority policy. Holds pointers owned by the Scheduler.
#pragma once

#include <deque>
#include <set>
#include <vector>

#include "sim/request.h"
#include "config/scenario.h"

namespace mlasim {

class RequestQueue {
 public:
  explicit RequestQueue(SchedulingPolicy policy) : policy_(policy) {}

  void add_request(Request* r);      // FCFS: back; priority: by (priority, arrival)
  void prepend_request(Request* r);  // FCFS: front (preempted requests); priority: as add
  Request* peek_request() const;
  Request* pop_request();
  bool remove_request(const Request* r);
  bool empty() const { return size() == 0; }
  int size() const;
  std::vector<const Request*> in_order() const;  // head first

 private:
  struct ByPriority {
    bool operator()(const Request* a, const Request* b) const {
      if (a->priority != b->priority) return a->priority < b->priority;
      return a->arrival < b->arrival;
    }
  };
  SchedulingPolicy policy_;
  std::deque<Request*> fcfs_;
  std::set<Request*, ByPriority> prio_;
};

}  // namespace mlasim
