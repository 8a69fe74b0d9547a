// The scheduler rules of vLLM 0.33.0 that earlier releases lack (docs/spec/scheduler.md §9), each
// with exact values under the 0.33 rules and under vLLM 0.11's (the older profiles').
#include <catch2/catch.hpp>

#include "scheduler_test_util.h"
#include "sim/scheduler_rules.h"
#include "sim/vllm_cannot_run.h"

using namespace mlasim;
using namespace mlasim::test;

namespace {

SchedulerConfig with_rules(SchedulerConfig c, EngineProfile profile) {
  c.rules = scheduler_rules_for(profile);
  return c;
}

}  // namespace

TEST_CASE("0.33: long_prefill_token_threshold is not applied to a lone request", "[scheduler]") {
  SchedulerConfig c = make_config(64, 100);
  c.max_num_seqs = 8;
  c.long_prefill_token_threshold = 8;
  SECTION("vLLM 0.33: budget 64, threshold 8, one 20-token prompt runs in one step") {
    Scheduler s(with_rules(c, EngineProfile::kVllm033));
    s.add_request(make_req(0, 20, 2));
    CHECK(run_step(s).out.num_scheduled_tokens == Q{{0, 20}});
  }
  SECTION("vLLM 0.11: 8, 8, 4") {
    Scheduler s(with_rules(c, EngineProfile::kVllm011));
    s.add_request(make_req(0, 20, 2));
    CHECK(run_step(s).out.num_scheduled_tokens == Q{{0, 8}});
    CHECK(run_step(s).out.num_scheduled_tokens == Q{{0, 8}});
    CHECK(run_step(s).out.num_scheduled_tokens == Q{{0, 4}});
  }
  SECTION("two requests (one running, one waiting) are both capped") {
    Scheduler s(with_rules(c, EngineProfile::kVllm033));
    s.add_request(make_req(0, 20, 2));
    s.add_request(make_req(1, 20, 2));
    CHECK(run_step(s).out.num_scheduled_tokens == Q{{0, 8}, {1, 8}});
  }
}

TEST_CASE("0.33: scheduler_reserve_full_isl admits a request only when its whole prompt fits", "[scheduler]") {
  // 10 usable blocks of 16, budget 64, prompts of 100 (a, 1 output) and 60 (b).
  const bool reserve = GENERATE(true, false);
  SchedulerConfig c = make_config(64, 11);
  c.max_num_seqs = 8;
  c.rules.scheduler_reserve_full_isl = reserve;
  Scheduler s(c);
  s.add_request(make_req(0, 100, 1));
  s.add_request(make_req(1, 60, 2));
  CHECK(run_step(s).out.num_scheduled_tokens == Q{{0, 64}});
  StepResult r1 = run_step(s);
  if (reserve) {
    // a holds 7 blocks: 3 free, b's 60 tokens need 4, so b waits although its first 28 would fit.
    CHECK(r1.out.num_scheduled_tokens == Q{{0, 36}});
    REQUIRE(r1.finished.size() == 1);
    CHECK(run_step(s).out.num_scheduled_tokens == Q{{1, 60}});
  } else {
    CHECK(r1.out.num_scheduled_tokens == Q{{0, 36}, {1, 28}});
  }
}

TEST_CASE("0.33: the full-sequence gate counts prefix hits and their evictable blocks", "[scheduler]") {
  // B = 16, 5 usable blocks. a (48 tokens) finishes, its 3 blocks stay cached in the free queue.
  // b shares a's first 32 tokens and has 64: it needs 4 blocks, 2 of them hits sitting in the
  // free queue, so 2 new + 2 evictable = 4 <= 5 free.
  SchedulerConfig c = make_config(256, 6);
  c.enable_prefix_caching = true;
  Scheduler s(c);
  s.add_request(make_req(0, 48, 1, 7));
  CHECK(run_step(s).finished.size() == 1);
  Request b = make_req(1, 64, 1, 7);
  for (int i = 32; i < 64; ++i) b.all_token_ids[static_cast<std::size_t>(i)] = 900 + i;
  s.add_request(b);
  StepResult r = run_step(s);
  CHECK(r.out.num_scheduled_tokens == Q{{1, 32}});
  CHECK(r.out.scheduled_new_reqs[0].num_computed_tokens == 32);
}

