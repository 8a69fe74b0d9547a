// The softmax row helpers: float e^x within 3e-7 relative of the long double exponential over the
// softmax's range, 0 below -87.3, e^0 = 1 exactly for the row maximum, the sum in its fixed order;
// double equals std::exp exactly; max_of over every tail length.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "attention/cpu/softmax_exp.h"

using namespace mlasim;

TEST_CASE("exp_shifted_sum(float) is within 3e-7 relative of exp over [-87, 0]", "[softmax]") {
  std::vector<float> x;
  for (int i = 0; i <= 200001; ++i) x.push_back(-87.0f * static_cast<float>(i) / 200001.0f);  // odd count: a tail
  std::vector<float> y = x;
  const float sum = exp_shifted_sum(y.data(), static_cast<int>(y.size()), 1.0f, 0.0f);
  double worst = 0;
  long double want_sum = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const long double want = std::exp(static_cast<long double>(x[i]));
    want_sum += want;
    worst = std::max(worst, static_cast<double>(std::fabs(y[i] - want) / want));
  }
  CHECK(worst < 3e-7);
  // 200,002 positive terms in float, eight lanes: relative error well below 1e-4.
  CHECK(std::fabs(sum - want_sum) / want_sum < 1e-4);
  float one = 3.0f;
  CHECK(exp_shifted_sum(&one, 1, 2.0f, 6.0f) == 1.0f);
  CHECK(one == 1.0f);
}

TEST_CASE("exp_shifted_sum(float) gives 0 below -87.3 and scales before shifting", "[softmax]") {
  std::vector<float> x{-1000.0f, -87.4f, -88.0f, -1e30f, -200.0f, -90.0f, -100.0f, -87.31f, -95.0f};
  CHECK(exp_shifted_sum(x.data(), static_cast<int>(x.size()), 1.0f, 0.0f) == 0.0f);
  for (float v : x) CHECK(v == 0.0f);
  std::vector<float> y{1.0f, 2.0f, 3.0f};
  const float s = exp_shifted_sum(y.data(), 3, 0.5f, 1.5f);  // e^-1, e^-0.5, e^0
  CHECK(y[0] == Approx(std::exp(-1.0)).epsilon(3e-7));
  CHECK(y[1] == Approx(std::exp(-0.5)).epsilon(3e-7));
  CHECK(y[2] == 1.0f);
  CHECK(s == Approx(std::exp(-1.0) + std::exp(-0.5) + 1.0).epsilon(1e-6));
}

TEST_CASE("exp_shifted_sum(double) is std::exp of scale x - shift", "[softmax]") {
  std::vector<double> x{-700.0, -20.5, -1.0, -1e-9, 0.0, 3.25};
  std::vector<double> y = x;
  const double s = exp_shifted_sum(y.data(), static_cast<int>(y.size()), 2.0, 1.0);
  double want = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    CHECK(y[i] == std::exp(2.0 * x[i] - 1.0));
    want += y[i];
  }
  CHECK(s == want);
}

TEMPLATE_TEST_CASE("max_of finds the largest value for every length and position", "[softmax]", float, double) {
  for (int n = 1; n <= 27; ++n)
    for (int at = 0; at < n; ++at) {
      std::vector<TestType> x(static_cast<size_t>(n));
      for (int i = 0; i < n; ++i) x[static_cast<size_t>(i)] = static_cast<TestType>(-i * 0.5 - 3);
      x[static_cast<size_t>(at)] = TestType(7.25);
      REQUIRE(max_of(x.data(), n) == TestType(7.25));
    }
}
