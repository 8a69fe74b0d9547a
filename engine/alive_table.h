// The requests that arrived and have not finished, by request id: their scenario id and the
// times the summary needs. Slots are reused, so memory follows the requests alive, not the trace;
// lookups go through a FlatIndexMap (no per-request node allocation, no hashing of std::hash's
// kind on every row of every step).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/check.h"
#include "base/flat_index_map.h"
#include "sim/request.h"

namespace mlasim {

struct AliveRequest {
  std::string id;
  std::int64_t arrival_ns = 0;
  std::int64_t first_token_ns = -1;
};

class AliveTable {
 public:
  void emplace(ReqId req, AliveRequest a) {
    int slot;
    if (!free_.empty()) {
      slot = free_.back();
      free_.pop_back();
      slots_[static_cast<std::size_t>(slot)] = std::move(a);
    } else {
      slot = static_cast<int>(slots_.size());
      slots_.push_back(std::move(a));
    }
    MLASIM_CHECK(index_.put(key(req), slot) < 0, "a request arrived twice");
  }
  // The request, or null when it is not alive.
  AliveRequest* find(ReqId req) {
    const int slot = index_.find(key(req));
    return slot < 0 ? nullptr : &slots_[static_cast<std::size_t>(slot)];
  }
  AliveRequest& at(ReqId req) {
    AliveRequest* a = find(req);
    MLASIM_CHECK(a != nullptr, "request " + std::to_string(req) + " is not alive");
    return *a;
  }
  const AliveRequest& at(ReqId req) const { return const_cast<AliveTable*>(this)->at(req); }
  void erase(ReqId req) {
    const int slot = index_.find(key(req));
    if (slot < 0) return;
    index_.erase(key(req));
    slots_[static_cast<std::size_t>(slot)].id = std::string();  // the id's memory goes with it
    free_.push_back(slot);
  }

 private:
  static std::uint64_t key(ReqId req) { return static_cast<std::uint64_t>(static_cast<std::uint32_t>(req)); }
  FlatIndexMap index_;
  std::vector<AliveRequest> slots_;
  std::vector<int> free_;
};

}  // namespace mlasim
