// GPU tests of the CUDA model backend (attention/cuda/cuda_backend.h) and its pieces: element-wise
// kernels and the cuBLAS wrapper against host references, the in-device all-reduce, the backend
// against the CPU float backend (mixed decode/prefill steps, TP 1/2/4/8 on one device, forced
// prefill form, chunked context, q_lora, faults, v2-lite-attn TP 1/2/8) and every scenario under
// scenarios/ against golden/<name>/logits.npy, all within the bf16 tolerance class.
#include <catch2/catch.hpp>
#include <cuda_runtime.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "model/bf16.h"
#include "attention/cpu/cpu_backend.h"
#include "attention/cuda/communicator.h"
#include "attention/cuda/cublas_gemm.h"
#include "attention/cuda/cuda_backend.h"
#include "attention/cuda/cuda_check.h"
#include "attention/cuda/device_weights.h"
#include "attention/cuda/elementwise.h"
#include "attention/cpu/mla_ops.h"
#include "model/rope.h"
#include "model/tp_shard.h"
#include "kit/rng.h"
#include "scenario/scenario_loader.h"
#include "tests/attention/mla_test_util.h"
#include "tests/cuda/gpu_checks.h"
#include "verify/logits_compare.h"
#include "verify/logits_golden.h"
#include "attention/kv_cache_quant.h"
#include "engine/replay.h"

namespace {

using namespace mlasim;
using kit::Rng;
using u16 = std::uint16_t;

// ---------------------------------------------------------------------------------------------
// Helpers

template <typename T>
DeviceBuffer to_device(const std::vector<T>& v) {
  DeviceBuffer b(0, std::max<std::size_t>(v.size() * sizeof(T), 4));
  b.upload(v.data(), v.size() * sizeof(T));
  MLASIM_CUDA_CHECK(cudaDeviceSynchronize());  // a pageable upload may still be in flight for other streams
  return b;
}

template <typename T>
std::vector<T> to_host(const DeviceBuffer& b, std::size_t n) {
  MLASIM_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<T> v(n);
  MLASIM_CUDA_CHECK(cudaMemcpy(v.data(), b.get(), n * sizeof(T), cudaMemcpyDeviceToHost));
  return v;
}

std::vector<float> randn(Rng& rng, std::size_t n, double scale = 1.0) {
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(rng.normal() * scale);
  return v;
}

std::vector<u16> randn_bf16(Rng& rng, std::size_t n, double scale = 1.0) {
  std::vector<u16> v(n);
  for (u16& x : v) x = bf16_bits(static_cast<float>(rng.normal() * scale));
  return v;
}

// |got - ref| <= rel·|ref| + abs for every element; a failure names the check and the first element outside.
void check_close(const char* what, const std::vector<double>& got, const std::vector<double>& ref, double rel,
                 double abs) {
  INFO(what << " (rel " << rel << " abs " << abs << ")");
  REQUIRE(got.size() == ref.size());
  std::string outside;
  for (std::size_t i = 0; i < got.size() && outside.empty(); ++i)
    if (!(std::fabs(got[i] - ref[i]) <= rel * std::fabs(ref[i]) + abs))
      outside = "element " + std::to_string(i) + " is " + std::to_string(got[i]) + ", expected " + std::to_string(ref[i]);
  CHECK(outside == "");
}

template <typename T>
void check_equal(const char* what, const std::vector<T>& got, const std::vector<T>& ref) {
  INFO(what);
  CHECK(gpu_test::first_difference(got, ref) == "");
}

// bf16 rounding leaves at most half an ulp (2^-8 relative) on top of an fp32 result.
constexpr double kBf16Rel = 1.0 / 256 + 1e-5;

// ---------------------------------------------------------------------------------------------
// Element-wise kernels vs the host

TEST_CASE("elementwise_rms_norm", "[gpu]") {
  Rng rng(1);
  const int rows = 5, cols = 256, ldx = 300, ldy = 260;
  const std::vector<float> x = randn(rng, static_cast<std::size_t>(rows) * ldx, 3.0);
  std::vector<float> w = randn(rng, cols, 0.2);
  for (float& v : w) v += 1.0f;
  std::vector<double> ref(static_cast<std::size_t>(rows) * cols);
  for (int r = 0; r < rows; ++r) {
    std::vector<double> xr(x.begin() + r * ldx, x.begin() + r * ldx + cols), wr(w.begin(), w.end());
    rms_norm(xr.data(), wr.data(), cols, 1e-6, &ref[static_cast<std::size_t>(r) * cols]);
  }
  DeviceBuffer dx = to_device(x), dw = to_device(w), dy(0, static_cast<std::size_t>(rows) * ldy * 4);
  RmsNormParams p;
  p.x = dx.as<const float>();
  p.ldx = ldx;
  p.w = dw.as<const float>();
  p.rows = rows;
  p.cols = cols;
  p.eps = 1e-6f;
  p.y = dy.get();
  p.ldy = ldy;
  p.y_type = ElemType::kBf16;
  rms_norm(p, nullptr);
  const std::vector<u16> yb = to_host<u16>(dy, static_cast<std::size_t>(rows) * ldy);
  std::vector<double> got;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) got.push_back(bf16_value(yb[static_cast<std::size_t>(r) * ldy + c]));
  check_close("rms_norm bf16 out", got, ref, kBf16Rel, 1e-6);
  // fp32, in place on a strided block (the kv_a_layernorm on the first 512 of 576 columns).
  p.y = dx.get();
  p.ldy = ldx;
  p.y_type = ElemType::kF32;
  rms_norm(p, nullptr);
  const std::vector<float> yf = to_host<float>(dx, static_cast<std::size_t>(rows) * ldx);
  got.clear();
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) got.push_back(yf[static_cast<std::size_t>(r) * ldx + c]);
  check_close("rms_norm fp32 in place", got, ref, 1e-5, 1e-6);
  for (int r = 0; r < rows; ++r)  // the columns past `cols` are untouched
    for (int c = cols; c < ldx; ++c)
      if (yf[static_cast<std::size_t>(r) * ldx + c] != x[static_cast<std::size_t>(r) * ldx + c]) {
        INFO("rms_norm wrote past its columns at row " << r << " column " << c);
        FAIL_CHECK();
        return;
      }
}

