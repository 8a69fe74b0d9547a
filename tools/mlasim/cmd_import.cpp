// `mlasim import FORMAT FILE -o SCENARIO.yaml`: a public LLM-serving trace (Azure, BurstGPT,
// Mooncake) as a scenario plus its request file.
#include <iostream>

#include "tools/import/importer.h"
#include "tools/mlasim/commands.h"

namespace mlasim::cli {
namespace {

struct ImportArgs {
  std::string format;
  ImportOptions options;
  long long limit = 0;
  bool limit_given = false;
};

int run_import(ImportArgs& a) {
  std::optional<TraceFormat> format = parse_trace_format(a.format);
  if (!format) {
    std::cerr << "mlasim import: error: FORMAT: unknown trace format \"" << a.format
              << "\"\n  hint: known formats: azure, burstgpt, mooncake\n";
    return kExitBadInput;
  }
  if (a.limit_given && a.limit < 1) {
    std::cerr << "mlasim import: error: --limit: expected a number >= 1, found " << a.limit
              << "\n  hint: --limit N imports the first N requests that are not skipped\n";
    return kExitBadInput;
  }
  a.options.format = *format;
  a.options.limit = a.limit_given ? a.limit : 0;
  Result<ImportSummary> summary = import_trace(a.options);
  if (!summary) {
    return report_error(summary.error());
  }
  std::cout << format_import_summary(summary.value());
  return kExitOk;
}

}  // namespace

void add_import_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ImportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "import",
      "Convert a public LLM-serving trace into a scenario: SCENARIO.yaml (v3-attn model, scheduler\n"
      "defaults for long prompts) and SCENARIO.jsonl beside it, one request per line in arrival order\n"
      "(arrival_time in seconds from the first request, prompt_len, max_tokens, ignore_eos; Mooncake\n"
      "also prompt_hash_ids). Requests with no output tokens, an empty prompt, or a prompt that does\n"
      "not fit max_model_len are skipped and counted. FORMAT: azure (AzurePublicDataset LLM inference\n"
      "CSV), burstgpt (BurstGPT CSV; failed requests have 0 response tokens), mooncake (FAST'25 JSONL).\n"
      "Example: mlasim import azure AzureLLMInferenceTrace_conv.csv -o /tmp/azure_conv.yaml --limit 1000\n"
      "then:    mlasim run /tmp/azure_conv.yaml --dry-run --table summary");
  cmd->add_option("format", args->format, "Trace format: azure | burstgpt | mooncake")->required();
  cmd->add_option("file", args->options.input, "The trace file")->required();
  cmd->add_option("-o,--output", args->options.output, "Scenario to write (SCENARIO.yaml; SCENARIO.jsonl beside it)")
      ->required();
  cmd->add_option("--limit", args->limit, "Import the first N requests that are not skipped");
  cmd->add_option("--model", args->options.model_preset,
                  "Model preset: tiny | v2-lite-attn | v3-attn (default v3-attn)");
  cmd->add_option("--set", args->options.sets,
                  "Override or add a key of the written scenario, e.g. --set scheduler.max_num_batched_tokens=4096 "
                  "(repeatable)");
  cmd->callback([args, cmd, &exit_code] {
    args->limit_given = cmd->count("--limit") > 0;
    exit_code = run_import(*args);
  });
}

}  // namespace mlasim::cli
