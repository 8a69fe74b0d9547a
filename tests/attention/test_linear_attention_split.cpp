// The split of linear-attention (KDA) layers (GDNAttentionMetadataBuilder.build, gdn_attn.py
// ~337-430). Every expected value below is what vLLM 0.33's own builder returned for the same rows
// on the CPU (tools/conformance/conformance_linear.py), per model runner and k.
#include <catch2/catch.hpp>

#include <vector>

#include "attention/linear_attention_split.h"
#include "attention/routing_config.h"

using namespace mlasim;

namespace {

// {q, nct, prompt_len, prefill_len, num_drafts (-1: none listed)}
using Rows = std::vector<LinearAttentionRow>;

// {spec decodes, spec tokens, decodes, decode tokens, prefills, prefill tokens}
LinearAttentionSplit counts(int sd, int st, int d, int dt, int p, int pt) { return {sd, st, d, dt, p, pt}; }

const Rows kLone1{{1, 0, 1, 1, -1}};
const Rows kLone5{{5, 0, 5, 5, -1}};
const Rows kDecodeThenFresh1{{1, 10, 10, 10, -1}, {1, 0, 1, 1, -1}};
const Rows kFresh1ThenDecode{{1, 0, 1, 1, -1}, {1, 10, 10, 10, -1}};
const Rows kExtendThenDecode{{4, 3, 10, 10, -1}, {1, 11, 10, 10, -1}};
const Rows kVerifyAndPaddedAdmission{{3, 10, 10, 10, 2}, {3, 0, 1, 1, 2}};
const Rows kVerifyAndOneTokenTail{{3, 10, 10, 10, 2}, {1, 5, 10, 10, -1}};
const Rows kTwoVerifiesAndFresh{{3, 10, 10, 10, 2}, {2, 20, 10, 10, 1}, {4, 0, 4, 4, -1}};
const Rows kTwoTokenCatchUp{{2, 11, 10, 10, -1}};
const Rows kResumedCatchUp{{3, 8, 10, 12, 2}};

}  // namespace

TEST_CASE("linear attention without speculation: a first chunk is a prefill, one token or more", "[routing]") {
  for (ModelRunner runner : {ModelRunner::kV1, ModelRunner::kV2}) {
    CHECK(split_linear_attention(kLone1, 0, runner) == counts(0, 0, 0, 0, 1, 1));  // MLA: decode path
    CHECK(split_linear_attention(kLone5, 0, runner) == counts(0, 0, 0, 0, 1, 5));
    CHECK(split_linear_attention(kDecodeThenFresh1, 0, runner) == counts(0, 0, 1, 1, 1, 1));
    // Every row from the first prefill on is a prefill, the decode behind it too.
    CHECK(split_linear_attention(kFresh1ThenDecode, 0, runner) == counts(0, 0, 0, 0, 2, 2));
    CHECK(split_linear_attention(kExtendThenDecode, 0, runner) == counts(0, 0, 0, 0, 2, 5));
    CHECK(split_linear_attention(kTwoTokenCatchUp, 0, runner) == counts(0, 0, 0, 0, 1, 2));
  }
  CHECK(split_linear_attention({}, 0, ModelRunner::kV2) == counts(0, 0, 0, 0, 0, 0));
}