TEST_CASE("elementwise_rope_interleaved_and_neox", "[gpu]") {
  Rng rng(2);
  const ModelConfig c = test::tiny_config();
  const std::vector<double> inv_freq = yarn_inv_freq(c);
  const int rows = 7, heads = 3, hd = 192, off = 128, dr = 64, half = 32;
  const std::vector<int> positions{0, 1, 2, 17, 100, 4095, 5000};
  std::vector<float> cosv(static_cast<std::size_t>(rows) * half), sinv(cosv.size());
  std::vector<RopeAngles> angles;
  for (int r = 0; r < rows; ++r) {
    angles.push_back(rope_angles(inv_freq, positions[static_cast<std::size_t>(r)]));
    for (int i = 0; i < half; ++i) {
      cosv[static_cast<std::size_t>(r) * half + i] = static_cast<float>(angles.back().cos[static_cast<std::size_t>(i)]);
      sinv[static_cast<std::size_t>(r) * half + i] = static_cast<float>(angles.back().sin[static_cast<std::size_t>(i)]);
    }
  }
  const std::vector<float> x = randn(rng, static_cast<std::size_t>(rows) * heads * hd);
  DeviceBuffer dc = to_device(cosv), ds = to_device(sinv);
  for (bool neox : {false, true}) {
    std::vector<double> ref(x.begin(), x.end());
    for (int r = 0; r < rows; ++r)
      for (int h = 0; h < heads; ++h) {
        double* v = &ref[(static_cast<std::size_t>(r) * heads + h) * hd + off];
        if (neox) {
          apply_rope_neox(v, angles[static_cast<std::size_t>(r)]);
        } else {
          apply_rope_interleaved(v, angles[static_cast<std::size_t>(r)]);
        }
      }
    DeviceBuffer dx = to_device(x);
    apply_rope({.x = dx.as<float>(),
                .row_stride = static_cast<long long>(heads) * hd,
                .head_stride = hd,
                .offset = off,
                .rows = rows,
                .heads = heads,
                .rope_dim = dr,
                .cos = dc.as<const float>(),
                .sin = ds.as<const float>(),
                .neox = neox},
               nullptr);
    const std::vector<float> y = to_host<float>(dx, x.size());
    check_close(neox ? "rope neox" : "rope interleaved", std::vector<double>(y.begin(), y.end()), ref, 1e-5, 1e-5);
  }
}

TEST_CASE("elementwise_swiglu_add_and_conversions", "[gpu]") {
  Rng rng(3);
  const int rows = 3, cols = 1000;
  const std::size_t n = static_cast<std::size_t>(rows) * cols;
  const std::vector<float> g = randn(rng, n, 3.0), u = randn(rng, n, 2.0);
  DeviceBuffer dg = to_device(g), du = to_device(u), da(0, n * 2);
  swiglu_to_bf16(dg.as<const float>(), 0, du.as<const float>(), 0, rows, cols, da.as<u16>(), 0, nullptr);
  std::vector<double> ref(n), got(n);
  const std::vector<u16> a = to_host<u16>(da, n);
  for (std::size_t i = 0; i < n; ++i) {
    ref[i] = silu(static_cast<double>(g[i])) * u[i];
    got[i] = bf16_value(a[i]);
  }
  check_close("swiglu", got, ref, kBf16Rel, 1e-6);

  add_inplace(dg.as<float>(), du.as<const float>(), static_cast<long long>(n), nullptr);
  std::vector<float> sum(n);
  for (std::size_t i = 0; i < n; ++i) sum[i] = g[i] + u[i];
  check_equal("add_inplace", to_host<float>(dg, n), sum);

  // fp32 -> bf16: round to nearest even, ties included; bf16 -> fp32 exact.
  std::vector<float> f = randn(rng, 4096, 10.0);
  for (float v : {0.0f, -0.0f, 1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, -1.0f - 0x1p-8f, 65504.0f, 1e-40f, 3.4e38f,
                  INFINITY, -INFINITY})
    f.push_back(v);
  DeviceBuffer df = to_device(f), db(0, f.size() * 2), dback(0, f.size() * 4);
  f32_to_bf16(df.as<const float>(), db.as<u16>(), static_cast<long long>(f.size()), nullptr);
  bf16_to_f32(db.as<const u16>(), dback.as<float>(), static_cast<long long>(f.size()), nullptr);
  std::vector<u16> want(f.size());
  std::vector<float> want_back(f.size());
  for (std::size_t i = 0; i < f.size(); ++i) want[i] = bf16_bits(f[i]), want_back[i] = round_to_bf16(f[i]);
  check_equal("f32_to_bf16", to_host<u16>(db, f.size()), want);
  check_equal("bf16_to_f32", to_host<float>(dback, f.size()), want_back);
}

