// Seeded prompts with their ids drawn on demand (Scheduler::set_prompt_ids_on_demand): the same
// schedule, prefix hits and block tables as with every prompt id drawn, on traces whose prompts
// share hash ids (hash blocks larger, smaller and unaligned against the KV blocks, MTP lookahead
// hashes); and the ids written at the end equal the drawn ones.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "config/model_config.h"
#include "sim/block_hash.h"
#include "sim/scheduler.h"
#include "sim/teacher_forcing.h"

using namespace mlasim;

namespace {

struct Trace {
  SchedulerConfig config;
  std::vector<RequestSpec> specs;
};

Trace random_trace(std::uint64_t seed) {
  std::uint64_t state = seed * 0x9E3779B97F4A7C15ULL + 1;
  auto next = [&state](int n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((state >> 33) % static_cast<std::uint64_t>(n));
  };
  Trace t;
  SchedulerConfig& c = t.config;
  c.max_num_batched_tokens = 256;
  c.max_num_seqs = 8;
  c.max_model_len = 1024;
  c.block_size = 16;
  c.num_gpu_blocks = 160;
  c.enable_prefix_caching = true;
  if (next(3) == 0) {  // MTP: block hashes cover the token after the block
    c.num_speculative_tokens = 1;
    c.speculative_method = SpeculativeMethod::kMtp;
  }
  const int hash_block = std::vector<int>{8, 16, 24, 32, 64}[static_cast<std::size_t>(next(5))];
  const int n = 6 + next(8);
  for (int i = 0; i < n; ++i) {
    RequestSpec s;
    s.id = "r" + std::to_string(i);
    s.seeded_prompt_len = 1 + next(200);
    s.max_tokens = 1 + next(24);
    s.ignore_eos = true;
    if (next(4) != 0) {  // hash ids from a small set: shared leading blocks
      s.prompt_hash_block_size = hash_block;
      const int blocks = (s.seeded_prompt_len + hash_block - 1) / hash_block;
      for (int b = 0; b < blocks; ++b) s.prompt_hash_ids.push_back(b < 3 ? static_cast<std::uint64_t>(next(2)) : 100 + static_cast<std::uint64_t>(next(3)));
    }
    t.specs.push_back(s);
  }
  return t;
}

}  // namespace

TEST_CASE("scheduler: prompt ids on demand schedule and hit the prefix cache as drawn ids do", "[scheduler]") {
  ModelConfig model;
  model.vocab_size = 64;  // a small vocabulary: equal ids are frequent, so hashes must not rely on chance
  model.seed = 11;
  int traces = 0, hit_tokens = 0, steps = 0;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    const Trace t = random_trace(seed);
    Scheduler drawn(t.config), on_demand(t.config);
    on_demand.set_prompt_ids_on_demand(true);
    for (std::size_t i = 0; i < t.specs.size(); ++i) {
      drawn.add_request(make_request(t.specs[i], model, static_cast<ReqId>(i)));
      on_demand.add_request(make_request(t.specs[i], model, static_cast<ReqId>(i)));
    }
    std::vector<Request> finished_drawn, finished_on_demand;
    for (int step = 0; drawn.has_unfinished_requests() && step < 500; ++step) {
      const SchedulerOutput a = drawn.schedule(), b = on_demand.schedule();
      REQUIRE(a.num_scheduled_tokens == b.num_scheduled_tokens);
      REQUIRE(a.scheduled_new_reqs.size() == b.scheduled_new_reqs.size());
      for (std::size_t k = 0; k < a.scheduled_new_reqs.size(); ++k) {
        REQUIRE(a.scheduled_new_reqs[k].num_computed_tokens == b.scheduled_new_reqs[k].num_computed_tokens);
        REQUIRE(a.scheduled_new_reqs[k].block_ids == b.scheduled_new_reqs[k].block_ids);
        REQUIRE(a.scheduled_new_reqs[k].prompt_token_ids.size() == b.scheduled_new_reqs[k].prompt_token_ids.size());
        hit_tokens += a.scheduled_new_reqs[k].num_computed_tokens;
      }
      REQUIRE(a.scheduled_cached_reqs.new_block_ids == b.scheduled_cached_reqs.new_block_ids);
      REQUIRE(a.scheduled_cached_reqs.num_computed_tokens == b.scheduled_cached_reqs.num_computed_tokens);
      for (Request& r : drawn.update_from_output(a, teacher_force(drawn, a))) finished_drawn.push_back(std::move(r));
      for (Request& r : on_demand.update_from_output(b, teacher_force(on_demand, b))) finished_on_demand.push_back(std::move(r));
      ++steps;
    }
    REQUIRE_FALSE(drawn.has_unfinished_requests());
    REQUIRE_FALSE(on_demand.has_unfinished_requests());
    REQUIRE(finished_drawn.size() == finished_on_demand.size());
    for (std::size_t k = 0; k < finished_drawn.size(); ++k) {
      REQUIRE(finished_on_demand[k].unwritten_prompt.has_value());
      write_prompt_ids(finished_on_demand[k]);
      REQUIRE(finished_on_demand[k].all_token_ids == finished_drawn[k].all_token_ids);
    }
    ++traces;
  }
  CHECK(traces == 60);
  CHECK(steps > 600);
  CHECK(hit_tokens > 1000);  // the traces share prefixes: the hashes are exercised, not bypassed
}

TEST_CASE("block hashes: an unwritten prompt's block hashes its stream where it lies in one, its ids elsewhere",
          "[scheduler]") {
  ModelConfig model;
  model.vocab_size = 1000;
  model.seed = 3;
  RequestSpec s;
  s.id = "a";
  s.seeded_prompt_len = 40;  // hash blocks of 24: blocks [0,16) in hash block 0, [16,32) spans 0 and 1
  s.prompt_hash_ids = {7, 8};
  s.prompt_hash_block_size = 24;
  Request r = make_request(s, model, 0);
  reserve_prompt(r);
  REQUIRE(r.unwritten_prompt.has_value());
  REQUIRE(r.num_tokens() == 40);
  std::uint64_t h = 0;
  CHECK(seeded_block_hash(r, 0, 16, kNoneBlockHash, h));
  CHECK_FALSE(seeded_block_hash(r, 16, 16, h, h));  // spans two hash ids: hashed by its ids
  CHECK_FALSE(seeded_block_hash(r, 32, 16, h, h));  // past the prompt
  update_block_hashes(r, 16);
  Request drawn = make_request(s, model, 0);
  materialize_prompt(drawn);
  update_block_hashes(drawn, 16);
  REQUIRE(r.block_hashes.size() == 2);
  CHECK(r.block_hashes[0] != drawn.block_hashes[0]);  // another domain than the ids' hash
  std::vector<int> ids(40);
  token_ids_at(r, 0, 40, ids.data());
  CHECK(ids == drawn.all_token_ids);
}
