// exp_in_place: float within 3e-7 relative of the long double exponential over the softmax's
// range, 0 below -87.3, exact e^0 = 1 for the row maximum; double equals std::exp exactly.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "attention/softmax_exp.h"

using namespace mlasim;

TEST_CASE("exp_in_place(float) is within 3e-7 relative of exp over [-87, 0]", "[softmax]") {
  std::vector<float> x;
  for (int i = 0; i <= 200001; ++i) x.push_back(-87.0f * static_cast<float>(i) / 200001.0f);  // odd count: a tail
  std::vector<float> y = x;
  exp_in_place(y.data(), static_cast<int>(y.size()));
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const long double want = std::exp(static_cast<long double>(x[i]));
    worst = std::max(worst, static_cast<double>(std::fabs(y[i] - want) / want));
  }
  CHECK(worst < 3e-7);
  float one = 0.0f;
  exp_in_place(&one, 1);
  CHECK(one == 1.0f);
}

TEST_CASE("exp_in_place(float) gives 0 for scores masked to -inf or below -87.3", "[softmax]") {
  std::vector<float> x{-INFINITY, -1000.0f, -87.4f, -88.0f, -1e30f, -INFINITY, -200.0f, -90.0f, -INFINITY};
  exp_in_place(x.data(), static_cast<int>(x.size()));
  for (float v : x) CHECK(v == 0.0f);
}

TEST_CASE("exp_in_place(double) is std::exp", "[softmax]") {
  std::vector<double> x{-700.0, -20.5, -1.0, -1e-9, 0.0, 3.25};
  std::vector<double> y = x;
  exp_in_place(y.data(), static_cast<int>(y.size()));
  for (size_t i = 0; i < x.size(); ++i) CHECK(y[i] == std::exp(x[i]));
}