TEST_CASE("linear attention with k = 2 under model runner v2", "[routing]") {
  const ModelRunner v2 = ModelRunner::kV2;
  CHECK(split_linear_attention(kLone1, 2, v2) == counts(0, 0, 0, 0, 1, 1));
  CHECK(split_linear_attention(kLone5, 2, v2) == counts(0, 0, 0, 0, 1, 5));
  // A decode with no drafts stays a speculative row (mamba_hybrid.py ~281-283).
  CHECK(split_linear_attention(kDecodeThenFresh1, 2, v2) == counts(1, 1, 0, 0, 1, 1));
  CHECK(split_linear_attention(kFresh1ThenDecode, 2, v2) == counts(1, 1, 0, 0, 1, 1));
  CHECK(split_linear_attention(kExtendThenDecode, 2, v2) == counts(1, 1, 0, 0, 1, 4));
  // A padded one-token admission (nct = 0) is still prefilling: the prefill kernel.
  CHECK(split_linear_attention(kVerifyAndPaddedAdmission, 2, v2) == counts(1, 3, 0, 0, 1, 3));
  // One new prompt token over context runs as a decode (model_runner.py ~1356-1365).
  CHECK(split_linear_attention(kVerifyAndOneTokenTail, 2, v2) == counts(2, 4, 0, 0, 0, 0));
  CHECK(split_linear_attention(kTwoVerifiesAndFresh, 2, v2) == counts(2, 5, 0, 0, 1, 4));
  CHECK(split_linear_attention(kTwoTokenCatchUp, 2, v2) == counts(1, 2, 0, 0, 0, 0));
  // Resumed with its outputs (prefill_len 12): nct 8 < 12, q - drafts = 1 over context: a decode.
  CHECK(split_linear_attention(kResumedCatchUp, 2, v2) == counts(1, 3, 0, 0, 0, 0));
}

TEST_CASE("linear attention with k = 2 under model runner v1", "[routing]") {
  const ModelRunner v1 = ModelRunner::kV1;
  CHECK(split_linear_attention(kDecodeThenFresh1, 2, v1) == counts(1, 1, 0, 0, 1, 1));
  // V1 marks a row whose q is its drafts + 1: the padded admission is a speculative row there.
  CHECK(split_linear_attention(kVerifyAndPaddedAdmission, 2, v1) == counts(2, 6, 0, 0, 0, 0));
  // A one-token prompt tail is no decode under V1 (nct < P): a q == 1 decode, folded into the
  // prefills beside the speculative rows (gdn_attn.py ~422-428).
  CHECK(split_linear_attention(kVerifyAndOneTokenTail, 2, v1) == counts(1, 3, 0, 0, 1, 1));
  CHECK(split_linear_attention(kTwoVerifiesAndFresh, 2, v1) == counts(2, 5, 0, 0, 1, 4));
  CHECK(split_linear_attention(kTwoTokenCatchUp, 2, v1) == counts(0, 0, 0, 0, 1, 2));
  CHECK(split_linear_attention(kResumedCatchUp, 2, v1) == counts(1, 3, 0, 0, 0, 0));
}

TEST_CASE("linear attention counts as the step line prints them", "[routing]") {
  CHECK(format_linear_attention_counts(counts(0, 0, 1, 1, 1, 5)) == " kda_decodes=1/1 kda_prefills=1/5");
  CHECK(format_linear_attention_counts(counts(2, 6, 0, 0, 1, 4)) == " kda_spec=2/6 kda_decodes=0/0 kda_prefills=1/4");
}

TEST_CASE("linear-attention layers lower the runner's reorder threshold, not the MLA split's", "[routing]") {
  RoutingOptions o;
  o.profile = EngineProfile::kVllm033;
  o.backend = AttentionBackendKind::kFlashAttnMla;
  o.linear_attention_layers = true;
  RoutingConfig c = make_routing_config(o);
  CHECK(c.decode_threshold == 512);  // FLASH_ATTN_MLA's builder splits with its own
  CHECK(reorder_threshold(c) == 1);  // GDNAttentionMetadataBuilder votes 1
  o.num_speculative_tokens = 2;
  c = make_routing_config(o);
  CHECK(c.decode_threshold == 512);
  CHECK(reorder_threshold(c) == 3);  // 1 + k with speculation
  o.backend = AttentionBackendKind::kFlashInferMla;  // T = 1, raised to 1 + k: the same as the vote
  c = make_routing_config(o);
  CHECK(c.reorder_threshold == 0);
  CHECK(reorder_threshold(c) == c.decode_threshold);
  o.linear_attention_layers = false;
  o.backend = AttentionBackendKind::kFlashAttnMla;
  CHECK(make_routing_config(o).reorder_threshold == 0);
}