TEST_CASE("elementwise_gathers_and_concats", "[gpu]") {
  Rng rng(4);
  {  // embedding
    const int vocab = 50, d = 300;
    const std::vector<u16> table = randn_bf16(rng, static_cast<std::size_t>(vocab) * d);
    const std::vector<int> ids{3, 0, 49, 3, 17};
    DeviceBuffer dt = to_device(table), di = to_device(ids), dout(0, ids.size() * d * 4);
    embedding_gather(di.as<const int>(), static_cast<int>(ids.size()), dt.as<const u16>(), vocab, d, dout.as<float>(), nullptr);
    std::vector<float> want;
    for (int id : ids)
      for (int c = 0; c < d; ++c) want.push_back(bf16_value(table[static_cast<std::size_t>(id) * d + c]));
    check_equal("embedding_gather", to_host<float>(dout, want.size()), want);
  }
  {  // gather_rows, 2-byte (cache rows) and 4-byte (hidden states)
    const int rows = 40, width = 576, ld = 600;
    const std::vector<u16> src = randn_bf16(rng, static_cast<std::size_t>(rows) * ld);
    const std::vector<int> idx{39, 0, 5, 5, 12};
    DeviceBuffer ds = to_device(src), di = to_device(idx), dd(0, idx.size() * width * 2);
    gather_rows(ds.get(), ld, di.as<const int>(), static_cast<int>(idx.size()), width, 2, dd.get(), width, nullptr);
    std::vector<u16> want;
    for (int j : idx)
      for (int c = 0; c < width; ++c) want.push_back(src[static_cast<std::size_t>(j) * ld + c]);
    check_equal("gather_rows bf16", to_host<u16>(dd, want.size()), want);
    const std::vector<float> srcf = randn(rng, static_cast<std::size_t>(rows) * 256);
    DeviceBuffer dsf = to_device(srcf), ddf(0, idx.size() * 256 * 4);
    gather_rows(dsf.get(), 256, di.as<const int>(), static_cast<int>(idx.size()), 256, 4, ddf.get(), 256, nullptr);
    std::vector<float> wantf;
    for (int j : idx)
      for (int c = 0; c < 256; ++c) wantf.push_back(srcf[static_cast<std::size_t>(j) * 256 + c]);
    check_equal("gather_rows fp32", to_host<float>(ddf, wantf.size()), wantf);
  }
  {  // decode query [q_lat | q_pe] and prefill keys [k_nope | k_pe]
    const int rows = 9, heads = 3;
    const std::vector<u16> q = randn_bf16(rng, static_cast<std::size_t>(rows) * heads * 192);
    const std::vector<u16> qlat0 = randn_bf16(rng, static_cast<std::size_t>(rows) * heads * 576);
    DeviceBuffer dq = to_device(q), dql = to_device(qlat0);
    concat_q_pe_for_decode(dq.as<const u16>(), rows, heads, 128, 64, 512, dql.as<u16>(), nullptr);
    std::vector<u16> want = qlat0;
    for (int r = 0; r < rows; ++r)
      for (int h = 0; h < heads; ++h)
        for (int c = 0; c < 64; ++c)
          want[(static_cast<std::size_t>(r) * heads + h) * 576 + 512 + c] = q[(static_cast<std::size_t>(r) * heads + h) * 192 + 128 + c];
    check_equal("concat_q_pe_for_decode", to_host<u16>(dql, want.size()), want);

    const std::vector<u16> kv = randn_bf16(rng, static_cast<std::size_t>(rows) * heads * 256);
    const std::vector<u16> lat = randn_bf16(rng, static_cast<std::size_t>(rows) * 576);
    DeviceBuffer dkv = to_device(kv), dlat = to_device(lat), dk(0, static_cast<std::size_t>(rows) * heads * 192 * 2);
    concat_k_for_prefill(dkv.as<const u16>(), dlat.as<const u16>(), rows, heads, 128, 128, 64, 512, dk.as<u16>(), nullptr);
    std::vector<u16> wk(static_cast<std::size_t>(rows) * heads * 192);
    for (int r = 0; r < rows; ++r)
      for (int h = 0; h < heads; ++h) {
        u16* k = &wk[(static_cast<std::size_t>(r) * heads + h) * 192];
        for (int c = 0; c < 128; ++c) k[c] = kv[(static_cast<std::size_t>(r) * heads + h) * 256 + c];
        for (int c = 0; c < 64; ++c) k[128 + c] = lat[static_cast<std::size_t>(r) * 576 + 512 + c];
      }
    check_equal("concat_k_for_prefill", to_host<u16>(dk, wk.size()), wk);
  }
}

