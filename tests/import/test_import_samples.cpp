// Importing the sample traces of tests/data/traces/: exact request lines (against
// expected/*.jsonl, computed by an independent Python reference), counts, the YAML, --limit, --set.
#include <catch2/catch.hpp>

#include "tests/import/import_test_util.h"
#include "tools/import/importer.h"

using namespace mlasim;
using namespace mlasim::testing;

namespace {

ImportSummary import_ok(TraceFormat f, const std::string& input, const std::string& output, long long limit = 0,
                        std::vector<std::string> sets = {}) {
  ImportOptions o;
  o.format = f;
  o.input = input;
  o.output = output;
  o.limit = limit;
  o.sets = std::move(sets);
  Result<ImportSummary> r = import_trace(o);
  if (!r) FAIL(r.error().format());
  return r.value();
}

}  // namespace

TEST_CASE("the Azure sample: exact arrivals across midnight, one zero-output and one too-long request skipped",
          "[import]") {
  ScratchDir dir("azure");
  const ImportSummary s = import_ok(TraceFormat::kAzure, kTraceDir + "/azure_sample.csv", dir.file("azure.yaml"));
  CHECK(s.imported == 30);
  CHECK(s.skipped_zero_output == 1);
  CHECK(s.skipped_zero_prompt == 0);
  CHECK(s.skipped_too_long == 1);
  CHECK(s.max_model_len == 163840);
  CHECK(dir.entries() == std::vector<std::string>{"azure.jsonl", "azure.yaml"});
  CHECK(read_file(dir.file("azure.jsonl")) == read_file(kTraceDir + "/expected/azure_sample.jsonl"));
  const std::vector<std::string> lines = read_lines(dir.file("azure.jsonl"));
  REQUIRE(lines.size() == 30);
  CHECK(lines[0] == R"({"arrival_time": 0, "prompt_len": 2268, "max_tokens": 100, "ignore_eos": true})");
  CHECK(lines[1] == R"({"arrival_time": 0.648753, "prompt_len": 786, "max_tokens": 112, "ignore_eos": true})");
  // Two rows with the same timestamp (after the skipped zero-output row), then 23:59:59 -> 00:00:00.
  CHECK(lines[7] == R"({"arrival_time": 4.037413, "prompt_len": 246, "max_tokens": 194, "ignore_eos": true})");
  CHECK(lines[8] == R"({"arrival_time": 4.037413, "prompt_len": 2324, "max_tokens": 433, "ignore_eos": true})");
  CHECK(lines[29] == R"({"arrival_time": 11.997602, "prompt_len": 1607, "max_tokens": 131, "ignore_eos": true})");
  CHECK(read_file(dir.file("azure.yaml")) ==
        "# Written by `mlasim import azure` from azure_sample.csv; the requests are in azure.jsonl.\n"
        "version: 1\n"
        "name: azure\n"
        "description: \"Imported by mlasim import azure from azure_sample.csv: 30 requests, 2 skipped (1 "
        "zero-output, 0 zero-prompt, 1 too long for max_model_len 163840).\"\n"
        "model:\n"
        "  preset: v3-attn\n"
        "scheduler:\n"
        "  max_num_batched_tokens: 8192\n"
        "  max_num_seqs: 256\n"
        "  num_gpu_blocks: 32768\n"
        "  enable_chunked_prefill: true\n"
        "  enable_prefix_caching: true\n"
        "requests_file: azure.jsonl\n");
  CHECK(format_import_summary(s) ==
        "imported 30 requests (2 skipped: 1 zero-output, 0 zero-prompt, 1 too long for max_model_len 163840) from " +
            kTraceDir + "/azure_sample.csv -> " + dir.file("azure.yaml") + " + " + dir.file("azure.jsonl") +
            "\nspread: arrivals over 11.997602 s, mean prompt 1541.7 tokens, mean output 196.5 tokens\n");
}