TEST_CASE("0.33: one-token admissions are padded to 1 + k with placeholder drafts", "[scheduler]") {
  SchedulerConfig c = make_config(256, 100);
  c.num_speculative_tokens = 2;
  SECTION("a new 1-token prompt behind a scheduled decode gets 3 tokens and 2 placeholders") {
    Scheduler s(c);
    s.add_request(make_req(0, 10, 8));
    run_step(s);  // a's prefill
    s.add_request(make_req(1, 1, 4));
    StepResult r = run_step(s);
    CHECK(r.out.num_scheduled_tokens == Q{{0, 3}, {1, 3}});
    REQUIRE(r.out.scheduled_spec_decode_tokens.size() == 2);
    CHECK(r.out.scheduled_spec_decode_tokens[1].first == 1);
    CHECK(r.out.scheduled_spec_decode_tokens[1].second == std::vector<int>{-1, -1});
    // Placeholders are never accepted: one sampled token, nct back to 1 + 0.
    CHECK(r.model_output.sampled_token_ids[1].size() == 1);
    CHECK(s.request(1)->num_computed_tokens == 1);
    CHECK(s.request(1)->num_output_tokens() == 1);
    CHECK(s.request(1)->num_verify_steps == 0);
  }
  SECTION("a lone 1-token prompt with nothing running is not padded") {
    Scheduler s(c);
    s.add_request(make_req(1, 1, 4));
    StepResult r = run_step(s);
    CHECK(r.out.num_scheduled_tokens == Q{{1, 1}});
    CHECK(r.out.scheduled_spec_decode_tokens.empty());
  }
  SECTION("not when a running request scheduled this step is a prefill chunk") {
    SchedulerConfig small = c;
    small.max_num_batched_tokens = 16;
    small.max_num_seqs = 4;
    Scheduler s(small);
    s.add_request(make_req(0, 20, 4));
    CHECK(run_step(s).out.num_scheduled_tokens == Q{{0, 16}});
    s.add_request(make_req(1, 1, 4));
    CHECK(run_step(s).out.num_scheduled_tokens == Q{{0, 4}, {1, 1}});
  }
  SECTION("vLLM 0.11 schedules the 1 token") {
    Scheduler s(with_rules(c, EngineProfile::kVllm011));
    s.add_request(make_req(0, 10, 8));
    run_step(s);
    s.add_request(make_req(1, 1, 4));
    StepResult r = run_step(s);
    CHECK(r.out.num_scheduled_tokens == Q{{0, 3}, {1, 1}});
    CHECK(r.out.scheduled_spec_decode_tokens.size() == 1);
  }
  SECTION("a padded admission that does not fit the budget waits") {
    SchedulerConfig tight = c;
    tight.max_num_batched_tokens = 5;
    tight.max_num_seqs = 4;
    Scheduler s(tight);
    s.add_request(make_req(0, 5, 8));
    run_step(s);
    s.add_request(make_req(1, 1, 4));
    CHECK(run_step(s).out.num_scheduled_tokens == Q{{0, 3}});  // 2 left < 1 + k
  }
}

