// The split-KV scheduling pass of the MLA decode (layout in mla_decode.h), one function shared by the
// device metadata kernel and the host twin so the two cannot drift apart.
#pragma once

#include "attention/cuda/mla_decode.h"

#if defined(__CUDACC__)
#define MLASIM_HD __host__ __device__
#else
#define MLASIM_HD
#endif

namespace mlasim {

// Greedy fill: every part receives `payload` work units; a request costs ceil(len / 64) + 5 units,
// a chunk of it (when it does not fit in what is left of a part) costs its tiles + 5. payload =
// ceil(total / parts) + 5 guarantees every request is placed by the last part, and a fresh part
// always takes at least one tile or finishes a request (payload − 5 ≥ 1).
MLASIM_HD inline void mla_decode_schedule(const int* cache_seqlens, int batch, int num_sm_parts, int* metadata,
                                          int* num_splits) {
  constexpr int T = kMlaDecodeTileTokens, OVH = kMlaDecodeSplitOverhead;
  long long total = 0;
  for (int i = 0; i < batch; ++i) {
    const int len = cache_seqlens[i] > 0 ? cache_seqlens[i] : 0;
    total += (len + T - 1) / T + OVH;
  }
  const long long payload = (total + num_sm_parts - 1) / num_sm_parts + OVH;
  int req = 0, tile = 0, split = 0, cum = 0;
  num_splits[0] = 0;
  for (int p = 0; p < num_sm_parts; ++p) {
    int* m = metadata + p * kMlaDecodeMetadataInts;
    m[0] = req, m[1] = tile * T, m[4] = split;
    m[5] = m[6] = m[7] = 0;
    long long remain = payload;
    while (req < batch) {
      const int len = cache_seqlens[req] > 0 ? cache_seqlens[req] : 0;
      const int left = (len + T - 1) / T - tile;
      if (remain >= left + OVH) {  // the rest of this request fits: finish it here
        remain -= left + OVH;
        cum += split + 1;
        num_splits[req + 1] = cum;
        ++req, tile = 0, split = 0;
      } else {  // take what fits (if anything) and continue the request in the next part
        if (remain - OVH > 0) tile += static_cast<int>(remain - OVH), ++split;
        break;
      }
    }
    if (tile > 0) {  // ends inside request `req`
      m[2] = req, m[3] = tile * T;
    } else {  // ends after the last finished request (begin > end when nothing was taken)
      m[2] = req - 1;
      m[3] = req > 0 ? (cache_seqlens[req - 1] > 0 ? cache_seqlens[req - 1] : 0) : 0;
    }
  }
}

}  // namespace mlasim
