// Text per request, added as requests finish (in any order) and read back in scenario order. Kept
// in a temporary file, so memory holds 12 bytes per request, not its text.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace mlasim {

class ScenarioOrderSpill {
 public:
  ScenarioOrderSpill();
  ~ScenarioOrderSpill();
  ScenarioOrderSpill(const ScenarioOrderSpill&) = delete;
  ScenarioOrderSpill& operator=(const ScenarioOrderSpill&) = delete;

  void add(int index, std::string_view text);
  // Calls `f` with each added text in index order (indices never added are skipped).
  void for_each(const std::function<void(std::string_view)>& f);

 private:
  std::FILE* file_ = nullptr;
  std::uint64_t end_ = 0;
  struct Entry {
    std::uint64_t offset = 0;
    std::uint32_t size = 0;
    bool present = false;
  };
  std::vector<Entry> entries_;
};

}  // namespace mlasim
