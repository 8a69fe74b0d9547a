// Catch2 checks shared by the GPU tests: a kit comparison checked by name, its description (worst
// element, tolerances) printed when it fails; and the first differing element of two arrays.
#pragma once

#include <catch2/catch.hpp>

#include <cstddef>
#include <sstream>
#include <string>
#include <vector>

// CHECK_COMPARE("what", kit::CompareResult, kit::CompareTol): passes when the comparison passes.
#define CHECK_COMPARE(what, result, tol)              \
  do {                                                \
    INFO((what) << ": " << (result).describe(tol));   \
    CHECK((result).pass);                             \
  } while (0)

namespace mlasim::gpu_test {

// "" when got == want element by element; else the first differing index with both values (or the sizes).
template <typename T>
std::string first_difference(const std::vector<T>& got, const std::vector<T>& want) {
  std::ostringstream s;
  if (got.size() != want.size()) {
    s << got.size() << " values, expected " << want.size();
    return s.str();
  }
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!(got[i] == want[i])) {
      s << "element " << i << " is " << +got[i] << ", expected " << +want[i];
      return s.str();
    }
  return "";
}

}  // namespace mlasim::gpu_test