TEST_CASE("0.33: a priority request that preempted itself lets the next running request try", "[scheduler]") {
  // B = 4, 3 usable blocks. y (priority 5, 3 tokens) runs alone at step 0; x (priority 0) and z
  // (priority 1), 4 tokens each, join at step 1: running [y, x, z], one block each, none free.
  const bool v033 = GENERATE(true, false);
  SchedulerConfig c = with_rules(make_config(256, 4), v033 ? EngineProfile::kVllm033 : EngineProfile::kVllm011);
  c.block_size = 4;
  c.policy = SchedulingPolicy::kPriority;
  c.max_num_seqs = 4;
  Scheduler s(c);
  Request y = make_req(1, 3, 9);
  y.priority = 5;
  s.add_request(y);
  CHECK(run_step(s).out.num_scheduled_tokens == Q{{1, 3}});
  Request x = make_req(0, 4, 8);
  x.priority = 0;
  Request z = make_req(2, 4, 8);
  z.priority = 1;
  s.add_request(x);
  s.add_request(z);
  CHECK(run_step(s).out.num_scheduled_tokens == Q{{1, 1}, {0, 4}, {2, 4}});
  CHECK(s.num_free_blocks() == 0);
  // Step 2: y needs a 2nd block and is itself the lowest priority: it preempts itself.
  StepResult r2 = run_step(s);
  if (v033) {
    // x then takes y's freed block; z needs one too and preempts itself.
    CHECK(r2.out.num_scheduled_tokens == Q{{0, 1}});
    CHECK(r2.out.preempted_req_ids == std::vector<ReqId>{1, 2});
  } else {  // vLLM 0.11 stops phase A at the self-preemption
    CHECK(r2.out.num_scheduled_tokens.empty());
    CHECK(r2.out.preempted_req_ids == std::vector<ReqId>{1});
  }
}

TEST_CASE("0.33: configurations vLLM rejects", "[scheduler]") {
  SchedulerConfig c = make_config(256, 100, 128);
  c.long_prefill_token_threshold = 129;  // config/scheduler.py ~355
  CHECK(check_scheduler_config(c, 128) ==
        "long_prefill_token_threshold (129) cannot be greater than max_model_len (128)");
  c.long_prefill_token_threshold = 128;
  CHECK(check_scheduler_config(c, 128).empty());
  c.num_speculative_tokens = 3;
  c.long_prefill_token_threshold = 3;  // vLLM accepts it; its scheduler fails only on a cut padded admission
  CHECK(check_scheduler_config(c, 128).empty());
  c.max_num_seqs = 2;
  c.max_num_batched_tokens = 3;  // config/vllm.py ~2371: must exceed the lookahead
  CHECK(check_scheduler_config(c, 128).rfind("max_num_batched_tokens (3) must exceed", 0) == 0);
  // n-gram reserves no lookahead, so vLLM accepts budget 3 with k = 3 (a padded one-token
  // admission of 4 tokens then waits: tests/cli/test_vllm_cannot_run.sh).
  c.speculative_method = SpeculativeMethod::kNgram;
  CHECK(check_scheduler_config(c, 128).empty());
}

TEST_CASE("vLLM 0.8: a running request may fill max_model_len", "[scheduler]") {
  // max_model_len 16, prompt 14, k = 2 n-gram drafts: 3 tokens to schedule at nct 14. vLLM 0.8.5
  // caps them at max_model_len - nct = 2 (scheduler.py:188-191); later releases at
  // max_model_len - 1 - nct = 1.
  const bool v08 = GENERATE(true, false);
  SchedulerConfig c =
      with_rules(make_config(64, 16, 16), v08 ? EngineProfile::kVllm2025Early : EngineProfile::kVllm011);
  c.num_speculative_tokens = 2;
  c.speculative_method = SpeculativeMethod::kNgram;
  Scheduler s(c);
  s.add_request(make_req(0, 14, 2));
  CHECK(run_step(s).out.num_scheduled_tokens == Q{{0, 14}});
  CHECK(run_step(s).out.num_scheduled_tokens == Q{{0, v08 ? 2 : 1}});
}

