// Seeded token ids (config/seeded_tokens.h): FastMod64 against the `%` operator, and the prompt and
// output loops against the plain formula each id is defined by,
// 2 + splitmix64(seed ^ splitmix64(stream ^ splitmix64(index))) % (vocab - 2), with a redraw
// (splitmix64 of the state) for an avoided id. The formula is written out here with `%`, so the
// fast path is checked against an independent computation, not against itself.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "config/request_tokens.h"
#include "config/seeded_tokens.h"

using namespace mlasim;

namespace {

int formula(std::uint64_t seed, std::uint64_t stream, std::uint64_t index, int vocab, const std::vector<int>& avoid = {},
            int avoid_also = -1) {
  const std::uint64_t range = vocab > 2 ? static_cast<std::uint64_t>(vocab - 2) : 1;
  std::uint64_t state = splitmix64(seed ^ splitmix64(stream ^ splitmix64(index)));
  for (int attempt = 0; attempt < 64; ++attempt) {
    const int token = 2 + static_cast<int>(state % range);
    if (token != avoid_also && std::find(avoid.begin(), avoid.end(), token) == avoid.end()) return token;
    state = splitmix64(state);
  }
  return 2;
}

}  // namespace

TEST_CASE("FastMod64 equals the % operator", "[config]") {
  const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  const std::vector<std::uint64_t> divisors{1,          2,          3,           7,           126,
                                            127,        510,        32766,       129278,      151550,
                                            2147483645, 4294967295, 4294967311u, (1ULL << 63) - 25, max};
  std::uint64_t state = 20261205;
  long long checked = 0;
  for (const std::uint64_t d : divisors) {
    const FastMod64 mod(d);
    std::vector<std::uint64_t> xs{0, 1, d - 1, d, max, max - 1, max / d * d, max / d * d - 1};
    if (d < max) xs.push_back(d + 1);
    for (int i = 0; i < 20000; ++i) {
      state = splitmix64(state);
      xs.push_back(state);
      xs.push_back(state >> (i % 64));  // small values too
    }
    for (const std::uint64_t x : xs) {
      if (mod(x) != x % d) FAIL("x = " << x << ", d = " << d << ": " << mod(x) << " != " << x % d);
      ++checked;
    }
  }
  CHECK(checked == 15 * (2 * 20000 + 8) + 14);  // every divisor but max also checks d + 1
}

TEST_CASE("prompt and output ids follow their formula", "[config]") {
  for (const int vocab : {3, 4, 512, 129280, 151552}) {
    std::vector<int> prompt;
    generate_prompt(prompt, 300, 7, 99, {}, 16, vocab);
    REQUIRE(prompt.size() == 300);
    for (int j = 0; j < 300; ++j) CHECK(prompt[static_cast<std::size_t>(j)] == formula(7, 99, static_cast<std::uint64_t>(j), vocab));
    // Prompt blocks named by hash ids: each block's tokens come from its own stream.
    const std::vector<std::uint64_t> hash_ids{5, 5, 11};
    std::vector<int> blocks;
    generate_prompt(blocks, 40, 7, 99, hash_ids, 16, vocab);
    REQUIRE(blocks.size() == 40);
    for (int j = 0; j < 40; ++j)
      CHECK(blocks[static_cast<std::size_t>(j)] ==
            formula(7, prompt_block_stream(hash_ids[static_cast<std::size_t>(j / 16)]), static_cast<std::uint64_t>(j % 16), vocab));
    CHECK(std::equal(blocks.begin(), blocks.begin() + 16, blocks.begin() + 16));  // equal ids, equal tokens
  }
  // Outputs avoid the stop ids and EOS by redrawing; vocabularies alternate, so the per-thread
  // range is rebuilt between calls.
  const std::vector<int> stops{2, 3, 4};
  int redrawn = 0;
  for (int i = 0; i < 2000; ++i) {
    const int vocab = i % 2 == 0 ? 8 : 129280;
    const int got = seeded_token(3, 17, static_cast<std::uint64_t>(i), vocab, stops, 5);
    CHECK(got == formula(3, 17, static_cast<std::uint64_t>(i), vocab, stops, 5));
    CHECK((got > 5 && got < vocab));
    redrawn += formula(3, 17, static_cast<std::uint64_t>(i), vocab) != got ? 1 : 0;
  }
  CHECK(redrawn > 300);  // vocabulary 8 draws from [2, 8): half its first draws are avoided
}
