// GPU tests of the MLA prefill kernel (attention/cuda/mla_prefill.cu) and merge_attn_states
// against a double-precision host reference on the same bf16 inputs. Rule: FlashMLA's dense
// prefill tolerances (kit/compare.h; docs/spec/mla.md §5), LSE with the decode LSE tolerance,
// and five repeated runs bitwise identical. Grids follow docs/spec/mla.md §8; data randn/10 in [−1, 1].
#include <catch2/catch.hpp>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "model/bf16.h"
#include "attention/cuda/cuda_check.h"
#include "attention/cuda/merge_attn_states.h"
#include "attention/cuda/mla_prefill.h"
#include "kit/compare.h"
#include "kit/mla_prefill_ref.h"
#include "kit/parallel_for.h"
#include "tests/cuda/gpu_checks.h"

namespace {

using namespace mlasim::kit;
using mlasim::bf16_bits;
using mlasim::bf16_value;
using mlasim::kBf16NaNBits;
using Problem = PrefillProblem;
using Reference = PrefillReference;

constexpr int kDqk = kPrefillDqk;
constexpr int kDv = kPrefillDv;
constexpr CompareTol kOutTol = kPrefillOutTol;
constexpr CompareTol kLseTol = kDecodeLseTol;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// ---------------------------------------------------------------------------------------------
// Device side

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) { MLASIM_CUDA_CHECK(cudaMalloc(&ptr_, std::max<size_t>(bytes, 16))); }
  ~DeviceBuffer() {
    if (ptr_) cudaFree(ptr_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  size_t bytes() const { return bytes_; }
  void upload(const void* src, size_t n) { MLASIM_CUDA_CHECK(cudaMemcpy(ptr_, src, n, cudaMemcpyHostToDevice)); }
  void download(void* dst, size_t n) const { MLASIM_CUDA_CHECK(cudaMemcpy(dst, ptr_, n, cudaMemcpyDeviceToHost)); }
  void fill_bytes(int value) { MLASIM_CUDA_CHECK(cudaMemset(ptr_, value, bytes_)); }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

struct RunOptions {
  bool strided = false;  // q rows padded by 64 NaN elements; v a [T, H, 256] view with NaN in its upper half
};

// A problem uploaded: inputs with 64 NaN rows past the last key (and NaN padding in strided
// mode), outputs allocated and poisoned (bf16/fp32 NaN) before every launch.
struct DevicePrefill {
  DeviceBuffer q, k, v, cu_q, cu_k, out, lse;
  mlasim::MlaPrefillParams params;
};

DeviceBuffer upload_bf16(const std::vector<float>& src, size_t rows, size_t row_elems, size_t dst_row_elems,
                         size_t pad_rows) {
  std::vector<std::uint16_t> bits((rows + pad_rows) * dst_row_elems, kBf16NaNBits);
  constexpr size_t kRowsPerItem = 256;
  parallel_for(static_cast<long>((rows + kRowsPerItem - 1) / kRowsPerItem), [&](long item) {
    for (size_t r = static_cast<size_t>(item) * kRowsPerItem; r < std::min(rows, (static_cast<size_t>(item) + 1) * kRowsPerItem); ++r)
      for (size_t e = 0; e < row_elems; ++e) bits[r * dst_row_elems + e] = bf16_bits(src[r * row_elems + e]);
  });
  DeviceBuffer d(bits.size() * 2);
  d.upload(bits.data(), bits.size() * 2);
  return d;
}

std::unique_ptr<DevicePrefill> upload(const Problem& p, const RunOptions& opt = {}) {
  auto d = std::make_unique<DevicePrefill>();
  const size_t H = static_cast<size_t>(p.H), tq = static_cast<size_t>(p.total_q()), tk = static_cast<size_t>(p.total_k());
  const size_t q_row = H * kDqk + (opt.strided ? 64 : 0);
  d->q = upload_bf16(p.q, tq, H * kDqk, q_row, 0);
  d->k = upload_bf16(p.k, tk, H * kDqk, H * kDqk, 64);
  if (opt.strided) {  // v in the first 128 of each head's 256-wide slot; the other 128 are NaN
    std::vector<float> wide(tk * H * 256, std::numeric_limits<float>::quiet_NaN());
    for (size_t t = 0; t < tk; ++t)
      for (size_t h = 0; h < H; ++h)
        std::copy_n(&p.v[(t * H + h) * kDv], kDv, &wide[(t * H + h) * 256]);
    d->v = upload_bf16(wide, tk, H * 256, H * 256, 64);
  } else {
    d->v = upload_bf16(p.v, tk, H * kDv, H * kDv, 64);
  }
  d->cu_q = DeviceBuffer(p.cu_q.size() * 4);
  d->cu_q.upload(p.cu_q.data(), p.cu_q.size() * 4);
  d->cu_k = DeviceBuffer(p.cu_k.size() * 4);
  d->cu_k.upload(p.cu_k.data(), p.cu_k.size() * 4);
  d->out = DeviceBuffer(tq * H * kDv * 2);
  d->lse = DeviceBuffer(H * tq * 4);

  mlasim::MlaPrefillParams& prm = d->params;
  prm.q = d->q.as<void>();
  prm.k = d->k.as<void>();
  prm.v = d->v.as<void>();
  prm.out = d->out.as<void>();
  prm.lse = d->lse.as<float>();
  prm.cu_seqlens_q = d->cu_q.as<int>();
  prm.cu_seqlens_k = d->cu_k.as<int>();
  if (opt.strided) {
    prm.q_row_stride = static_cast<std::int64_t>(q_row);
    prm.v_row_stride = static_cast<std::int64_t>(H * 256);
    prm.v_head_stride = 256;
  }
  prm.batch = p.batch();
  prm.num_heads = p.H;
  prm.total_q = p.total_q();
  prm.max_seqlen_q = p.max_q();
  prm.max_seqlen_k = p.max_k();
  prm.causal = p.causal;
  prm.softmax_scale = p.scale;
  return d;
}

struct PrefillResult {
  std::vector<std::uint16_t> out;  // [total_q, H, 128] bf16 bits
  std::vector<float> lse;          // [H, total_q]
};

void launch(DevicePrefill& d) {
  d.out.fill_bytes(0xff);  // NaN: a row the kernel fails to write shows up
  d.lse.fill_bytes(0xff);
  mlasim::mla_prefill_launch(d.params, nullptr);
  MLASIM_CUDA_CHECK(cudaDeviceSynchronize());
}

PrefillResult download(const DevicePrefill& d) {
  PrefillResult r;
  r.out.resize(d.out.bytes() / 2);
  r.lse.resize(d.lse.bytes() / 4);
  d.out.download(r.out.data(), d.out.bytes());
  d.lse.download(r.lse.data(), d.lse.bytes());
  return r;
}

PrefillResult run_prefill(const Problem& p, const RunOptions& opt = {}) {
  auto d = upload(p, opt);
  launch(*d);
  return download(*d);
}

// ---------------------------------------------------------------------------------------------
// Checks

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Compares the kernel's (rows, heads) of `got` with `ref`; prints one line; true when all pass.
void check_against_reference(const char* what, const Problem& p, const PrefillResult& got, const Reference& ref) {
  const size_t nr = ref.rows.size(), nh = ref.heads.size(), tq = static_cast<size_t>(p.total_q());
  std::vector<float> out(nr * nh * kDv), lse(nh * nr);
  for (size_t ri = 0; ri < nr; ++ri)
    for (size_t hi = 0; hi < nh; ++hi) {
      const size_t tok = static_cast<size_t>(ref.rows[ri]), h = static_cast<size_t>(ref.heads[hi]);
      for (int d = 0; d < kDv; ++d) out[(ri * nh + hi) * kDv + d] = bf16_value(got.out[(tok * p.H + h) * kDv + d]);
      lse[hi * nr + ri] = got.lse[h * tq + tok];
    }
  // Every head (checked or not) must be written: no poison NaN left anywhere.
  size_t nan_out = 0, nan_lse = 0;
  for (std::uint16_t b : got.out) nan_out += std::isnan(bf16_value(b)) ? 1 : 0;
  for (float x : got.lse) nan_lse += std::isnan(x) ? 1 : 0;
  const CompareResult co = compare_values(out.data(), ref.out.data(), out.size(), kOutTol);
  const CompareResult cl = compare_values(lse.data(), ref.lse.data(), lse.size(), kLseTol);
  std::printf("  %-34s rows=%zu heads=%zu  out max_abs %.2e cos %.2e  lse max_abs %.2e\n", what, nr, nh, co.max_abs,
              co.cos_diff, cl.max_abs);
  INFO(what);
  CHECK_COMPARE("out", co, kOutTol);
  CHECK_COMPARE("lse", cl, kLseTol);
  CHECK(nan_out == 0);  // out elements left unwritten (poison NaN)
  CHECK(nan_lse == 0);
}

// Runs p on the GPU, the reference on (rows, heads) (all when empty), compares.
void check_problem(const char* what, const Problem& p, std::vector<int> heads = {}, std::vector<int> rows = {},
                   const RunOptions& opt = {}) {
  const auto t0 = std::chrono::steady_clock::now();
  const PrefillResult got = run_prefill(p, opt);
  if (heads.empty()) heads = iota_vec(p.H);
  if (rows.empty()) rows = iota_vec(p.total_q());
  const Reference ref = prefill_reference(p, std::move(rows), std::move(heads));
  check_against_reference(what, p, got, ref);
  std::printf("    (%.2f s incl. reference)\n", seconds_since(t0));
}

std::string label(const char* base, bool causal) { return std::string(base) + (causal ? " causal" : " non-causal"); }

// ---------------------------------------------------------------------------------------------
// Tests: prefill

TEST_CASE("mla_prefill_dense_1024", "[gpu][long-reverse]") {
  for (bool causal : {true, false}) {
    const Problem p = make_prefill_problem({1024, 1024}, {1024, 1024}, 16, causal, 101);
    check_problem(label("b2 s1024 H16", causal).c_str(), p);
  }
}

TEST_CASE("mla_prefill_dense_4096", "[gpu][long]") {
  for (bool causal : {true, false}) {
    const Problem p = make_prefill_problem({4096, 4096}, {4096, 4096}, 16, causal, 102);
    check_problem(label("b2 s4096 H16 heads{0,15}", causal).c_str(), p, {0, 15});
  }
}

// s = 8192, causal: every 7th row plus the last 128 rows of each sequence, two heads.
TEST_CASE("mla_prefill_dense_8192", "[gpu][long]") {
  const Problem p = make_prefill_problem({8192, 8192}, {8192, 8192}, 16, true, 103);
  check_problem("b2 s8192 H16 causal sampled rows", p, {0, 15}, sampled_rows(p, 7, 128));
}

// Varlen N(mean, mean/2) clipped ≥ 1: new tokens only (s_q = s_k) and with a context in front.
TEST_CASE("mla_prefill_varlen", "[gpu][long]") {
  Rng rng(104);
  for (bool causal : {true, false}) {
    const std::vector<int> s8 = varlen_lengths(8, 1024, rng);
    check_problem(label("varlen b8 mean1024 H16", causal).c_str(), make_prefill_problem(s8, s8, 16, causal, 105),
                        {0, 9, 15});
    const std::vector<int> s2 = varlen_lengths(2, 4096, rng);
    check_problem(label("varlen b2 mean4096 H16", causal).c_str(), make_prefill_problem(s2, s2, 16, causal, 106), {3});
  }
  std::vector<int> sq = varlen_lengths(6, 512, rng), ctx = varlen_lengths(6, 1024, rng), sk(6);
  for (int b = 0; b < 6; ++b) sk[b] = sq[b] + ctx[b];
  check_problem("varlen b6 q~512 ctx~1024 causal", make_prefill_problem(sq, sk, 16, true, 107), {0, 15});
}

// FlashAttention-3's odd (s_q, s_k) pairs in one varlen batch. Causal (239, 1) and (799, 3) leave
// rows with no visible key: out 0, lse −inf.
TEST_CASE("mla_prefill_fa3_odd_pairs", "[gpu]") {
  for (bool causal : {true, false}) {
    const Problem p = make_prefill_problem({113, 239, 799, 1023}, {203, 1, 3, 1024}, 16, causal, 108);
    check_problem(label("(113,203) (239,1) (799,3) (1023,1024)", causal).c_str(), p);
  }
}

TEST_CASE("mla_prefill_odd_kv_lens", "[gpu][long]") {
  for (bool causal : {true, false}) {
    const Problem p = make_prefill_problem({1832, 3928}, {5532, 7563}, 16, causal, 109);
    check_problem(label("q 1832/3928 kv 5532/7563 head 5", causal).c_str(), p, {5});
  }
}

TEST_CASE("mla_prefill_heads_1_128", "[gpu][long]") {
  check_problem("H1 b2 s 1000/1537 causal", make_prefill_problem({1000, 1537}, {1000, 1537}, 1, true, 110));
  for (bool causal : {true, false})
    check_problem(label("H128 b1 s1024 heads{0,77,127}", causal).c_str(),
                        make_prefill_problem({1024}, {1024}, 128, causal, 111), {0, 77, 127});
}

// q, k ~ N(0, 1) clamped to ±4: score spread ~2 so the running max moves and rescaling matters.
TEST_CASE("mla_prefill_sharp_scores", "[gpu]") {
  for (bool causal : {true, false})
    check_problem(label("sharp b2 s 700/1300 H4", causal).c_str(),
                        make_prefill_problem({700, 1300}, {900, 1300}, 4, causal, 112, 1.0, 4.0));
}

// q with padded rows, v as a strided [T, H, 256] view; the padding is NaN, so reading it shows.
TEST_CASE("mla_prefill_strided_views", "[gpu]") {
  RunOptions opt;
  opt.strided = true;
  check_problem("strided q/v b2 s 300/451 H8 causal", make_prefill_problem({300, 451}, {300, 451}, 8, true, 113), {},
                       {}, opt);
}

// Sequences with s_k = 0 (out 0, lse −inf) and with s_q = 0 (nothing written) between others.
TEST_CASE("mla_prefill_empty_sequences", "[gpu]") {
  for (bool causal : {true, false})
    check_problem(label("(50,0) (0,70) (65,130) (1,1)", causal).c_str(),
                        make_prefill_problem({50, 0, 65, 1}, {0, 70, 130, 1}, 4, causal, 114));
}

// Five runs bitwise identical (outputs and LSE), varlen causal with context.
TEST_CASE("mla_prefill_bitwise_repeat", "[gpu][long-reverse]") {
  Rng rng(115);
  std::vector<int> sq = varlen_lengths(4, 1024, rng), sk(4);
  for (int b = 0; b < 4; ++b) sk[b] = sq[b] + 100 * b;
  const Problem p = make_prefill_problem(sq, sk, 16, true, 116);
  auto d = upload(p);
  launch(*d);
  const PrefillResult first = download(*d);
  for (int run = 1; run < 5; ++run) {
    launch(*d);
    const PrefillResult again = download(*d);
    INFO("run " << run << " against run 0");
    CHECK(std::memcmp(again.out.data(), first.out.data(), first.out.size() * 2) == 0);
    CHECK(std::memcmp(again.lse.data(), first.lse.data(), first.lse.size() * 4) == 0);
  }
}

// ---------------------------------------------------------------------------------------------
// Tests: chunked context (docs/spec/routing.md §4)

void merge_on_device(const DeviceBuffer& out, const DeviceBuffer& out_lse, const DeviceBuffer& pre_out,
                     const DeviceBuffer& pre_lse, const DeviceBuffer& suf_out, const DeviceBuffer& suf_lse, int tokens,
                     int heads, int head_size) {
  mlasim::MergeAttnStatesParams m;
  m.out = out.as<void>();
  m.out_lse = out_lse.as<float>();
  m.prefix_out = pre_out.as<void>();
  m.prefix_lse = pre_lse.as<float>();
  m.suffix_out = suf_out.as<void>();
  m.suffix_lse = suf_lse.as<float>();
  m.num_tokens = tokens;
  m.num_heads = heads;
  m.head_size = head_size;
  mlasim::merge_attn_states_launch(m, nullptr);
  MLASIM_CUDA_CHECK(cudaDeviceSynchronize());
}

// Rows attended as vLLM does: context in chunks of 1024 positions (non-causal, merged in place
// chunk after chunk), then merged with the new tokens' causal pass. Equals one bottom-right causal
// pass over [context ; new] within the prefill tolerance, and the double reference. Row 0's third
// chunk and all of row 2's chunks are empty (lse −inf → the other side is copied).
TEST_CASE("mla_prefill_chunked_context", "[gpu]") {
  const std::vector<int> q_new = {300, 517, 64}, ctx = {1500, 2200, 0};
  constexpr int kChunk = 1024, kChunks = 3, H = 8;
  std::vector<int> s_k(3);
  for (int b = 0; b < 3; ++b) s_k[b] = ctx[b] + q_new[b];
  const Problem full = make_prefill_problem(q_new, s_k, H, true, 117);
  const int T = full.total_q();

  PrefillResult merged_runs[2];
  for (int rep = 0; rep < 2; ++rep) {  // twice: the whole pipeline is bitwise repeatable
    auto new_part = upload(slice_keys(full, ctx, q_new, true));
    launch(*new_part);
    std::vector<std::unique_ptr<DevicePrefill>> chunks;
    for (int c = 0; c < kChunks; ++c) {
      std::vector<int> begin(3), len(3);
      for (int b = 0; b < 3; ++b) {
        begin[b] = std::min(ctx[b], c * kChunk);
        len[b] = std::min(ctx[b], (c + 1) * kChunk) - begin[b];
      }
      chunks.push_back(upload(slice_keys(full, begin, len, false)));
      launch(*chunks.back());
    }
    for (int c = 1; c < kChunks; ++c)  // in place: chunk 0's buffers accumulate
      merge_on_device(chunks[0]->out, chunks[0]->lse, chunks[0]->out, chunks[0]->lse, chunks[c]->out, chunks[c]->lse, T,
                      H, kDv);
    DeviceBuffer out(static_cast<size_t>(T) * H * kDv * 2), lse(static_cast<size_t>(H) * T * 4);
    out.fill_bytes(0xff);
    lse.fill_bytes(0xff);
    merge_on_device(out, lse, chunks[0]->out, chunks[0]->lse, new_part->out, new_part->lse, T, H, kDv);
    merged_runs[rep].out.resize(out.bytes() / 2);
    merged_runs[rep].lse.resize(lse.bytes() / 4);
    out.download(merged_runs[rep].out.data(), out.bytes());
    lse.download(merged_runs[rep].lse.data(), lse.bytes());
  }
  const PrefillResult& merged = merged_runs[0];
  {
    INFO("the chunked pipeline run twice, bitwise");
    CHECK(std::memcmp(merged_runs[0].out.data(), merged_runs[1].out.data(), merged.out.size() * 2) == 0);
    CHECK(std::memcmp(merged_runs[0].lse.data(), merged_runs[1].lse.data(), merged.lse.size() * 4) == 0);
  }

  const PrefillResult one_pass = run_prefill(full);
  std::vector<float> a(merged.out.size()), r(merged.out.size());
  for (size_t i = 0; i < a.size(); ++i) a[i] = bf16_value(merged.out[i]), r[i] = bf16_value(one_pass.out[i]);
  const CompareResult c = compare_values(a.data(), r.data(), a.size(), kOutTol);
  const CompareResult cl = compare_values(merged.lse.data(), one_pass.lse.data(), merged.lse.size(), kLseTol);
  CHECK_COMPARE("merged vs one pass: out", c, kOutTol);
  CHECK_COMPARE("merged vs one pass: lse", cl, kLseTol);
  const Reference ref = prefill_reference(full, iota_vec(T), iota_vec(H));
  check_against_reference("merged chunks vs reference", full, merged, ref);
  check_against_reference("one pass vs reference", full, one_pass, ref);
}

// ---------------------------------------------------------------------------------------------
// Tests: merge_attn_states alone

// Row kinds by (t·H + h) % 8: 0 prefix −inf, 1 suffix +inf (FlashAttention's marker), 2 both
// empty, 3 prefix NaN, 4.. ordinary (lse in [−3, 9]). Head sizes 128 and 512, out of place and
// in place (bitwise equal).
TEST_CASE("merge_attn_states_cases", "[gpu]") {
  for (int D : {128, 512}) {
    const int T = 37, H = 5;
    Rng rng(118 + D);
    const size_t n = static_cast<size_t>(T) * H * D;
    const std::vector<float> oa = randn_bf16_values(n, 2 * (118 + D), 1.0, 4.0);
    const std::vector<float> ob = randn_bf16_values(n, 2 * (118 + D) + 1, 1.0, 4.0);
    std::vector<float> la(static_cast<size_t>(H) * T), lb(la.size());
    for (int t = 0; t < T; ++t)
      for (int h = 0; h < H; ++h) {
        const size_t li = static_cast<size_t>(h) * T + t;
        la[li] = static_cast<float>(-3 + 12 * rng.uniform());
        lb[li] = static_cast<float>(-3 + 12 * rng.uniform());
        switch ((t * H + h) % 8) {
          case 0: la[li] = -INFINITY; break;
          case 1: lb[li] = INFINITY; break;
          case 2: la[li] = -INFINITY, lb[li] = INFINITY; break;
          case 3: la[li] = std::numeric_limits<float>::quiet_NaN(); break;
          default: break;
        }
      }
    // Expected, double from the bf16 inputs.
    std::vector<double> eo(n), el(la.size());
    for (int t = 0; t < T; ++t)
      for (int h = 0; h < H; ++h) {
        const size_t li = static_cast<size_t>(h) * T + t, base = (static_cast<size_t>(t) * H + h) * D;
        double a = la[li], b = lb[li];
        if (a == INFINITY) a = kNegInf;
        if (b == INFINITY) b = kNegInf;
        for (int d = 0; d < D; ++d) {
          double& o = eo[base + d];
          if (std::isnan(a) || std::isnan(b)) o = NAN;
          else if (a == kNegInf && b == kNegInf) o = 0;
          else if (b == kNegInf) o = oa[base + d];
          else if (a == kNegInf) o = ob[base + d];
          else {
            const double m = std::max(a, b), wa = std::exp(a - m), wb = std::exp(b - m);
            o = (oa[base + d] * wa + ob[base + d] * wb) / (wa + wb);
          }
        }
        if (std::isnan(a) || std::isnan(b)) el[li] = NAN;
        else if (a == kNegInf && b == kNegInf) el[li] = kNegInf;
        else {
          const double m = std::max(a, b);
          el[li] = m + std::log(std::exp(a - m) + std::exp(b - m));
        }
      }
    DeviceBuffer da = upload_bf16(oa, n, 1, 1, 0), db = upload_bf16(ob, n, 1, 1, 0);
    DeviceBuffer dla(la.size() * 4), dlb(lb.size() * 4), dout(n * 2), dlse(la.size() * 4);
    dla.upload(la.data(), la.size() * 4);
    dlb.upload(lb.data(), lb.size() * 4);
    dout.fill_bytes(0xff);
    dlse.fill_bytes(0xff);
    merge_on_device(dout, dlse, da, dla, db, dlb, T, H, D);
    std::vector<std::uint16_t> got(n);
    std::vector<float> got_lse(la.size());
    dout.download(got.data(), n * 2);
    dlse.download(got_lse.data(), got_lse.size() * 4);
    std::vector<float> gf(n);
    for (size_t i = 0; i < n; ++i) gf[i] = bf16_value(got[i]);
    const CompareResult co = compare_values(gf.data(), eo.data(), n, kOutTol);
    const CompareResult cl = compare_values(got_lse.data(), el.data(), el.size(), kLseTol);
    // One side empty: the other side bitwise.
    size_t copy_mismatch = 0;
    for (int t = 0; t < T; ++t)
      for (int h = 0; h < H; ++h) {
        const int kind = (t * H + h) % 8;
        if (kind != 0 && kind != 1) continue;
        const size_t base = (static_cast<size_t>(t) * H + h) * D;
        for (int d = 0; d < D; ++d)
          copy_mismatch += got[base + d] != bf16_bits(kind == 0 ? ob[base + d] : oa[base + d]) ? 1 : 0;
      }
    // In place: out = prefix, out_lse = prefix_lse.
    merge_on_device(da, dla, da, dla, db, dlb, T, H, D);
    std::vector<std::uint16_t> inplace(n);
    std::vector<float> inplace_lse(la.size());
    da.download(inplace.data(), n * 2);
    dla.download(inplace_lse.data(), inplace_lse.size() * 4);
    const bool same = std::memcmp(inplace.data(), got.data(), n * 2) == 0 &&
                      std::memcmp(inplace_lse.data(), got_lse.data(), got_lse.size() * 4) == 0;
    INFO("head_size " << D);
    CHECK_COMPARE("out", co, kOutTol);
    CHECK_COMPARE("lse", cl, kLseTol);
    CHECK(copy_mismatch == 0);  // one side empty: the other side's values, bitwise
    CHECK(same);                // in place equals out of place, bitwise
  }
}

}  // namespace