TEST_CASE("0.33: a padded one-token admission cut below 1 + k throws where vLLM asserts", "[scheduler]") {
  SchedulerConfig c = make_config(256, 100, 128);
  c.num_speculative_tokens = 3;
  c.long_prefill_token_threshold = 2;
  Scheduler s(c);
  s.add_request(make_req(0, 4, 6));
  CHECK(run_step(s).out.num_scheduled_tokens == Q{{0, 4}});  // a lone request: no threshold
  s.add_request(make_req(1, 1, 2));
  try {
    run_step(s);  // b: padded to 4, cut to 2 (scheduler.py ~1332), vLLM asserts (~1579)
    FAIL("no VllmCannotRun");
  } catch (const VllmCannotRun& e) {
    CHECK(e.step == 1);
    CHECK(e.request == 1);
    CHECK(e.reason.find("padded to 1 + num_speculative_tokens = 4 tokens") != std::string::npos);
    CHECK(e.reason.find("cuts it to 2 (~1332)") != std::string::npos);
  }
  SECTION("a threshold of 1 + k keeps the padding") {
    c.long_prefill_token_threshold = 4;
    Scheduler t(c);
    t.add_request(make_req(0, 4, 6));
    run_step(t);
    t.add_request(make_req(1, 1, 2));
    CHECK(run_step(t).out.num_scheduled_tokens == Q{{0, 4}, {1, 4}});
  }
}

TEST_CASE("0.33: MTP block hashes cover the next token, n-gram reserves no lookahead", "[scheduler]") {
  SchedulerConfig c = make_config(256, 40);
  c.block_size = 4;
  c.enable_prefix_caching = true;
  c.num_speculative_tokens = 1;
  SECTION("a block is hit only when the token after it matches too") {
    const bool v033 = GENERATE(true, false);
    c.speculative_method = v033 ? SpeculativeMethod::kMtp : SpeculativeMethod::kNgram;
    Scheduler s(with_rules(c, v033 ? EngineProfile::kVllm033 : EngineProfile::kVllm011));
    Request a = make_req(0, 8, 1, 3);
    a.forced_output = {50};
    s.add_request(a);
    CHECK(run_step(s).finished.size() == 1);  // a's tokens: 8 prompt + 50
    Request b = make_req(1, 9, 1, 3);          // a's 8 prompt tokens, then 60
    b.all_token_ids[8] = 60;
    s.add_request(b);
    StepResult r = run_step(s);
    // vLLM 0.33 with MTP: block 1's hash covers token 8 (50 for a, 60 for b): only block 0 hits.
    // vLLM 0.11 with n-gram: both blocks hit, the last token is recomputed.
    CHECK(r.out.scheduled_new_reqs[0].num_computed_tokens == (v033 ? 4 : 8));
    CHECK(r.out.num_scheduled_tokens == Q{{1, v033 ? 5 : 1}});
  }
  SECTION("vLLM 0.11 with MTP: the hit drops its last block, a fresh admission gets no lookahead") {
    Scheduler s(with_rules(c, EngineProfile::kVllm011));
    Request a = make_req(0, 8, 1, 3);
    a.forced_output = {50};
    s.add_request(a);
    StepResult first = run_step(s);
    // 8 tokens in blocks of 4: 2 blocks, no lookahead slot (0.11.0 scheduler.py:456-458).
    CHECK(first.out.scheduled_new_reqs[0].block_ids.size() == 2U);
    CHECK(first.finished.size() == 1);
    Request b = make_req(1, 9, 1, 3);  // a's 8 prompt tokens, then 60
    b.all_token_ids[8] = 60;
    s.add_request(b);
    StepResult r = run_step(s);
    // Both blocks hit; single_type_kv_cache_manager.py:282-284 drops the last: 4 computed.
    CHECK(r.out.scheduled_new_reqs[0].num_computed_tokens == 4);
    CHECK(r.out.num_scheduled_tokens == Q{{1, 5}});
  }
  SECTION("lookahead slots: k for MTP, none for n-gram") {
    const bool mtp = GENERATE(true, false);
    c.num_speculative_tokens = 2;
    c.speculative_method = mtp ? SpeculativeMethod::kMtp : SpeculativeMethod::kNgram;
    Scheduler s(c);
    s.add_request(make_req(0, 4, 2));
    StepResult r = run_step(s);
    CHECK(r.out.scheduled_new_reqs[0].block_ids.size() == (mtp ? 2U : 1U));  // 4 + 2 lookahead > 4
  }
}

