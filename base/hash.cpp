// FNV-1a over bytes.
#include "base/hash.h"

namespace mlasim {

std::uint64_t stable_hash(std::string_view s, std::uint64_t h) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace mlasim
