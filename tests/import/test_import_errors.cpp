// Import errors: every bad trace of tests/data/traces/bad/ (expected.tsv) gives its exact
// file:line:column message and hint, and no import leaves a file behind or touches old outputs.
#include <catch2/catch.hpp>
#include <fstream>

#include "tests/import/import_test_util.h"
#include "tools/import/importer.h"

using namespace mlasim;
using namespace mlasim::testing;

namespace {

Error import_error(const std::string& input, const std::string& output, std::vector<std::string> sets = {},
                   TraceFormat f = TraceFormat::kAzure, std::string preset = "v3-attn") {
  ImportOptions o;
  o.format = f;
  o.input = input;
  o.output = output;
  o.sets = std::move(sets);
  o.model_preset = std::move(preset);
  Result<ImportSummary> r = import_trace(o);
  if (r) FAIL("the import of " + input + " succeeded");
  return r.error();
}

}  // namespace

TEST_CASE("each bad trace fails with the expected location, message and hint, writing nothing", "[import]") {
  const std::string bad_dir = kTraceDir + "/bad";
  std::ifstream tsv(bad_dir + "/expected.tsv");
  int count = 0;
  for (std::string row; std::getline(tsv, row);) {
    if (row.empty() || row[0] == '#') continue;
    std::vector<std::string> col;
    for (std::size_t start = 0;;) {
      const std::size_t tab = row.find('\t', start);
      col.push_back(row.substr(start, tab - start));
      if (tab == std::string::npos) break;
      start = tab + 1;
    }
    REQUIRE(col.size() == 4);
    INFO(col[1]);
    ScratchDir dir("bad");
    const Error e = import_error(bad_dir + "/" + col[1], dir.file("out.yaml"), {}, *parse_trace_format(col[0]));
    CHECK(e.format() == bad_dir + "/" + col[1] + col[2] + "\n  hint: " + col[3]);
    CHECK(dir.entries().empty());
    ++count;
  }
  CHECK(count == 17);
}

TEST_CASE("bad traces give exact lines and columns", "[import]") {
  ScratchDir dir("located");
  const std::string bad = kTraceDir + "/bad/";
  Error e = import_error(bad + "azure_time_goes_back.csv", dir.file("o.yaml"));
  CHECK(e.line == 4);
  CHECK(e.column == 1);
  CHECK(e.key_path == "TIMESTAMP");
  e = import_error(bad + "mooncake_hash_ids_length.jsonl", dir.file("o.yaml"), {}, TraceFormat::kMooncake);
  CHECK(e.line == 2);
  CHECK(e.column == 77);
  CHECK(e.message == "2 hash ids for input_length 1100, expected 3 (one per 512-token block)");
  e = import_error(bad + "burstgpt_negative_count.csv", dir.file("o.yaml"), {}, TraceFormat::kBurstGpt);
  CHECK(e.line == 3);
  CHECK(e.column == 14);
  CHECK(e.key_path == "Response tokens");
}

TEST_CASE("timestamps may not go back even when the earlier request was skipped", "[import]") {
  ScratchDir dir("back");
  write_file(dir.file("t.csv"),
             "TIMESTAMP,ContextTokens,GeneratedTokens\n"
             "2023-11-16 18:15:46.6805900,4808,10\n"
             "2023-11-16 18:15:49.0000000,100,0\n"
             "2023-11-16 18:15:48.5000000,100,5\n");
  const Error e = import_error(dir.file("t.csv"), dir.file("o.yaml"));
  CHECK(e.headline() == dir.file("t.csv") +
                            ":4:1: error: TIMESTAMP: arrival time goes back: 2023-11-16 18:15:48.5000000 is earlier "
                            "than 2023-11-16 18:15:49.0000000 on line 3");
  CHECK(dir.entries() == std::vector<std::string>{"t.csv"});
}

TEST_CASE("input and output problems are errors before anything is written", "[import]") {
  ScratchDir dir("io");
  const std::string sample = kTraceDir + "/azure_sample.csv";
  Error e = import_error(dir.file("missing.csv"), dir.file("o.yaml"));
  CHECK(e.format() == dir.file("missing.csv") +
                          ": error: cannot read the trace: No such file or directory\n"
                          "  hint: check the path and that the file is readable");
  e = import_error(kTraceDir, dir.file("o.yaml"));  // a directory
  CHECK(e.headline() == kTraceDir + ": error: is a directory, not the trace");
  e = import_error(sample, dir.file("no/such/dir/o.yaml"));
  CHECK(e.format() == dir.file("no/such/dir/o.yaml") + ": error: -o: the directory " + dir.file("no/such/dir") +
                          " does not exist\n  hint: create it first, or write the scenario elsewhere");
  e = import_error(sample, dir.file("o.json"));
  CHECK(e.headline() == dir.file("o.json") + ": error: -o: the scenario file must end in .yaml");
  e = import_error(sample, dir.file(".yaml"));
  CHECK(e.headline() == dir.file(".yaml") + ": error: -o: the scenario file must end in .yaml");
  e = import_error(sample, dir.file(".hidden.yaml"));
  CHECK(e.headline() == dir.file(".hidden.yaml") + ": error: -o: the file name must not start with '.'");
  write_file(dir.file("trace.jsonl"), R"({"timestamp": 0, "input_length": 3, "output_length": 2, "hash_ids": [5]})");
  e = import_error(dir.file("trace.jsonl"), dir.file("trace.yaml"), {}, TraceFormat::kMooncake);
  CHECK(e.headline() ==
        dir.file("trace.yaml") + ": error: -o: " + dir.file("trace.jsonl") + " is the input trace itself");
  CHECK(dir.entries() == std::vector<std::string>{"trace.jsonl"});
}