TEST_CASE("chunked prefill off: 0.12+ stop at a prompt over the budget, 0.11.0 skips it, 0.8 chunks it",
          "[scheduler]") {
  // Budget 128: a (100) fits, b (50) does not fit the 28 left, c (20) would.
  SchedulerConfig c = make_config(128, 64, 128);
  c.enable_chunked_prefill = false;
  const EngineProfile profile = GENERATE(EngineProfile::kVllm3Region, EngineProfile::kVllm012, EngineProfile::kVllm011,
                                         EngineProfile::kVllm2025Early);
  const bool v011 = profile == EngineProfile::kVllm011;
  Scheduler s(with_rules(c, profile));
  for (ReqId id = 0; id < 3; ++id) s.add_request(make_req(id, id == 0 ? 100 : id == 1 ? 50 : 20, 1));
  if (profile == EngineProfile::kVllm2025Early) {
    // vLLM 0.8.5's V1 scheduler never reads enable_chunked_prefill: b is chunked to the 28 left
    // (v1/core/sched/scheduler.py:330-352).
    CHECK(run_step(s).out.num_scheduled_tokens == Q{{0, 100}, {1, 28}});
    CHECK(run_step(s).out.num_scheduled_tokens == Q{{1, 22}, {2, 20}});
    return;
  }
  StepResult r = run_step(s);
  // 0.11.0 scheduler.py:431-435 skips b and tries c; 0.12.0 :522-528 and 0.16.0 :660-665 end
  // phase B at b.
  CHECK(r.out.num_scheduled_tokens == (v011 ? Q{{0, 100}, {2, 20}} : Q{{0, 100}}));
  // The skipped b went back to the queue's front: it runs next.
  CHECK(run_step(s).out.num_scheduled_tokens == (v011 ? Q{{1, 50}} : Q{{1, 50}, {2, 20}}));
}

TEST_CASE("vLLM 0.8: no priority policy, no request priorities, no MTP on V1", "[scheduler]") {
  SchedulerConfig c = with_rules(make_config(128, 64, 128), EngineProfile::kVllm2025Early);
  c.policy = SchedulingPolicy::kPriority;
  // The V1 scheduler of 0.8.5 reads no policy: FCFS.
  CHECK(Scheduler(c).config().policy == SchedulingPolicy::kFcfs);
  CHECK(Scheduler(with_rules(c, EngineProfile::kVllm011)).config().policy == SchedulingPolicy::kPriority);
  Request prio = make_req(0, 4, 1);
  prio.priority = 1;
  CHECK(check_request(prio, c, 128).rfind("priority 1: this profile's vLLM (0.8) refuses request priorities", 0) == 0);
  CHECK(check_request(prio, with_rules(c, EngineProfile::kVllm011), 128).empty());
  c.num_speculative_tokens = 2;
  c.speculative_method = SpeculativeMethod::kMtp;
  CHECK(check_scheduler_config(c, 128).find("runs MTP speculation on its V0 engine") != std::string::npos);
  c.speculative_method = SpeculativeMethod::kNgram;
  CHECK(check_scheduler_config(c, 128).empty());
}

