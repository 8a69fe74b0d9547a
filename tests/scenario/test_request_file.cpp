// requests_file: the JSONL line parser, the reader's checks (file, line, column, key), the
// loader's scan (ids, expect ids, counts) and lazily generated prompts.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/json_line.h"
#include "sim/request.h"
#include "scenario/request_file.h"
#include "scenario/request_stream.h"
#include "config/request_tokens.h"
#include "scenario/scenario_loader.h"

using namespace mlasim;

namespace {

// A scratch directory with a scenario and its request file.
struct TraceDir {
  std::filesystem::path dir;
  TraceDir() {
    dir = std::filesystem::temp_directory_path() / ("mlasim_reqfile_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
  }
  ~TraceDir() { std::filesystem::remove_all(dir); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(dir / name, std::ios::binary) << text;
    return (dir / name).string();
  }
  Result<Scenario> load(const std::string& jsonl, const std::string& extra = "") const {
    write("t.jsonl", jsonl);
    const std::string yaml = write("t.yaml", "version: 1\nscheduler: {max_num_batched_tokens: 64, max_num_seqs: 4, "
                                             "max_model_len: 128, num_gpu_blocks: 64}\nrequests_file: t.jsonl\n" +
                                                 extra);
    return load_scenario_file(yaml);
  }
};

}  // namespace

TEST_CASE("the JSON line parser reads flat objects with columns", "[request_file]") {
  JsonLineParser p;
  REQUIRE(p.parse(R"({"id": "a\"b\u00e9", "prompt_len": 12, "t": 0.5, "ok": true, "n": null, "ids": [1, 2,3]})"));
  REQUIRE(p.fields().size() == 6);
  CHECK(p.find("id")->text == "a\"b\xc3\xa9");
  CHECK(p.find("id")->column == 8);
  CHECK(p.find("prompt_len")->number == "12");
  CHECK(p.find("t")->number == "0.5");
  CHECK(p.find("ok")->kind == JsonLineValue::Kind::kBool);
  CHECK(p.find("ok")->boolean);
  CHECK(p.find("n")->kind == JsonLineValue::Kind::kNull);
  const JsonLineValue* ids = p.find("ids");
  REQUIRE(ids->items.size() == 3);
  CHECK(ids->items[2] == "3");
  CHECK(ids->item_columns == std::vector<int>{81, 84, 86});
  CHECK(p.find("missing") == nullptr);
  REQUIRE(p.parse("{}"));
  CHECK(p.fields().empty());
}

TEST_CASE("the JSON line parser names the column of each syntax error", "[request_file]") {
  JsonLineParser p;
  const std::vector<std::tuple<std::string, int, std::string>> cases = {
      {"[1]", 1, "expected a JSON object ('{') on the line"},
      {R"({"a": 1,})", 9, "expected a key in double quotes"},
      {R"({"a" 1})", 6, "expected ':' after the key"},
      {R"({"a": 01})", 7, "a number must not have leading zeros"},
      {R"({"a": 1} x)", 10, "text after the object; one JSON object per line"},
      {R"({"a": 1, "a": 2})", 10, "duplicate key \"a\""},
      {R"({"a": {"b": 1}})", 7, "nested objects are not allowed in a request file"},
      {R"({"a": ["x"]})", 8, "arrays in a request file hold numbers only"},
      {R"({"a": "x)", 7, "unterminated string"},
      {R"({"a": 1.})", 9, "expected digits after the decimal point"},
  };
  for (const auto& [line, column, message] : cases) {
    INFO(line);
    CHECK_FALSE(p.parse(line));
    CHECK(p.error_column() == column);
    CHECK(p.error_message() == message);
  }
}

TEST_CASE("a request file loads: count, default ids, arrivals, hash-id prompts", "[request_file]") {
  TraceDir t;
  Result<Scenario> r = t.load(R"({"arrival_time": 0, "prompt_len": 20, "max_tokens": 3, "prompt_hash_ids": [7, 9], "prompt_hash_block_size": 16}

{"arrival_time": 0.25, "prompt_len": 16, "max_tokens": 2, "prompt_hash_ids": [7], "prompt_hash_block_size": 16}
{"arrival_time": 1.5e0, "prompt": [5, 6, 7], "max_tokens": 1}
)");
  if (!r) FAIL(r.error().format());
  const Scenario& s = r.value();
  CHECK(s.num_requests == 3);
  CHECK(s.timed_arrivals);
  CHECK(s.requests.empty());
  CHECK(s.requests_file == (t.dir / "t.jsonl").string());
  std::unique_ptr<RequestStream> stream = open_request_stream(s);
  std::vector<Request> reqs;
  std::vector<std::int64_t> arrivals;
  while (stream->peek()) {
    const int index = stream->peek_index();
    RequestSpec spec = stream->pop();
    arrivals.push_back(*spec.arrival_time_ns);
    reqs.push_back(make_request(spec, s.model, index));
  }
  REQUIRE(reqs.size() == 3);
  CHECK(arrivals == std::vector<std::int64_t>{0, 250'000'000, 1'500'000'000});
  CHECK(reqs[0].request_id == 0);
  CHECK(reqs[2].request_id == 2);
  // Seeded prompts stay pending until the scheduler looks at them.
  REQUIRE(reqs[0].pending_prompt.has_value());
  CHECK(reqs[0].num_prompt_tokens == 20);
  CHECK(reqs[0].all_token_ids.empty());
  CHECK_FALSE(reqs[2].pending_prompt.has_value());
  CHECK(reqs[2].all_token_ids == std::vector<int>{5, 6, 7});
  materialize_prompt(reqs[0]);
  materialize_prompt(reqs[1]);
  REQUIRE(reqs[0].all_token_ids.size() == 20);
  REQUIRE(reqs[1].all_token_ids.size() == 16);
  // Equal hash ids, equal blocks: both prompts start with block 7.
  CHECK(std::equal(reqs[1].all_token_ids.begin(), reqs[1].all_token_ids.end(), reqs[0].all_token_ids.begin()));
  CHECK(reqs[0].all_token_ids[16] != reqs[0].all_token_ids[0]);  // block 9 is another stream
  // The same tokens as an eagerly seeded prompt of the same spec.
  RequestSpec eager;
  eager.id = "r0";
  seed_prompt(eager, 20, {7, 9}, 16, s);
  CHECK(eager.prompt == reqs[0].all_token_ids);
}

TEST_CASE("a bad request file names file, line, column and key", "[request_file]") {
  TraceDir t;
  struct Case {
    std::string jsonl;
    int line, column;
    std::string key, message;
  };
  const std::vector<Case> cases = {
      {"{\"prompt_len\": 4}\n{\"prompt_len\": 4, \"max_tokens\": -1}\n", 2, 33, "requests_file[1].max_tokens",
       "-1 is out of range [1, 1073741824]"},
      {"{\"prompt_len\": 4}\nnot json\n", 2, 1, "", "not a JSON object: expected a JSON object ('{') on the line"},
      {"{\"prompt_len\": 4, \"colour\": 1}\n", 1, 19, "colour", "unknown key \"colour\""},
      {"{\"arrival_time\": 2, \"prompt_len\": 4}\n{\"arrival_time\": 1, \"prompt_len\": 4}\n", 2, 18,
       "requests_file[1].arrival_time", "arrives before the request on line 1"},
      {"{\"arrival_step\": 1, \"prompt_len\": 4}\n{\"arrival_time\": 1, \"prompt_len\": 4}\n", 2, 2,
       "requests_file[1].arrival_time", "arrival_time in a file whose requests arrive by arrival_step"},
      {"{\"id\": \"a\", \"prompt_len\": 4}\n{\"prompt_len\": 4}\n", 2, 1, "requests_file[1].id",
       "missing `id`: the file's first request has one"},
      {"{\"id\": \"a\", \"prompt_len\": 4}\n{\"id\": \"b\", \"prompt_len\": 4}\n{\"id\": \"a\", \"prompt_len\": 4}\n", 3,
       1, "requests_file[2].id", "duplicate request id \"a\""},
      {"{\"prompt_len\": 200}\n", 1, 16, "requests_file[0].prompt_len",
       "prompt of 200 tokens does not fit max_model_len 128"},
      {"{\"prompt_len\": 40, \"prompt_hash_ids\": [1, 2]}\n", 1, 39, "requests_file[0].prompt_hash_ids",
       "2 hash ids for a prompt of 40 tokens in blocks of 512 (needs 1)"},
      {"{\"prompt\": [3, 99999]}\n", 1, 16, "requests_file[0].prompt[1]",
       "token id 99999 is outside the vocabulary (vocab_size 512)"},
      {"{\"max_tokens\": 3}\n", 1, 1, "requests_file[0]", "missing `prompt` or `prompt_len`"},
      {"\n\n", 0, 0, "", "the requests file holds no request"},
  };
  for (const Case& c : cases) {
    INFO(c.jsonl);
    Result<Scenario> r = t.load(c.jsonl);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().file == (t.dir / "t.jsonl").string());
    CHECK(r.error().line == c.line);
    CHECK(r.error().column == c.column);
    CHECK(r.error().key_path == c.key);
    CHECK(r.error().message == c.message);
  }
}

TEST_CASE("the loader checks requests_file against the rest of the scenario", "[request_file]") {
  TraceDir t;
  // The expect block's ids must be in the file.
  Result<Scenario> r = t.load("{\"id\": \"a\", \"prompt_len\": 4}\n", "expect:\n  requests:\n    - {id: b, status: finished_stopped}\n");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message == "unknown request id \"b\"");
  CHECK(r.error().line == 6);
  r = t.load("{\"id\": \"a\", \"prompt_len\": 4}\n", "expect:\n  requests:\n    - {id: a, num_output_tokens: 16}\n");
  CHECK(r.ok());
  // Not both requests and requests_file; a missing file is named.
  const std::string both = t.write("both.yaml", "version: 1\nrequests_file: t.jsonl\nrequests:\n  - {id: a, prompt_len: 4}\n");
  r = load_scenario_file(both);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().key_path == "requests_file");
  CHECK(r.error().message == "both `requests` and `requests_file`");
  const std::string missing = t.write("missing.yaml", "version: 1\nrequests_file: nowhere.jsonl\n");
  r = load_scenario_file(missing);
  REQUIRE_FALSE(r.ok());
  // Reported at the key that names the file (a mutated scenario found it without a line).
  CHECK(r.error().file == missing);
  CHECK(r.error().line == 2);
  CHECK(r.error().column == 16);
  CHECK(r.error().key_path == "requests_file");
  CHECK(r.error().message ==
        "cannot read the requests file " + (t.dir / "nowhere.jsonl").string() + " (no such file; check the path)");
}