// ---------------------------------------------------------------------------------------------
// cuBLAS wrapper vs a double host reference

// y_b[r, o] = Σ_i x_b[r, i] W_b(o, i) in double, with Σ|x w| for the error bound.
struct GemmRef {
  std::vector<double> y, mag;
};
GemmRef gemm_ref(const LinearParams& p, const std::vector<u16>& x, const std::vector<u16>& w) {
  GemmRef g;
  for (int b = 0; b < p.batch; ++b)
    for (int r = 0; r < p.rows; ++r)
      for (int o = 0; o < p.out; ++o) {
        double s = 0, m = 0;
        for (int i = 0; i < p.in; ++i) {
          const double xv = bf16_value(x[static_cast<std::size_t>(b * p.stride_x + r * p.ldx + i)]);
          const std::size_t wi = static_cast<std::size_t>(b * p.stride_w + (p.w_in_out ? i * p.ldw + o : o * p.ldw + i));
          const double wv = bf16_value(w[wi]);
          s += xv * wv;
          m += std::fabs(xv * wv);
        }
        g.y.push_back(s);
        g.mag.push_back(m);
      }
  return g;
}

void check_gemm(const char* what, CublasGemm& gemm, LinearParams p, Rng& rng) {
  const std::size_t nx = static_cast<std::size_t>((p.batch - 1) * p.stride_x + p.rows * p.ldx);
  const std::size_t nw = static_cast<std::size_t>((p.batch - 1) * p.stride_w + (p.w_in_out ? p.in : p.out) * p.ldw);
  const std::size_t ny = static_cast<std::size_t>((p.batch - 1) * p.stride_y + p.rows * p.ldy);
  const std::vector<u16> x = randn_bf16(rng, nx), w = randn_bf16(rng, nw, 0.1);
  const std::vector<float> y0 = randn(rng, ny);
  DeviceBuffer dx = to_device(x), dw = to_device(w), dy = to_device(y0);
  if (p.y_type == GemmOut::kBf16) dy.zero();
  p.x = dx.get();
  p.w = dw.get();
  p.y = dy.get();
  gemm.linear(p);
  MLASIM_CUDA_CHECK(cudaDeviceSynchronize());
  const GemmRef ref = gemm_ref(p, x, w);
  std::vector<double> got, want;
  std::vector<u16> yb;
  std::vector<float> yf;
  if (p.y_type == GemmOut::kBf16) yb = to_host<u16>(dy, ny);
  else yf = to_host<float>(dy, ny);
  std::size_t k = 0;
  std::string outside;
  for (int b = 0; b < p.batch; ++b)
    for (int r = 0; r < p.rows; ++r)
      for (int o = 0; o < p.out; ++o, ++k) {
        const std::size_t at = static_cast<std::size_t>(b * p.stride_y + r * p.ldy + o);
        const double v = p.y_type == GemmOut::kBf16 ? bf16_value(yb[at]) : yf[at];
        const double expect = ref.y[k] + p.beta * y0[at];
        const double bound = 1e-5 * ref.mag[k] + 1e-6 + (p.y_type == GemmOut::kBf16 ? kBf16Rel * std::fabs(expect) : 0.0);
        if (!(std::fabs(v - expect) <= bound) && outside.empty()) {
          char buf[160];
          std::snprintf(buf, sizeof buf, "batch %d row %d out %d is %.8g, expected %.8g (bound %.2e)", b, r, o, v, expect,
                        bound);
          outside = buf;
        }
      }
  INFO(what);
  CHECK(outside == "");
}

TEST_CASE("cublas_linear", "[gpu][forward-only]") {
  Rng rng(5);
  cudaStream_t stream = nullptr;
  MLASIM_CUDA_CHECK(cudaStreamCreate(&stream));
  {
    CublasGemm gemm(0, stream);
    LinearParams p;  // plain Linear, fp32 out
    p.rows = 37, p.out = 70, p.in = 96, p.ldx = 96, p.ldw = 96, p.ldy = 70;
    check_gemm("linear fp32", gemm, p, rng);
    LinearParams s = p;  // strided slices, bf16 out
    s.ldx = 100, s.ldw = 128, s.ldy = 80, s.y_type = GemmOut::kBf16;
    check_gemm("linear strided bf16", gemm, s, rng);
    LinearParams a = p;  // accumulate
    a.beta = 1.f;
    check_gemm("linear beta 1", gemm, a, rng);
    LinearParams uk;  // the W_UK absorption: [in, out] weights, batched over heads, decode layouts
    uk.rows = 5, uk.out = 512, uk.in = 128, uk.batch = 3;
    uk.ldx = 3 * 192, uk.stride_x = 192, uk.w_in_out = true, uk.ldw = 512, uk.stride_w = 256 * 512;
    uk.ldy = 3 * 576, uk.stride_y = 576, uk.y_type = GemmOut::kBf16;
    check_gemm("W_UK absorption", gemm, uk, rng);
    LinearParams uv;  // W_UV: Linear weights, batched over heads
    uv.rows = 5, uv.out = 128, uv.in = 512, uv.batch = 3;
    uv.ldx = 3 * 512, uv.stride_x = 512, uv.ldw = 512, uv.stride_w = 256 * 512;
    uv.ldy = 3 * 128, uv.stride_y = 128, uv.y_type = GemmOut::kBf16;
    check_gemm("W_UV", gemm, uv, rng);
  }
  MLASIM_CUDA_CHECK(cudaStreamDestroy(stream));
}

