// The seeded normal values behind mlasim's weights (docs/spec/mla.md §9): pair p of a stream is a
// Box–Muller pair from uniforms 2p and 2p + 1, scaled to N(mean, std_dev^2) in double, rounded to
// float and then to the nearest bf16.
//
// bf16_normal_pair_libm is the definition (libm's log, cos and sin). draw_bf16_normals gives the
// same bits faster: it evaluates log, cos and sin with short polynomials whose error is far below
// 2^-44 relative, and keeps a value only when every double within that bound of it rounds to the
// same bf16; otherwise (about one value in 2^30) it uses the definition.
#pragma once

#include <cstdint>

namespace mlasim {

// Uniform k of a stream, in (0, 1): ((splitmix64(stream + k * golden) >> 11) + 0.5) * 2^-53.
double seeded_uniform(std::uint64_t stream, std::uint64_t k);

// Values 2p and 2p + 1 of the stream (the second only when 2p + 1 < n) into values[2p], values[2p + 1].
void bf16_normal_pair_libm(std::uint64_t stream, double mean, double std_dev, long long p, long long n, float* values);

// Pairs [pair_begin, pair_end) into values (indexed from value 0 of the stream, n values in all).
// Returns how many pairs took the definition's path.
long long draw_bf16_normals(std::uint64_t stream, double mean, double std_dev, long long pair_begin, long long pair_end,
                            long long n, float* values);

// The fast path's pieces, exposed for their accuracy test: ln(u) for u in (0, 1), and cos, sin of
// theta in (0, 2 pi) (false when theta is within 2^-20 of a multiple of pi/2: not computed).
double box_muller_log(double u);
bool box_muller_sincos(double theta, double* c, double* s);

}  // namespace mlasim