TEST_CASE("id lists take any 64-bit integer >= 0 in both forms, and a huge token id is outside the vocabulary", "[request_file]") {
  TraceDir d;
  // Mooncake-style traces carry 64-bit block hashes.
  Result<Scenario> file = d.load("{\"prompt_len\": 20, \"prompt_hash_block_size\": 16, \"prompt_hash_ids\": [9223372036854775807, 4294967296]}\n");
  if (!file) FAIL(file.error().format());
  Result<Scenario> inline_form = load_scenario_text(
      "version: 1\nrequests:\n  - {id: a, prompt_len: 20, prompt_hash_block_size: 16, "
      "prompt_hash_ids: [9223372036854775807, 4294967296]}\n",
      "t.yaml");
  if (!inline_form) FAIL(inline_form.error().format());
  CHECK(inline_form.value().requests[0].prompt_hash_ids ==
        std::vector<std::uint64_t>{9223372036854775807ULL, 4294967296ULL});

  Result<Scenario> bad_file = d.load("{\"prompt\": [5, 3000000000]}\n");
  REQUIRE_FALSE(bad_file.ok());
  CHECK(bad_file.error().key_path == "requests_file[0].prompt[1]");
  CHECK(bad_file.error().message == "token id 3000000000 is outside the vocabulary (vocab_size 512)");
  Result<Scenario> bad_inline = load_scenario_text("version: 1\nrequests:\n  - {id: a, prompt: [5, 3000000000]}\n", "t.yaml");
  REQUIRE_FALSE(bad_inline.ok());
  CHECK(bad_inline.error().key_path == "requests[0].prompt[1]");
  CHECK(bad_inline.error().message == bad_file.error().message);
}