TEST_CASE("0.11.1-0.18: no stop before min_tokens outputs, not even at max_model_len", "[scheduler]") {
  // Prompt 6 of max_model_len 8, min_tokens 4: 0.33 stops at the length cap after 2 outputs;
  // vllm-3region's check_stop returns before every check (0.16.0 utils.py:46-47) and the request
  // waits at max_model_len.
  SchedulerConfig c = make_config(64, 16, 8);
  const EngineProfile profile = GENERATE(EngineProfile::kVllm033, EngineProfile::kVllm3Region, EngineProfile::kVllm012);
  const bool v3 = profile != EngineProfile::kVllm033;  // 0.12.0 utils.py:54-55 as 0.16.0 :46-47
  Scheduler s(with_rules(c, profile));
  Request a = make_req(0, 6, 4);
  a.min_tokens = 4;
  s.add_request(a);
  std::size_t finished = 0;
  int scheduled_steps = 0;
  for (int step = 0; step < 6; ++step) {
    StepResult r = run_step(s);
    finished += r.finished.size();
    scheduled_steps += r.out.total_num_scheduled_tokens > 0 ? 1 : 0;
  }
  CHECK(finished == (v3 ? 0U : 1U));
  CHECK(scheduled_steps == 2);  // 6 prompt tokens, then 1: positions stop below max_model_len
}

TEST_CASE("0.33: KV refusals are the start-up check only, and only without it can a pool never hold a request",
          "[scheduler]") {
  // 5 blocks of 16: 4 usable, 64 slots (v1/core/kv_cache_planning.py:1510-1559).
  SchedulerConfig c = make_config(64, 5, 64);
  CHECK(check_kv_cache_startup(c, 64).empty());
  const std::string refused = check_kv_cache_startup(c, 65);
  CHECK(refused.rfind("vLLM 0.33 refuses to start (vllm/v1/core/kv_cache_planning.py:1551-1559, :78-87): \"To serve at "
                      "least one request with the model's max seq len (65), (5 blocks of 16 tokens) KV cache is needed, "
                      "which is larger than the available KV cache memory (4 usable blocks: num_gpu_blocks 5 less the "
                      "null block). Based on the available memory, the estimated maximum model length is 64.",
                      0) == 0);
  CHECK(check_kv_cache_startup(with_rules(c, EngineProfile::kVllm3Region), 65).empty());
  // An unset pool: 8192, or the smallest one the check passes.
  SchedulerConfig d = c;
  d.max_model_len = 163840;
  CHECK(default_num_gpu_blocks(d) == 10241);
  d.block_size = 64;
  CHECK(default_num_gpu_blocks(d) == 8192);
  d.block_size = 16;
  CHECK(default_num_gpu_blocks(with_rules(d, EngineProfile::kVllm3Region)) == 8192);
  // n-gram, k = 3: prompt 20 + max_tokens 40 + 2k = 66 tokens is past the 64 slots; vLLM accepts
  // the request, and it runs to max_tokens in 4 blocks (tests/data/kv_fit/drafts_end_at_max_tokens.yaml).
  c.num_speculative_tokens = 3;
  c.speculative_method = SpeculativeMethod::kNgram;
  const Request a = make_req(0, 20, 40);
  CHECK(check_request(a, c, 64).empty());
  // The fuzzer's bound is capped at max_model_len, which the start-up check keeps within the pool;
  // with max_model_len 128 (no start-up check) it is past it.
  CHECK(request_always_fits(a, c, 64));
  CHECK(check_request(a, c, 128).empty());
  CHECK_FALSE(request_always_fits(a, c, 128));
  CHECK(request_always_fits(make_req(0, 20, 38), c, 128));
  CHECK_FALSE(request_always_fits(make_req(0, 20, 39), c, 128));
  // Without the start-up check (vLLM 0.16's profile) max_model_len 128 lets a request outgrow the
  // pool: 64 known tokens fit, 65 never do; with MTP the 3 lookahead slots count too (61 + 3 = 64).
  SchedulerConfig old = with_rules(make_config(64, 5, 128), EngineProfile::kVllm3Region);
  Scheduler s(old);
  CHECK_FALSE(s.can_never_fit(make_req(0, 64, 4)));
  CHECK(s.can_never_fit(make_req(0, 65, 4)));
  old.num_speculative_tokens = 3;
  Scheduler mtp(old);
  CHECK_FALSE(mtp.can_never_fit(make_req(0, 61, 4)));
  CHECK(mtp.can_never_fit(make_req(0, 62, 4)));
}
