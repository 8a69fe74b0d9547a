// The two MLA attention forms on random inputs (double): absorbed decode form over the paged
// cache vs prefill form with context chunks, per token, including rows with context and q > 1;
// chunking does not change the result; merge_attn_states.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "attention/cpu/mla_attention_cpu.h"
#include "model/rope.h"
#include "mla_test_util.h"

using namespace mlasim;
using namespace mlasim::test;

namespace {

struct FormsFixture {
  ModelConfig config = tiny_config(3);
  MlaDims dims = mla_dims(config);
  StepDriver driver{mla_routing(4, 4), 64};
  StepDriver::Step step;
  std::vector<double> q, latent, kv_b;
  LatentCache<double> cache;

  FormsFixture() {
    // (nct, q): a decode, a q = 3 decode with context, a fresh prefill, an extend, a 1-token prompt.
    const std::vector<std::pair<int, int>> rows{{5, 1}, {7, 3}, {0, 4}, {20, 6}, {0, 1}};
    std::vector<std::pair<int, int>> batch;
    for (auto [nct, qlen] : rows) {
      const int id = driver.add_request(seeded_sequence(static_cast<std::uint64_t>(batch.size()), nct + qlen, 512), nct + qlen);
      driver.set_computed(id, nct);
      batch.emplace_back(id, qlen);
    }
    step = driver.plan(batch);
    std::uint64_t k = 1;
    auto rnd = [&k]() { return 2.0 * (static_cast<double>(splitmix64(k++) >> 11) * 0x1.0p-53) - 1.0; };
    const int n = step.md.num_actual_tokens, L = dims.latent_dim();
    q.resize(static_cast<size_t>(n) * dims.num_heads * dims.d_qk());
    for (double& v : q) v = rnd();
    kv_b.resize(static_cast<size_t>(dims.num_heads) * (dims.d_n + dims.d_v) * dims.r_kv);
    for (double& v : kv_b) v = rnd() * 0.08;
    // Cache rows of every position below seq_len; NaN everywhere else.
    cache = LatentCache<double>(64, 4, L, std::numeric_limits<double>::quiet_NaN());
    for (int r = 0; r < step.md.num_reqs; ++r)
      for (int j = 0; j < step.md.seq_lens[static_cast<size_t>(r)]; ++j) {
        double* row = cache.mutable_row(cache.slot_of(step.md.block_table[static_cast<size_t>(r)], j));
        for (int i = 0; i < L; ++i) row[i] = rnd();
      }
    latent.resize(static_cast<size_t>(n) * L);
    for (int t = 0; t < n; ++t) {
      const double* row = cache.row(step.md.slot_mapping[static_cast<size_t>(t)]);
      std::copy(row, row + L, &latent[static_cast<size_t>(t) * L]);
    }
  }
  MlaAttentionParams<double> params(int h0, int h1) const {
    return {dims, h0, h1, kv_b.data(), softmax_scale(config), FaultSet{}, {}};
  }
  size_t out_size() const { return static_cast<size_t>(step.md.num_actual_tokens) * dims.num_heads * dims.d_v; }
  size_t lse_size() const { return static_cast<size_t>(step.md.num_actual_tokens) * dims.num_heads; }
};

}  // namespace

TEST_CASE("MLA forms: decode form == prefill form per token in double", "[mla]") {
  FormsFixture f;
  const int rows = f.step.md.num_reqs;
  std::vector<double> o_dec(f.out_size()), o_pre(f.out_size()), l_dec(f.lse_size()), l_pre(f.lse_size());
  mla_decode_form(f.params(0, 3), f.step.md, 0, rows, f.q.data(), f.cache, o_dec.data(), l_dec.data());
  const auto chunks = single_context_chunks(f.step.md, 0, rows);
  mla_prefill_form(f.params(0, 3), f.step.md, 0, rows, chunks, f.q.data(), f.latent.data(), f.cache, o_pre.data(), l_pre.data());
  // Per token: relative to that token's largest output.
  const int n = f.step.md.num_actual_tokens, w = f.dims.num_heads * f.dims.d_v;
  double worst = 0;
  for (int t = 0; t < n; ++t) {
    const std::vector<double> a(o_dec.begin() + t * w, o_dec.begin() + (t + 1) * w);
    const std::vector<double> b(o_pre.begin() + t * w, o_pre.begin() + (t + 1) * w);
    worst = std::max(worst, rel_diff(a, b));
  }
  CHECK(worst < 1e-12);
  CHECK(rel_diff(l_dec, l_pre) < 1e-12);
  for (double v : o_dec) REQUIRE(std::isfinite(v));
}

