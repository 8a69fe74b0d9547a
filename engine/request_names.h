// The one table that turns the run records' request indices (a request's position in the
// scenario) into the scenario's id strings. Records carry indices; sinks print ids through this
// table (engine/run_record.h says which ids it holds when).
#pragma once

#include <string>

#include "engine/slot_table.h"

namespace mlasim {

class RequestNames {
 public:
  // Returns the request's slot: a small number, stable until drop(index), by which the table's
  // owner may keep more per-request data in a vector beside it (memory O(requests in the table)).
  int add(int index, std::string id) { return ids_.emplace(index, std::move(id)); }
  int slot(int index) const { return ids_.slot(index); }  // -1 when not in the table
  // The request's id; it must be in the table.
  const std::string& operator[](int index) const { return ids_.at(index); }
  // Removes the request's id (its memory leaves the table).
  void drop(int index) { ids_.erase(index); }
  std::size_t size() const { return ids_.size(); }

 private:
  SlotTable<std::string> ids_;
};

}  // namespace mlasim
