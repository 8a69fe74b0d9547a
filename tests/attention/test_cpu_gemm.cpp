// cpu_gemm against a plain triple loop in long double: every shape class (fewer rows than
// kGemvRows, BLAS shapes, tiles with remainders), accumulate, strided operands; parallel_gemm_nt
// bitwise the same for 1, 2 and 5 threads.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "attention/cpu/cpu_gemm.h"
#include "model/cpu_thread_pool.h"

using namespace mlasim;

namespace {

template <typename T>
std::vector<T> random_matrix(int rows, int cols, std::uint64_t seed) {
  std::vector<T> m(static_cast<size_t>(rows) * static_cast<size_t>(cols));
  std::uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (T& v : m) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    v = static_cast<T>(static_cast<double>(s >> 11) * 0x1.0p-53 * 2.0 - 1.0);
  }
  return m;
}

// Largest |got - want| / (sum |a_ik b_kj|): the error relative to the size of the sum's terms.
template <typename T>
double worst_nt(int m, int n, int k, const std::vector<T>& a, int lda, const std::vector<T>& b, int ldb,
                const std::vector<T>& c, int ldc, const std::vector<T>& c0, bool transposed_b) {
  double worst = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      long double want = c0.empty() ? 0.0L : c0[static_cast<size_t>(i) * ldc + j], mag = 0;
      for (int p = 0; p < k; ++p) {
        const T bv = transposed_b ? b[static_cast<size_t>(j) * ldb + p] : b[static_cast<size_t>(p) * ldb + j];
        want += static_cast<long double>(a[static_cast<size_t>(i) * lda + p]) * bv;
        mag += std::fabs(static_cast<long double>(a[static_cast<size_t>(i) * lda + p]) * bv);
      }
      const double err = static_cast<double>(std::fabs(c[static_cast<size_t>(i) * ldc + j] - want) / (mag + 1e-300L));
      worst = std::max(worst, err);
    }
  return worst;
}

}  // namespace

TEMPLATE_TEST_CASE("gemm_nt and gemm_nn equal the triple loop", "[gemm]", float, double) {
  // Rounding bound: k terms summed, each off by at most eps relative; k <= 300 here.
  const double eps = sizeof(TestType) == 4 ? 0x1.0p-24 : 0x1.0p-53, bound = 300 * eps;
  for (auto [m, n, k] : {std::tuple{1, 7, 5}, {3, 64, 130}, {7, 33, 9}, {8, 8, 8}, {37, 19, 300}, {300, 70, 64}}) {
    const int lda = k + 3, ldb_t = k + 1, ldb_n = n + 2, ldc = n + 5;
    const auto a = random_matrix<TestType>(m, lda, 1), bt = random_matrix<TestType>(n, ldb_t, 2);
    const auto bn = random_matrix<TestType>(k, ldb_n, 3), c0 = random_matrix<TestType>(m, ldc, 4);
    std::vector<TestType> c(static_cast<size_t>(m) * ldc);
    gemm_nt(m, n, k, a.data(), lda, bt.data(), ldb_t, c.data(), ldc);
    CHECK(worst_nt(m, n, k, a, lda, bt, ldb_t, c, ldc, {}, true) < bound);
    c = c0;
    gemm_nt(m, n, k, a.data(), lda, bt.data(), ldb_t, c.data(), ldc, true);
    CHECK(worst_nt(m, n, k, a, lda, bt, ldb_t, c, ldc, c0, true) < bound * 2);
    gemm_nn(m, n, k, a.data(), lda, bn.data(), ldb_n, c.data(), ldc);
    CHECK(worst_nt(m, n, k, a, lda, bn, ldb_n, c, ldc, {}, false) < bound);
    c = c0;
    gemm_nn(m, n, k, a.data(), lda, bn.data(), ldb_n, c.data(), ldc, true);
    CHECK(worst_nt(m, n, k, a, lda, bn, ldb_n, c, ldc, c0, false) < bound * 2);
  }
}

TEMPLATE_TEST_CASE("parallel_gemm_nt is bitwise the same for 1, 2 and 5 threads", "[gemm][threads]", float, double) {
  const int saved = cpu_threads();
  const int m = 2 * kGemmTileM + 3, n = kGemmTileN + 17, k = 96;
  const auto a = random_matrix<TestType>(m, k, 5), b = random_matrix<TestType>(n, k, 6);
  std::vector<std::vector<TestType>> results;
  for (int threads : {1, 2, 5}) {
    set_cpu_threads(threads);
    std::vector<TestType> c(static_cast<size_t>(m) * n);
    parallel_gemm_nt(m, n, k, a.data(), k, b.data(), k, c.data(), n);
    results.push_back(c);
  }
  set_cpu_threads(saved);
  CHECK(results[0] == results[1]);
  CHECK(results[0] == results[2]);
  CHECK(worst_nt(m, n, k, a, k, b, k, results[0], n, {}, true) < 96 * (sizeof(TestType) == 4 ? 0x1.0p-24 : 0x1.0p-53));
}

TEST_CASE("blas_name names OpenBLAS and its kernel", "[gemm]") {
  const std::string name = blas_name();
  CHECK(name.rfind("OpenBLAS ", 0) == 0);
  CHECK(name.find('(') != std::string::npos);
}
