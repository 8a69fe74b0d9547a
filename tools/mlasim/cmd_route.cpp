// `mlasim route --batch ...`: reorder and split one explicit batch.
#include "tools/mlasim/commands.h"

namespace mlasim::cli {
namespace {

struct RouteOptions {
  std::string batch;
  std::string profile = "vllm-current";
  std::string backend = "flashattn-mla";
  int threshold = 0;
  std::string query_len_support;
  int spec_tokens = 0;
  bool no_reorder = false;
  bool json = false;
};

}  // namespace

void add_route_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<RouteOptions>();
  CLI::App* cmd = app.add_subcommand(
      "route",
      "Evaluate the batch reorder and the decode/prefill split on an explicit batch, given as\n"
      "q:nct:P per row in persistent-batch order (q scheduled tokens, nct computed tokens, P prompt\n"
      "length). Prints the order after reorder, the split counts and each row's region and path.\n"
      "Example: mlasim route --batch 1:0:1 --backend flashinfer-mla   (a lone 1-token prompt)");
  cmd->add_option("--batch", o->batch, "Rows as q:nct:P,q:nct:P,...")->required();
  cmd->add_option("--profile", o->profile, "Engine profile")
      ->check(CLI::IsMember({"vllm-2025-early", "vllm-0.11", "vllm-3region", "vllm-current", "strict", "sglang"}));
  cmd->add_option("--backend", o->backend, "Attention backend")
      ->check(CLI::IsMember({"flashmla", "flashattn-mla", "flashinfer-mla", "cutlass-mla", "triton-mla", "rocm-aiter-mla"}));
  cmd->add_option("--threshold", o->threshold, "Override the decode threshold T")->check(CLI::PositiveNumber);
  cmd->add_option("--query-len-support", o->query_len_support, "Override: single, uniform or varlen")
      ->check(CLI::IsMember({"single", "uniform", "varlen"}));
  cmd->add_option("--spec-tokens", o->spec_tokens, "Speculative tokens k")->check(CLI::NonNegativeNumber);
  cmd->add_flag("--no-reorder", o->no_reorder, "Split the batch in the given order, without reordering");
  cmd->add_flag("--json", o->json, "Print JSON instead of text");
  cmd->callback([&exit_code] { exit_code = not_implemented("route", "batch routing"); });
}

}  // namespace mlasim::cli
