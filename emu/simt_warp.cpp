// Warp collectives of the SIMT emulator (see simt.h): __syncwarp, shuffles, ldmatrix and mma.sync,
// each computed by the last lane to arrive.
#include "emu/simt_worker.h"


namespace mlasim::emu {
namespace detail {

const char* op_name(Op op) {
  switch (op) {
    case Op::kShfl: return "__shfl_*_sync";
    case Op::kLdmatrix: return "ldmatrix.x4";
    case Op::kLdmatrixTrans: return "ldmatrix.x4.trans";
    case Op::kMma: return "mma.sync.m16n8k16";
    case Op::kSyncwarp: return "__syncwarp";
    default: return "?";
  }
}

void check_full_mask(unsigned mask) {
  if (mask != 0xffffffffu) fail("partial warp masks are not emulated (every collective here uses 0xffffffff)");
}

}  // namespace detail

using namespace detail;

void syncwarp(unsigned mask) {
  check_full_mask(mask);
  warp_collective(Op::kSyncwarp, &mask, sizeof mask, nullptr, 0, [](WarpState&) {});
}

std::uint64_t shfl(unsigned mask, std::uint64_t bits, Shfl kind, int arg, int width) {
  check_full_mask(mask);
  if (width < 1 || width > 32 || (width & (width - 1)) != 0) fail("shuffle width must be a power of two up to 32");
  struct In {
    std::uint64_t bits;
    int kind, arg, width;
  } in{bits, static_cast<int>(kind), arg, width};
  std::uint64_t out = 0;
  warp_collective(Op::kShfl, &in, sizeof in, &out, sizeof out, [](WarpState& ws) {
    for (int l = 0; l < 32; ++l) {
      In x;
      std::memcpy(&x, ws.in[l], sizeof x);
      const int w = x.width, seg = l & ~(w - 1);
      int src = l;
      switch (static_cast<Shfl>(x.kind)) {
        case Shfl::kIdx: src = seg + (x.arg & (w - 1)); break;
        case Shfl::kUp: src = l - seg >= x.arg ? l - x.arg : l; break;
        case Shfl::kDown: src = l - seg + x.arg < w ? l + x.arg : l; break;
        case Shfl::kXor: src = l ^ x.arg; if (src < 0 || src > 31 || src >= seg + w) src = l; break;
      }
      In y;
      std::memcpy(&y, ws.in[src], sizeof y);
      std::memcpy(ws.out[l], &y.bits, sizeof y.bits);
    }
  });
  return out;
}

void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t addr, bool trans) {
  Worker& w = cur_worker("ldmatrix");
  warp_collective(trans ? Op::kLdmatrixTrans : Op::kLdmatrix, &addr, sizeof addr, r, sizeof r,
                  [&w, trans](WarpState& ws) {
                    // rows[j][i][c]: matrix j, row i (given by lane 8j + i), element c.
                    std::uint16_t rows[4][8][8];
                    const int warp = w.cur->linear / 32;
                    for (int l = 0; l < 32; ++l) {
                      std::uint32_t a;
                      std::memcpy(&a, ws.in[l], sizeof a);
                      std::memcpy(rows[l / 8][l % 8], smem_operand(w, a, "ldmatrix row address"), 16);
                      Chunk& ch = w.chunks[a / 16];
                      if (ch.in_flight > 0 || (ch.write_epoch == w.epoch && ch.writer_warp != warp)) {
                        char msg[220];
                        std::snprintf(msg, sizeof msg,
                                      "racecheck: ldmatrix reads shared byte %u %s (read after write)", a,
                                      ch.in_flight > 0 ? "while a cp.async into it is still in flight"
                                                       : "that another warp's cp.async filled after the last "
                                                         "__syncthreads");
                        fail(msg);
                      }
                      ch.reader_warp = ch.read_epoch == w.epoch && ch.reader_warp != warp ? -2 : warp;
                      ch.read_epoch = w.epoch;
                    }
                    for (int l = 0; l < 32; ++l) {
                      const int g = l / 4, c = 2 * (l % 4);
                      std::uint32_t v[4];
                      for (int j = 0; j < 4; ++j) {
                        const std::uint16_t lo = trans ? rows[j][c][g] : rows[j][g][c];
                        const std::uint16_t hi = trans ? rows[j][c + 1][g] : rows[j][g][c + 1];
                        v[j] = static_cast<std::uint32_t>(lo) | (static_cast<std::uint32_t>(hi) << 16);
                      }
                      std::memcpy(ws.out[l], v, sizeof v);
                    }
                  });
}

void mma_m16n8k16_bf16(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
  struct In {
    std::uint32_t a[4], b[2];
    float c[4];
  } in{{a[0], a[1], a[2], a[3]}, {b0, b1}, {d[0], d[1], d[2], d[3]}};
  warp_collective(Op::kMma, &in, sizeof in, d, sizeof d, [](WarpState& ws) {
    auto bf = [](std::uint32_t reg, int half) {
      const std::uint32_t bits = (half ? reg >> 16 : reg & 0xffffu) << 16;
      float f;
      std::memcpy(&f, &bits, sizeof f);
      return f;
    };
    // PTX ISA, "Matrix fragments for mma.m16n8k16" (.bf16 A/B, .f32 C/D); g = lane / 4, t = lane % 4.
    float A[16][16], B[16][8], C[16][8];
    for (int l = 0; l < 32; ++l) {
      In x;
      std::memcpy(&x, ws.in[l], sizeof x);
      const int g = l / 4, t = l % 4;
      for (int e = 0; e < 2; ++e) {
        A[g][2 * t + e] = bf(x.a[0], e);
        A[g + 8][2 * t + e] = bf(x.a[1], e);
        A[g][2 * t + 8 + e] = bf(x.a[2], e);
        A[g + 8][2 * t + 8 + e] = bf(x.a[3], e);
        B[2 * t + e][g] = bf(x.b[0], e);
        B[2 * t + 8 + e][g] = bf(x.b[1], e);
        C[g][2 * t + e] = x.c[e];
        C[g + 8][2 * t + e] = x.c[2 + e];
      }
    }
    // Products of two bf16 values are exact in fp32; they are accumulated in fp32, in k order.
    float D[16][8];
    for (int i = 0; i < 16; ++i) {
      for (int j = 0; j < 8; ++j) D[i][j] = C[i][j];
      for (int k = 0; k < 16; ++k) {
        const float a_ik = A[i][k];
        for (int j = 0; j < 8; ++j) D[i][j] += a_ik * B[k][j];
      }
    }
    for (int l = 0; l < 32; ++l) {
      const int g = l / 4, t = l % 4;
      const float v[4] = {D[g][2 * t], D[g][2 * t + 1], D[g + 8][2 * t], D[g + 8][2 * t + 1]};
      std::memcpy(ws.out[l], v, sizeof v);
    }
  });
}

}  // namespace mlasim::emu