TEST_CASE("communicator_in_device_rank_order", "[gpu]") {
  const int n = 3;
  const std::size_t count = 100003;
  std::vector<cudaStream_t> streams(n);
  std::vector<void*> vs;
  for (auto& s : streams) {
    MLASIM_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    vs.push_back(s);
  }
  {
    Communicator comm({0, 0, 0}, vs);
    CHECK(comm.mode() == "in-device");
    Rng rng(6);
    std::vector<std::vector<float>> host;
    std::vector<DeviceBuffer> dev;
    std::vector<float*> ptrs;
    for (int r = 0; r < n; ++r) {
      host.push_back(randn(rng, count, 1.0 + r));
      dev.push_back(to_device(host.back()));
      ptrs.push_back(dev.back().as<float>());
    }
    comm.all_reduce_sum(ptrs, count);
    std::vector<float> want(count);
    for (std::size_t i = 0; i < count; ++i) want[i] = (host[0][i] + host[1][i]) + host[2][i];
    for (int r = 0; r < n; ++r) {
      MLASIM_CUDA_CHECK(cudaStreamSynchronize(streams[static_cast<std::size_t>(r)]));
      check_equal("in-device all-reduce", to_host<float>(dev[static_cast<std::size_t>(r)], count), want);
    }
  }
  for (auto& s : streams) MLASIM_CUDA_CHECK(cudaStreamDestroy(s));
}

TEST_CASE("device_weights_rank_shard", "[gpu][forward-only]") {
  const MlaWeights w = seeded_weights(test::tiny_config(8));
  const ModelConfig& c = w.config;
  const TpShard s = tp_shard(c, 4, 2);  // heads [4, 6), MLP [256, 384)
  DeviceWeights dw(w, s, 0, false);
  const MlaLayerWeights& l = w.layers[1];
  auto down = [](const void* ptr, std::size_t n) {
    std::vector<u16> v(n);
    MLASIM_CUDA_CHECK(cudaMemcpy(v.data(), ptr, n * 2, cudaMemcpyDeviceToHost));
    return v;
  };
  auto bits = [](const std::vector<float>& v) {
    std::vector<u16> b;
    for (float x : v) b.push_back(bf16_bits(x));
    return b;
  };
  const int nh = 2, m = 128, d = c.hidden_size;
  CHECK(dw.norm() == nullptr);
  CHECK(dw.lm_head() == nullptr);
  std::vector<float> kvb(l.kv_b_proj.values.begin() + 4 * 256 * 512, l.kv_b_proj.values.begin() + 6 * 256 * 512);
  check_equal("kv_b_proj rows", down(dw.layer(1).kv_b_proj, kvb.size()), bits(kvb));
  std::vector<float> o;
  for (int r = 0; r < d; ++r)
    for (int k = 0; k < nh * 128; ++k) o.push_back(l.o_proj.values[static_cast<std::size_t>(r) * 4 * 128 * 2 + 4 * 128 + k]);
  check_equal("o_proj columns", down(dw.layer(1).o_proj, o.size()), bits(o));
  std::vector<float> dn;
  for (int r = 0; r < d; ++r)
    for (int k = 0; k < m; ++k) dn.push_back(l.down_proj.values[static_cast<std::size_t>(r) * 512 + 256 + k]);
  check_equal("down_proj columns", down(dw.layer(1).down_proj, dn.size()), bits(dn));
  std::vector<float> q(l.q_proj.values.begin() + 4 * 192 * d, l.q_proj.values.begin() + 6 * 192 * d);
  check_equal("q_proj rows", down(dw.layer(1).q_proj, q.size()), bits(q));
}

// ---------------------------------------------------------------------------------------------
// The backend against the CPU float backend

CudaBackendOptions cuda_options(int tp, int num_blocks, int block_size, FaultSet faults = {}) {
  CudaBackendOptions o;
  o.tensor_parallel_size = tp;
  o.num_blocks = num_blocks;
  o.block_size = block_size;
  o.faults = faults;
  o.max_devices = 1;  // TP on one GPU (the in-device reduction), whatever the machine has
  return o;
}

std::unique_ptr<Backend> cpu_float(const MlaWeights& w, int tp, int num_blocks, int block_size, FaultSet faults = {}) {
  CpuBackendOptions o;
  o.tensor_parallel_size = tp;
  o.num_blocks = num_blocks;
  o.block_size = block_size;
  o.faults = faults;
  o.bf16_cache = true;  // as an engine's cache; the compute stays fp32
  return make_cpu_backend(w, o, CpuPrecision::kFloat);
}

