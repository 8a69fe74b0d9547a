// The CPU reference backend end to end (tiny model): prefill == prefix + decode steps, the
// forced prefill form == the engine's split, metadata-chunked context == one chunk, TP 2/4/8 ==
// TP 1, float close to double, and NaN-poisoned cache rows never reaching an output.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "model/bf16.h"
#include "attention/cpu/cpu_backend.h"
#include "mla_test_util.h"

using namespace mlasim;
using namespace mlasim::test;

namespace {

using Logits = std::vector<std::vector<double>>;  // per request of a step

const MlaWeights& tiny_weights(int heads = 4) {
  static const MlaWeights w4 = seeded_weights(tiny_config(4));
  static const MlaWeights w8 = seeded_weights(tiny_config(8));
  return heads == 8 ? w8 : w4;
}

CpuBackendOptions options(int tp = 1, double fill = 0.0) {
  CpuBackendOptions o;
  o.tensor_parallel_size = tp;
  o.num_blocks = 64;
  o.block_size = 4;
  o.cache_fill = fill;
  return o;
}

// A mixed run: decodes (q = 1 and q = 2 on the decode path), fresh prefills, an extend with
// context on the prefill path, rows reordered. Returns every step's logits in order.
std::vector<Logits> mixed_run(Backend& backend, const RoutingConfig& routing, bool force_prefill = false,
                              std::vector<StepDriver::Step>* steps = nullptr) {
  StepDriver d(routing, 64);
  const int a = d.add_request(seeded_sequence(1, 12, 512), 6);
  const int b = d.add_request(seeded_sequence(2, 14, 512), 9);
  const int c = d.add_request(seeded_sequence(3, 13, 512), 11);
  const std::vector<std::vector<std::pair<int, int>>> script{
      {{a, 6}, {b, 9}},
      {{a, 1}, {b, 2}, {c, 5}},
      {{c, 6}, {a, 1}, {b, 1}},
      {{a, 2}, {c, 1}, {b, 1}},
  };
  std::vector<Logits> out;
  for (const auto& batch : script) {
    StepDriver::Step s;
    out.push_back(d.run(backend, batch, force_prefill, 2, &s));
    if (steps) steps->push_back(std::move(s));
  }
  return out;
}

double worst(const std::vector<Logits>& x, const std::vector<Logits>& y) {
  double w = x.size() == y.size() ? 0.0 : 1e300;
  for (size_t s = 0; s < x.size() && s < y.size(); ++s)
    for (size_t r = 0; r < x[s].size(); ++r) w = std::max(w, rel_diff(x[s][r], y[s][r]));
  return w;
}

}  // namespace

TEST_CASE("cpu backend: prompt prefill == prefix prefill + decode steps (double)", "[mla]") {
  const std::vector<int> seq = seeded_sequence(9, 14, 512);
  CpuBackend<double> whole(tiny_weights(), options());
  StepDriver d1(mla_routing(), 64);
  const int r1 = d1.add_request(seq, 8);
  const std::vector<double> ref = d1.run(whole, {{r1, 14}}, false, 7)[0];  // positions 7..13

  CpuBackend<double> stepped(tiny_weights(), options());
  StepDriver d2(mla_routing(), 64);
  const int r2 = d2.add_request(seq, 8);
  std::vector<double> got = d2.run(stepped, {{r2, 8}})[0];  // position 7
  StepDriver::Step s;
  std::vector<double> more = d2.run(stepped, {{r2, 3}}, false, 3, &s)[0];  // 8..10 on the decode path
  CHECK(s.route.rows[0].path == MlaPath::kMqa);
  got.insert(got.end(), more.begin(), more.end());
  for (int i = 0; i < 3; ++i) {
    more = d2.run(stepped, {{r2, 1}})[0];
    got.insert(got.end(), more.begin(), more.end());
  }
  REQUIRE(got.size() == ref.size());
  CHECK(rel_diff(got, ref) < 1e-12);
  for (double v : ref) REQUIRE(std::isfinite(v));
}

TEST_CASE("cpu backend: every token through the prefill form == the engine's split (double)", "[mla]") {
  CpuBackend<double> split(tiny_weights(), options());
  CpuBackend<double> forced(tiny_weights(), options());
  std::vector<StepDriver::Step> steps;
  const std::vector<Logits> a = mixed_run(split, mla_routing(), false, &steps);
  const std::vector<Logits> b = mixed_run(forced, mla_routing(), true);
  CHECK(steps[1].md.counts.num_mqa_tokens == 3);  // the script exercises both paths
  CHECK(steps[2].md.counts.num_mha_tokens == 6);
  CHECK(worst(a, b) < 1e-12);
}

