// e^x over an array, the softmax's exponential (docs/spec/cpu_reference.md §3). float: a
// vectorised Cody-Waite range reduction and Cephes' degree-6 polynomial (relative error below
// 3e-7, about 2 ulp; e^x = 0 below -87.3, where float underflows); double: std::exp, so the fp64
// golden keeps the C library's correctly rounded-or-nearly exponential.
#pragma once

namespace mlasim {

void exp_in_place(float* x, int n);
void exp_in_place(double* x, int n);

}  // namespace mlasim