// Checks the logits of `got` within the bf16 class of `ref` (both [rows, vocab]); a failure prints the summary.
void check_within_bf16(const std::string& what, const std::vector<double>& got, const std::vector<double>& ref,
                       int vocab) {
  const long rows = vocab > 0 ? static_cast<long>(ref.size()) / vocab : 0;
  const LogitsTolerance tol = logits_tolerance(PrecisionClass::kBf16);
  const LogitsComparison c = compare_logits(got, ref, rows, vocab, tol);
  std::printf("  %s: %s\n", what.c_str(), c.summary(tol, {}).c_str());
  INFO(what << ": " << c.summary(tol, {}));
  CHECK(rows > 0);  // logits to compare
  CHECK(c.pass);
}

// Decodes (q = 1, 2 on the decode path), fresh prefills, a fresh 3-token prompt on the decode path
// (T = 4), an extend with context on the prefill path; the last 2 tokens of every row sampled.
std::vector<double> mixed_script(Backend& backend, bool force_prefill = false, int vocab = 512) {
  test::StepDriver d(test::mla_routing(), 64);
  const int a = d.add_request(test::seeded_sequence(1, 12, vocab), 6);
  const int b = d.add_request(test::seeded_sequence(2, 14, vocab), 9);
  const int c = d.add_request(test::seeded_sequence(3, 13, vocab), 11);
  const int f = d.add_request(test::seeded_sequence(4, 6, vocab), 3);
  const std::vector<std::vector<std::pair<int, int>>> script{
      {{a, 6}, {b, 9}},
      {{a, 1}, {b, 2}, {c, 5}},
      {{c, 6}, {a, 1}, {b, 1}, {f, 3}},
      {{a, 2}, {c, 1}, {b, 1}, {f, 1}},
  };
  std::vector<double> out;
  for (const auto& batch : script)
    for (const std::vector<double>& r : d.run(backend, batch, force_prefill, 2)) out.insert(out.end(), r.begin(), r.end());
  return out;
}

TEST_CASE("cuda_backend_options_and_names", "[gpu][forward-only]") {
  const MlaWeights w = seeded_weights(test::tiny_config(8));
  CudaBackendOptions o = cuda_options(2, 64, 4, {Fault::kDecodeScale1OverSqrt576});
  CHECK(cuda_backend_support_error(w.config, o) == "");
  CudaBackend b(w, o);
  CHECK(b.name() == "cuda tp=2 faults=decode_scale_1_over_sqrt_576");
  CHECK(b.communicator_mode() == "in-device");
  CHECK(b.rank_devices() == std::vector<int>({0, 0}));
  CudaBackendOptions bad = o;
  bad.faults = {Fault::kChunkLseMergeWrong};
  CHECK_THAT(cuda_backend_support_error(w.config, bad), Catch::Matchers::Contains("chunk_lse_merge_wrong"));
  bad = o;
  bad.tensor_parallel_size = 3;
  CHECK(cuda_backend_support_error(w.config, bad) != "");
  ModelConfig geometry = w.config;
  geometry.kv_lora_rank = 256;
  CHECK(cuda_backend_support_error(geometry, o) != "");
}

TEST_CASE("cuda_backend_mixed_steps_tp_1_2_4_8_vs_cpu", "[gpu][forward-only]") {
  const MlaWeights w = seeded_weights(test::tiny_config(8));
  std::unique_ptr<Backend> cpu = cpu_float(w, 1, 64, 4);
  const std::vector<double> ref = mixed_script(*cpu);
  for (int tp : {1, 2, 4, 8}) {
    CudaBackend cuda(w, cuda_options(tp, 64, 4));
    check_within_bf16("tp " + std::to_string(tp), mixed_script(cuda), ref, w.config.vocab_size);
  }
  // Every token through the prefill form (golden mode) agrees too.
  CudaBackend forced(w, cuda_options(2, 64, 4));
  check_within_bf16("forced prefill form, tp 2", mixed_script(forced, true), ref, w.config.vocab_size);
}

TEST_CASE("cuda_backend_chunked_context_vs_cpu", "[gpu][forward-only]") {
  // W = 16 tokens: two rows with context share it, MCC = 8, contexts of 10 and 11 take 2 chunks.
  const MlaWeights w = seeded_weights(test::tiny_config(4));
  auto run = [&](Backend& backend, const RoutingConfig& routing, int* num_chunks) {
    test::StepDriver d(routing, 64);
    d.add_request(test::seeded_sequence(4, 18, 512), 18);
    d.add_request(test::seeded_sequence(5, 19, 512), 19);
    std::vector<double> out;
    for (const auto& r : d.run(backend, {{0, 10}, {1, 11}}, false, 2)) out.insert(out.end(), r.begin(), r.end());
    test::StepDriver::Step s;
    for (const auto& r : d.run(backend, {{0, 8}, {1, 8}}, false, 8, &s)) out.insert(out.end(), r.begin(), r.end());
    *num_chunks = s.md.prefill ? s.md.prefill->chunked_context.num_chunks : -1;
    return out;
  };
  int chunks_cpu = 0, chunks_cuda = 0;
  std::unique_ptr<Backend> cpu = cpu_float(w, 1, 64, 4);
  const std::vector<double> ref = run(*cpu, test::mla_routing(), &chunks_cpu);
  CudaBackend cuda(w, cuda_options(1, 64, 4));
  const std::vector<double> got = run(cuda, test::mla_routing(4, 4, /*max_model_len=*/2, /*max_num_seqs=*/1), &chunks_cuda);
  REQUIRE(chunks_cuda == 2);  // context chunks of the CUDA run
  REQUIRE(chunks_cpu == 1);
  check_within_bf16("2 chunks vs 1", got, ref, w.config.vocab_size);
}