TEST_CASE("cpu backend: context in many workspace chunks == one chunk (double)", "[mla]") {
  // W = 16 tokens: two rows with context share it, MCC = 8, a context of 10 takes 2 chunks.
  const RoutingConfig small = mla_routing(4, 4, /*max_model_len=*/2, /*max_num_seqs=*/1);
  CpuBackend<double> chunked(tiny_weights(), options());
  CpuBackend<double> whole(tiny_weights(), options());
  StepDriver d1(small, 64), d2(mla_routing(), 64);
  for (StepDriver* d : {&d1, &d2}) {
    d->add_request(seeded_sequence(4, 18, 512), 18);
    d->add_request(seeded_sequence(5, 19, 512), 19);
  }
  d1.run(chunked, {{0, 10}, {1, 11}});
  d2.run(whole, {{0, 10}, {1, 11}});
  StepDriver::Step s1, s2;
  const Logits x = d1.run(chunked, {{0, 8}, {1, 8}}, false, 8, &s1);
  const Logits y = d2.run(whole, {{0, 8}, {1, 8}}, false, 8, &s2);
  REQUIRE(s1.md.prefill);
  CHECK(s1.md.prefill->chunked_context.num_chunks == 2);
  CHECK(s2.md.prefill->chunked_context.num_chunks == 1);
  CHECK(worst({x}, {y}) < 1e-12);
}

TEST_CASE("cpu backend: TP 2/4/8 == TP 1 (double), float close to double", "[mla]") {
  CpuBackend<double> tp1(tiny_weights(8), options(1));
  const std::vector<Logits> ref = mixed_run(tp1, mla_routing());
  for (int tp : {2, 4, 8}) {
    INFO("tp " << tp);
    CpuBackend<double> b(tiny_weights(8), options(tp));
    CHECK(b.name() == "cpu-f64 tp=" + std::to_string(tp));
    CHECK(worst(mixed_run(b, mla_routing()), ref) < 1e-12);
  }
  // fp32 everywhere: round-off only (docs/spec/mla.md §5, ~1e-6 relative; 1e-4 leaves room for 2 layers).
  CpuBackend<float> f32(tiny_weights(8), options(2));
  CHECK(worst(mixed_run(f32, mla_routing()), ref) < 1e-4);
}

TEST_CASE("cpu backend: NaN in unwritten cache rows and unused blocks never reaches an output", "[mla]") {
  CpuBackend<double> poisoned(tiny_weights(), options(1, std::numeric_limits<double>::quiet_NaN()));
  CpuBackend<double> clean(tiny_weights(), options(1, 0.0));
  const std::vector<Logits> a = mixed_run(poisoned, mla_routing());
  const std::vector<Logits> b = mixed_run(clean, mla_routing());
  for (const Logits& step : a)
    for (const std::vector<double>& row : step)
      for (double v : row) REQUIRE(std::isfinite(v));
  CHECK(a == b);  // bitwise: poisoned rows are never read
  // The poison is really there: a slot no sequence uses is still NaN.
  CHECK(std::isnan(poisoned.cache(0).row(0)[0]));
  // Same with the forced prefill form (context gathered from the cache).
  CpuBackend<double> poisoned2(tiny_weights(), options(1, std::numeric_limits<double>::quiet_NaN()));
  CHECK(worst(mixed_run(poisoned2, mla_routing(), true), b) < 1e-12);
}

TEST_CASE("cpu backend: blocks handed out again give the same logits as fresh ones", "[mla]") {
  // A second driver with the same seed hands out the same blocks: request Y overwrites X's slots.
  CpuBackend<double> reused(tiny_weights(), options()), fresh(tiny_weights(), options());
  StepDriver x(mla_routing(), 64), y1(mla_routing(), 64), y2(mla_routing(), 64);
  x.add_request(seeded_sequence(40, 12, 512), 12);
  x.run(reused, {{0, 8}});
  x.run(reused, {{0, 4}}, true);
  std::vector<Logits> a, b;
  for (StepDriver* y : {&y1, &y2}) y->add_request(seeded_sequence(41, 12, 512), 12);
  for (int q : {8, 2, 2}) {
    a.push_back(y1.run(reused, {{0, q}}, true));
    b.push_back(y2.run(fresh, {{0, q}}, true));
  }
  CHECK(a == b);
}

TEST_CASE("cpu backend: bf16 cache storage rounds entries, forms then differ by bf16 rounding only", "[mla]") {
  CpuBackendOptions o = options();
  o.bf16_cache = true;
  CpuBackend<double> split(tiny_weights(), o), forced(tiny_weights(), o);
  const std::vector<Logits> a = mixed_run(split, mla_routing());
  const std::vector<Logits> b = mixed_run(forced, mla_routing(), true);
  const double w = worst(a, b);
  CHECK(w > 1e-6);   // the decode form reads rounded latents of its own tokens
  CHECK(w < 1e-2);   // ... which moves logits by a few bf16 ulps at most (8e-4 measured)
  const LatentCache<double>& c = split.cache(1);
  int checked = 0;
  for (int slot = 0; slot < c.num_slots(); ++slot) {
    if (!c.block_allocated(slot / c.block_size())) continue;
    for (int i = 0; i < c.row_dim(); ++i, ++checked) {
      const double v = c.row(slot)[i];
      if (std::isnan(v)) continue;  // rows of a block not written yet keep the fill
      REQUIRE(static_cast<double>(static_cast<float>(v)) == v);
      REQUIRE(is_bf16_exact(static_cast<float>(v)));
    }
  }
  CHECK(checked > 0);
}