TEST_CASE("a trace whose every request is skipped is an error", "[import]") {
  ScratchDir dir("none");
  write_file(dir.file("t.csv"),
             "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
             "5,ChatGPT,472,0,472,Conversation log\n"
             "6,ChatGPT,0,10,10,Conversation log\n");
  const Error e = import_error(dir.file("t.csv"), dir.file("o.yaml"), {}, TraceFormat::kBurstGpt);
  CHECK(e.headline() == dir.file("t.csv") +
                            ": error: no request to import: 2 requests skipped (1 zero-output, 1 zero-prompt, 0 too "
                            "long for max_model_len 163840)");
  CHECK(dir.entries() == std::vector<std::string>{"t.csv"});
}

TEST_CASE("a failed import leaves existing outputs as they were", "[import]") {
  ScratchDir dir("keep");
  write_file(dir.file("s.yaml"), "old yaml");
  write_file(dir.file("s.jsonl"), "old jsonl");
  import_error(kTraceDir + "/bad/azure_time_goes_back.csv", dir.file("s.yaml"));
  CHECK(read_file(dir.file("s.yaml")) == "old yaml");
  CHECK(read_file(dir.file("s.jsonl")) == "old jsonl");
  CHECK(dir.entries() == std::vector<std::string>{"s.jsonl", "s.yaml"});
}

TEST_CASE("bad --set and --model values name the override and the column", "[import]") {
  ScratchDir dir("sets");
  const std::string sample = kTraceDir + "/azure_sample.csv";
  const std::string out = dir.file("o.yaml");
  struct Case {
    const char* set;
    const char* headline;
  };
  const Case cases[] = {
      {"scheduler.max_num_seqs", "<--set scheduler.max_num_seqs>:1:1: error: expected key=value"},
      {"=5", "<--set =5>:1:1: error: expected key=value"},
      {"scheduler.max_num_seqs=", "<--set scheduler.max_num_seqs=>:1:24: error: no value after '='"},
      {"requests.0.max_tokens=4",
       "<--set requests.0.max_tokens=4>:1:1: error: requests: the imported requests cannot be changed with --set"},
      {"requests_file=x.jsonl",
       "<--set requests_file=x.jsonl>:1:1: error: requests_file: the imported requests cannot be changed with --set"},
      {"scheduler..max_num_seqs=4",
       "<--set scheduler..max_num_seqs=4>:1:11: error: empty key segment in "
       "\"scheduler..max_num_seqs\""},
      {"scheduler.max num=4",
       "<--set scheduler.max num=4>:1:14: error: unexpected character in the key "
       "\"scheduler.max num\""},
      {"model=tiny", "<--set model=tiny>:1:1: error: model is a mapping; set one of its keys"},
      {"model.preset.size=1",
       "<--set model.preset.size=1>:1:1: error: model.preset is not a mapping, so it has no key \"size\""},
      {"model.preset=huge", "<--set model.preset=huge>:1:14: error: model.preset: unknown model preset \"huge\""},
      {"scheduler.max_model_len=1",
       "<--set scheduler.max_model_len=1>:1:25: error: scheduler.max_model_len: expected a whole number >= 2, found "
       "\"1\""},
      {"scheduler.max_model_len=abc",
       "<--set scheduler.max_model_len=abc>:1:25: error: scheduler.max_model_len: expected a whole number >= 2, "
       "found \"abc\""},
  };
  for (const Case& c : cases) {
    INFO(c.set);
    CHECK(import_error(sample, out, {c.set}).headline() == c.headline);
  }
  const Error e = import_error(sample, out, {}, TraceFormat::kAzure, "v4");
  CHECK(
      e.format() ==
      "--model: error: model.preset: unknown model preset \"v4\"\n  hint: known presets: tiny, tiny-dsa, v2-lite-attn, v3-attn");
  CHECK(dir.entries().empty());
}
