// FlatIndexMap against std::map on a seeded random mix of puts and erases (growth, collisions,
// backward-shift deletion).
#include <catch2/catch.hpp>

#include <map>

#include "base/flat_index_map.h"

TEST_CASE("flat index map matches std::map", "[scheduler]") {
  mlasim::FlatIndexMap m(2);
  std::map<std::uint64_t, int> ref;
  std::uint64_t x = 12345;
  for (int i = 0; i < 200000; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const std::uint64_t key = (x >> 33) % 512;  // small key space: many collisions and reuses
    if ((x >> 20) % 3 == 0) {
      const auto it = ref.find(key);
      CHECK(m.erase(key) == (it == ref.end() ? -1 : it->second));  // the value removed, or -1
      ref.erase(key);
    } else {
      const int v = static_cast<int>((x >> 40) % 1000);
      const auto it = ref.find(key);
      CHECK(m.put(key, v) == (it == ref.end() ? -1 : it->second));
      ref[key] = v;
    }
    if (i % 997 == 0) {
      for (std::uint64_t k = 0; k < 512; ++k) {
        const auto it = ref.find(k);
        REQUIRE(m.find(k) == (it == ref.end() ? -1 : it->second));
      }
      REQUIRE(m.size() == ref.size());
    }
  }
}
