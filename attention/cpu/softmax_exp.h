// e^x over an array and the softmax's row maximum and sum (docs/spec/cpu_reference.md §3). float: a
// vectorised Cody-Waite range reduction and Cephes' degree-6 polynomial (relative error below
// 3e-7, about 2 ulp; e^x = 0 below -87.3, where float underflows); double: std::exp, so the fp64
// golden keeps the C library's correctly rounded-or-nearly exponential.
#pragma once

namespace mlasim {

// The largest of x[0..n) (n >= 1).
float max_of(const float* x, int n);
double max_of(const double* x, int n);

// x[j] <- e^(scale x[j] - shift) for j < n; returns the sum of the new values, added in a fixed
// order (eight lanes, then pairwise), so the same inputs give the same sum on every call.
float exp_shifted_sum(float* x, int n, float scale, float shift);
double exp_shifted_sum(double* x, int n, double scale, double shift);

}  // namespace mlasim