TEST_CASE("MLA forms: many small context chunks == one chunk, head ranges are independent", "[mla]") {
  FormsFixture f;
  const int rows = f.step.md.num_reqs;
  std::vector<double> one(f.out_size()), many(f.out_size());
  mla_prefill_form(f.params(0, 3), f.step.md, 0, rows, single_context_chunks(f.step.md, 0, rows), f.q.data(),
                   f.latent.data(), f.cache, one.data());
  std::vector<std::vector<ContextChunk>> small(static_cast<size_t>(rows));
  for (int r = 0; r < rows; ++r) {
    const int ctx = f.step.md.context_lens[static_cast<size_t>(r)];
    for (int s = 0; s < ctx; s += 3) small[static_cast<size_t>(r)].push_back({s, std::min(3, ctx - s)});
    if (ctx > 0) small[static_cast<size_t>(r)].push_back({ctx, 0});  // empty chunks are skipped
  }
  mla_prefill_form(f.params(0, 3), f.step.md, 0, rows, small, f.q.data(), f.latent.data(), f.cache, many.data());
  CHECK(rel_diff(many, one) < 1e-12);

  // A rank owning heads [1, 3) computes exactly those heads' outputs, the others left at zero.
  // Equal to 1e-14 relative, not bitwise: the rank's score and value products have as many rows
  // as it owns heads, and a BLAS kernel may round a GEMM's edge rows differently by row count
  // (OpenBLAS 0.3.21's generic Prescott kernel on an Intel Xeon it does not recognize differs in
  // the last bit; its SkylakeX kernel on the same machine does not).
  std::vector<double> part(f.out_size(), 0.0);
  mla_decode_form(f.params(1, 3), f.step.md, 0, rows, f.q.data(), f.cache, part.data());
  std::vector<double> full(f.out_size(), 0.0);
  mla_decode_form(f.params(0, 3), f.step.md, 0, rows, f.q.data(), f.cache, full.data());
  const int w = f.dims.d_v;
  for (size_t i = 0; i < full.size(); ++i) {
    const bool head0 = (i / static_cast<size_t>(w)) % 3 == 0;
    if (head0) REQUIRE(part[i] == 0.0);
    else REQUIRE(std::abs(part[i] - full[i]) <= 1e-14 * std::max(1.0, std::abs(full[i])));
  }
}

TEST_CASE("merge_attn_states: log-sum-exp merge, empty sides", "[mla]") {
  const double a[2] = {1.0, 2.0}, b[2] = {3.0, -1.0};
  double o[2], lse;
  merge_attn_states(a, std::log(1.0), b, std::log(3.0), 2, o, &lse);
  CHECK(o[0] == Approx(0.25 * 1 + 0.75 * 3));
  CHECK(o[1] == Approx(0.25 * 2 - 0.75));
  CHECK(lse == Approx(std::log(4.0)));
  merge_attn_states(a, std::log(1.0), b, std::log(3.0), 2, o, &lse, /*swapped=*/true);
  CHECK(o[0] == Approx(0.75 * 1 + 0.25 * 3));
  const double ninf = -std::numeric_limits<double>::infinity();
  merge_attn_states(a, ninf, b, 0.5, 2, o, &lse);
  CHECK(o[0] == 3.0);
  CHECK(lse == 0.5);
  merge_attn_states(a, 0.25, b, ninf, 2, o, &lse);
  CHECK(o[1] == 2.0);
  CHECK(lse == 0.25);
}

TEST_CASE("latent cache: slots through the block table, blocks allocated on first write", "[mla]") {
  LatentCache<double> c(8192, 16, 576, std::numeric_limits<double>::quiet_NaN());  // vLLM's default pool
  CHECK(c.num_slots() == 8192 * 16);
  const std::vector<int> table{7, 3, StepDriver::kUnusedBlockId};
  CHECK(c.slot_of(table, 0) == 7 * 16);
  CHECK(c.slot_of(table, 17) == 3 * 16 + 1);
  CHECK_FALSE(c.block_allocated(3));
  CHECK(std::isnan(c.row(c.slot_of(table, 17))[0]));
  c.mutable_row(c.slot_of(table, 17))[5] = 2.5;
  CHECK(c.block_allocated(3));
  CHECK(c.row(3 * 16 + 1)[5] == 2.5);
  CHECK(std::isnan(c.row(3 * 16 + 2)[5]));  // the rest of the block keeps the fill
}