TEST_CASE("cuda_backend_q_lora_vs_cpu", "[gpu][forward-only]") {
  ModelConfig c = test::tiny_config(8);
  c.q_lora_rank = 64;
  const MlaWeights w = seeded_weights(c);
  std::unique_ptr<Backend> cpu = cpu_float(w, 1, 64, 4);
  CudaBackend cuda(w, cuda_options(2, 64, 4));
  check_within_bf16("q_lora_rank 64, tp 2", mixed_script(cuda), mixed_script(*cpu), c.vocab_size);
}

TEST_CASE("cuda_backend_faults_vs_cpu", "[gpu][forward-only]") {
  const MlaWeights w = seeded_weights(test::tiny_config(4));
  std::unique_ptr<Backend> clean = cpu_float(w, 1, 64, 4);
  const std::vector<double> clean_ref = mixed_script(*clean);
  for (Fault f : all_faults()) {
    if (!cuda_backend_supports_fault(f)) continue;
    std::unique_ptr<Backend> cpu = cpu_float(w, 1, 64, 4, {f});
    const std::vector<double> ref = mixed_script(*cpu);
    CudaBackend cuda(w, cuda_options(1, 64, 4, {f}));
    check_within_bf16(std::string("fault ") + to_string(f), mixed_script(cuda), ref, w.config.vocab_size);
    const LogitsTolerance tol = logits_tolerance(PrecisionClass::kBf16);
    const long rows = static_cast<long>(ref.size()) / w.config.vocab_size;
    if (compare_logits(ref, clean_ref, rows, w.config.vocab_size, tol).pass)
      std::printf("  note: fault %s does not change this script's logits beyond the bf16 class\n", to_string(f));
  }
}

// Replays a scenario text with the CUDA backend at `tp` (one device) and with the CPU float
// backend at TP 1; the logits within the bf16 class.
void check_replay_vs_cpu(const std::string& text, const std::vector<int>& tps) {
  Result<Scenario> loaded = load_scenario_text(text, "cuda_tp.yaml");
  INFO((loaded ? std::string() : loaded.error().format()));
  REQUIRE(loaded);
  const Scenario& s = loaded.value();
  const MlaWeights w = seeded_weights(s.model);
  ReplayOptions cpu;
  cpu.weights = &w;
  cpu.tensor_parallel_size = 1;
  cpu.precision = CpuPrecision::kFloat;
  const RunRecord ref = replay(s, cpu);
  const std::vector<double> ref_values(ref.logits.values.begin(), ref.logits.values.end());
  for (int tp : tps) {
    ReplayOptions o;
    o.weights = &w;
    o.make_backend = [tp](const MlaWeights& weights, const Scenario& sc, const FaultSet& faults) {
      return make_cuda_backend(weights, cuda_options(tp, sc.scheduler.num_gpu_blocks, sc.scheduler.block_size, faults));
    };
    const RunRecord got = replay(s, o);
    const std::vector<double> values(got.logits.values.begin(), got.logits.values.end());
    check_within_bf16(s.model.preset + " tp " + std::to_string(tp), values, ref_values, s.model.vocab_size);
  }
}

TEST_CASE("cuda_backend_v2_lite_attn_tp_1_2_8_one_gpu", "[gpu][forward-only]") {
  // 16 heads (2 per rank at TP 8), one layer, a small vocabulary. a prefills in two chunks (the
  // second with context on the prefill path) then decodes; b and a one-token prompt c arrive
  // while a decodes.
  const std::string text =
      "version: 1\n"
      "model: {preset: v2-lite-attn, num_hidden_layers: 1, vocab_size: 1024}\n"
      "scheduler: {max_num_batched_tokens: 64, max_num_seqs: 4, max_model_len: 512, num_gpu_blocks: 64}\n"
      "engine: {profile: vllm-current, attention_backend: flashinfer-mla}\n"
      "requests:\n"
      "  - {id: a, prompt_len: 100, max_tokens: 4}\n"
      "  - {id: b, prompt_len: 20, max_tokens: 3, arrival_step: 2}\n"
      "  - {id: c, prompt: [17], max_tokens: 2, arrival_step: 3}\n";
  check_replay_vs_cpu(text, {1, 2, 8});
}

