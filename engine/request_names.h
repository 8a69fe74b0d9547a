// The one table that turns the run records' request indices (a request's position in the
// scenario) into the scenario's id strings. Records carry indices; sinks print ids through this
// table (engine/run_record.h says which ids it holds when).
#pragma once

#include <string>

#include "engine/slot_table.h"

namespace mlasim {

class RequestNames {
 public:
  void add(int index, std::string id) { ids_.emplace(index, std::move(id)); }
  // The request's id; it must be in the table.
  const std::string& operator[](int index) const { return ids_.at(index); }
  // Removes the request's id (its memory leaves the table).
  void drop(int index) { ids_.erase(index); }
  std::size_t size() const { return ids_.size(); }

 private:
  SlotTable<std::string> ids_;
};

}  // namespace mlasim