TEST_CASE("the BurstGPT sample: failed requests (0 response tokens) skipped, fractional seconds kept", "[import]") {
  ScratchDir dir("burstgpt");
  const ImportSummary s = import_ok(TraceFormat::kBurstGpt, kTraceDir + "/burstgpt_sample.csv", dir.file("b.yaml"));
  CHECK(s.imported == 28);
  CHECK(s.skipped_zero_output == 2);
  CHECK(s.skipped() == 2);
  CHECK(read_file(dir.file("b.jsonl")) == read_file(kTraceDir + "/expected/burstgpt_sample.jsonl"));
  const std::vector<std::string> lines = read_lines(dir.file("b.jsonl"));
  REQUIRE(lines.size() == 28);
  CHECK(lines[0] == R"({"arrival_time": 0, "prompt_len": 270, "max_tokens": 568, "ignore_eos": true})");
  CHECK(lines[10] == R"({"arrival_time": 42.25, "prompt_len": 290, "max_tokens": 455, "ignore_eos": true})");
  CHECK(lines[11] == R"({"arrival_time": 50.75, "prompt_len": 2732, "max_tokens": 73, "ignore_eos": true})");
  CHECK(s.duration_us == 134'000000);  // 1657 - 1523 s
}

TEST_CASE("the Mooncake sample: hash ids kept as the trace has them, shared prefixes included", "[import]") {
  ScratchDir dir("mooncake");
  const ImportSummary s = import_ok(TraceFormat::kMooncake, kTraceDir + "/mooncake_sample.jsonl", dir.file("m.yaml"));
  CHECK(s.imported == 30);
  CHECK(s.skipped() == 0);
  CHECK(read_file(dir.file("m.jsonl")) == read_file(kTraceDir + "/expected/mooncake_sample.jsonl"));
  const std::vector<std::string> lines = read_lines(dir.file("m.jsonl"));
  REQUIRE(lines.size() == 30);
  CHECK(
      lines[0] ==
      R"({"arrival_time": 0, "prompt_len": 7714, "max_tokens": 697, "ignore_eos": true, "prompt_hash_ids": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]})");
  // The next turn of the same conversation: the first 15 blocks again, then new ones.
  CHECK(
      lines[1] ==
      R"({"arrival_time": 0.517, "prompt_len": 8794, "max_tokens": 123, "ignore_eos": true, "prompt_hash_ids": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 16, 17, 18]})");
  CHECK(
      lines[5] ==
      R"({"arrival_time": 4.823, "prompt_len": 6886, "max_tokens": 135, "ignore_eos": true, "prompt_hash_ids": [0, 1, 2, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37]})");
}

TEST_CASE("import with --limit takes the first N accepted requests and says so", "[import]") {
  ScratchDir dir("limit");
  const ImportSummary s = import_ok(TraceFormat::kBurstGpt, kTraceDir + "/burstgpt_sample.csv", dir.file("b.yaml"), 10);
  CHECK(s.imported == 10);
  CHECK(s.skipped_zero_output == 1);  // row 5 is before the 10th accepted row, row 18 after it
  CHECK(s.stopped_at_limit);
  const std::vector<std::string> lines = read_lines(dir.file("b.jsonl"));
  const std::vector<std::string> all = read_lines(kTraceDir + "/expected/burstgpt_sample.jsonl");
  CHECK(lines == std::vector<std::string>(all.begin(), all.begin() + 10));
  CHECK(read_file(dir.file("b.yaml")).find("0 too long for max_model_len 163840), stopped at --limit 10.\"\n") !=
        std::string::npos);
  CHECK(format_import_summary(s).find("mean output 390.8 tokens (stopped at --limit 10)\n") != std::string::npos);
}

TEST_CASE("import with --set overrides and adds keys, and scheduler.max_model_len moves the too-long cut", "[import]") {
  ScratchDir dir("set");
  const ImportSummary s =
      import_ok(TraceFormat::kMooncake, kTraceDir + "/mooncake_sample.jsonl", dir.file("m.yaml"), 0,
                {"scheduler.max_model_len=8192", "model.preset=tiny", "scheduler.max_num_batched_tokens=4096",
                 "engine.profile=strict", "description=prefix sharing: Kimi-like"});
  CHECK(s.max_model_len == 8192);
  CHECK(s.imported == 13);
  CHECK(s.skipped_too_long == 17);
  CHECK(read_file(dir.file("m.yaml")) ==
        "# Written by `mlasim import mooncake` from mooncake_sample.jsonl; the requests are in m.jsonl.\n"
        "version: 1\n"
        "name: m\n"
        "description: \"prefix sharing: Kimi-like\"\n"
        "model:\n"
        "  preset: tiny\n"
        "scheduler:\n"
        "  max_num_batched_tokens: 4096\n"
        "  max_num_seqs: 256\n"
        "  num_gpu_blocks: 32768\n"
        "  enable_chunked_prefill: true\n"
        "  enable_prefix_caching: true\n"
        "  max_model_len: 8192\n"
        "requests_file: m.jsonl\n"
        "engine:\n"
        "  profile: strict\n");
  for (const std::string& line : read_lines(dir.file("m.jsonl"))) {
    const std::size_t at = line.find("\"prompt_len\": ") + 14;
    CHECK(std::stoll(line.substr(at)) < 8192);
  }
  // model.max_position_embeddings is the default max_model_len, as in the scenario loader.
  ScratchDir dir2("set_mpe");
  const ImportSummary s2 = import_ok(TraceFormat::kAzure, kTraceDir + "/azure_sample.csv", dir2.file("a.yaml"), 0,
                                     {"model.max_position_embeddings=2048"});
  CHECK(s2.max_model_len == 2048);
  CHECK(s2.skipped_too_long == 9);
}

TEST_CASE("trace files with CRLF, a byte order mark, blank lines and no final newline import alike", "[import]") {
  ScratchDir dir("crlf");
  write_file(dir.file("t.csv"),
             "\xEF\xBB\xBFTIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:15:46.6805900,4808,10\r\n\r\n"
             "2023-11-16 18:15:47.0000004,12,3");
  const ImportSummary s = import_ok(TraceFormat::kAzure, dir.file("t.csv"), dir.file("t.yaml"));
  CHECK(s.imported == 2);
  CHECK(
      read_lines(dir.file("t.jsonl")) ==
      std::vector<std::string>{R"({"arrival_time": 0, "prompt_len": 4808, "max_tokens": 10, "ignore_eos": true})",
                               R"({"arrival_time": 0.31941, "prompt_len": 12, "max_tokens": 3, "ignore_eos": true})"});
}

TEST_CASE("a line longer than the read buffer is read whole", "[import]") {
  ScratchDir dir("long");
  std::string ids;
  const long long blocks = 400'000;  // ~3 MB of hash ids on one line
  for (long long i = 0; i < blocks; ++i) ids += (i ? ", " : "") + std::to_string(i);
  write_file(dir.file("trace.jsonl"),
             "{\"timestamp\": 7, \"input_length\": " + std::to_string(blocks * 512) +
                 ", \"output_length\": 1, \"hash_ids\": [" + ids + "]}\n" +
                 R"({"timestamp": 9, "input_length": 3, "output_length": 2, "hash_ids": [5]})" + "\n");
  const ImportSummary s = import_ok(TraceFormat::kMooncake, dir.file("trace.jsonl"), dir.file("t.yaml"));
  CHECK(s.skipped_too_long == 1);
  CHECK(read_lines(dir.file("t.jsonl")) ==
        std::vector<std::string>{
            R"({"arrival_time": 0, "prompt_len": 3, "max_tokens": 2, "ignore_eos": true, "prompt_hash_ids": [5]})"});
}