TEST_CASE("cuda_backend_fp8_cache: the fp8 golden holds it, and fails the backend that ignores the fp8 cache",
          "[gpu][forward-only]") {
  const char* env_root = std::getenv("MLASIM_ROOT");
  const std::string root = env_root ? env_root : std::filesystem::exists("scenarios/seed") ? "." : MLASIM_SOURCE_DIR;
  Result<Scenario> loaded = load_scenario_file(root + "/scenarios/model/fp8_cache_flashmla.yaml");
  REQUIRE(loaded);
  const Scenario& s = loaded.value();
  const std::string dir = root + "/golden/" + s.name;
  Result<LogitsFiles> golden = read_logits_files(dir);
  REQUIRE(golden);
  for (const bool fp8 : {true, false}) {
    ReplayOptions o;
    o.make_backend = [fp8](const MlaWeights& weights, const Scenario& sc, const FaultSet& faults) {
      CudaBackendOptions co = cuda_options(sc.parallel.tensor_parallel_size, sc.scheduler.num_gpu_blocks,
                                           sc.scheduler.block_size, faults);
      if (fp8) co.cache_quant = scenario_kv_cache_quant(sc).quant;  // else bf16 rows: the fp8 cache ignored
      return make_cuda_backend(weights, co);
    };
    const RunRecord record = replay(s, o);
    CHECK(record.precision == (fp8 ? PrecisionClass::kFp8Bf16 : PrecisionClass::kBf16));
    const LogitsCheck lc =
        check_logits_against(golden.value(), record.logits, record.names, logits_tolerance(PrecisionClass::kFp8Bf16), dir);
    INFO((fp8 ? "fp8 cache: " : "bf16 cache: ") << lc.message);
    CHECK(lc.pass == fp8);
  }
}

TEST_CASE("cuda_backend_scenarios_vs_golden", "[gpu][forward-only]") {
  namespace fs = std::filesystem;
  // The repository root: $MLASIM_ROOT, else the working directory when it holds scenarios/ (the
  // binaries are built here and run from a copy of the tree elsewhere), else the build's source.
  const char* env_root = std::getenv("MLASIM_ROOT");
  const std::string root = env_root ? env_root : fs::exists("scenarios/seed") ? "." : MLASIM_SOURCE_DIR;
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(root + "/scenarios"))
    if (e.is_regular_file() && e.path().extension() == ".yaml") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  REQUIRE(!files.empty());
  for (const std::string& path : files) {
    INFO(path);
    Result<Scenario> loaded = load_scenario_file(path);
    INFO((loaded ? std::string() : loaded.error().format()));
    CHECK(loaded);
    if (!loaded) continue;
    const Scenario& s = loaded.value();
#if defined(MLASIM_CUDA_EMULATION)
    // The SIMT emulator runs a kernel at ~1e-4 of a GPU's speed: the long-context and 128-head
    // scenarios (mlasim check runs them on the CPU) are for real devices, and for the emulator
    // only when MLASIM_EMU_ALL_SCENARIOS is set (ctest: emu.gpu.cuda_backend_scenarios_vs_golden.all,
    // label emu-long).
    if ((s.scheduler.max_model_len > 8192 || s.model.num_attention_heads > 16) && !std::getenv("MLASIM_EMU_ALL_SCENARIOS")) {
      std::printf("  skip %s: too large for the SIMT emulator (checked on a GPU and on the CPU)\n", s.name.c_str());
      continue;
    }
#endif
    if (std::string sparse = sparse_past_index_topk(s); !sparse.empty()) {
      // The CUDA backend computes dense MLA (no DSA indexer yet): the CLI refuses these scenarios.
      std::printf("  skip %s: %s\n", s.name.c_str(), sparse.c_str());
      continue;
    }
    const std::string dir = root + "/golden/" + s.name;
    Result<LogitsFiles> golden = read_logits_files(dir);
    INFO((golden ? std::string() : golden.error().format()));
    CHECK(golden);
    if (!golden) continue;
    const std::string why = cuda_backend_support_error(
        s.model, cuda_options(s.parallel.tensor_parallel_size, s.scheduler.num_gpu_blocks, s.scheduler.block_size));
    CHECK(why == "");  // the scenario runs on CUDA
    if (!why.empty()) continue;
    ReplayOptions o;
    o.make_backend = [](const MlaWeights& weights, const Scenario& sc, const FaultSet& faults) {
      CudaBackendOptions co = cuda_options(sc.parallel.tensor_parallel_size, sc.scheduler.num_gpu_blocks,
                                           sc.scheduler.block_size, faults);
      co.max_devices = 0;  // as the CLI: every visible device
      co.cache_quant = scenario_kv_cache_quant(sc).quant;  // as the CLI: an fp8 cache stored as fp8
      return make_cuda_backend(weights, co);
    };
    const RunRecord record = replay(s, o);
    const LogitsCheck lc =
        check_logits_against(golden.value(), record.logits, record.names,
                             logits_tolerance(record.precision.value_or(PrecisionClass::kBf16)), dir);
    std::printf("  %s %s: %s\n", lc.pass ? "ok  " : "FAIL", s.name.c_str(), lc.message.c_str());
    INFO(s.name << ": " << lc.message);
    CHECK(lc.pass);
  }
}

}  // namespace
