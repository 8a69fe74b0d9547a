// The pictures of a replay: the timeline grid (exact cell states, aggregation past 200 steps and
// 64 requests, lane order), its SVG (cells, the misrouted cell's class and title), and the
// Trace Event JSON (required fields, counters, streaming).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "scenario/scenario_loader.h"
#include "engine/engine.h"
#include "base/formats/json_value.h"
#include "output/timeline.h"
#include "output/timeline_svg.h"
#include "output/trace_event_sink.h"
#include "output/xml_text.h"

using namespace mlasim;
namespace fs = std::filesystem;

namespace {

Scenario load_file(const std::string& rel, const std::vector<std::string>& sets = {}) {
  const std::string path = rel.front() == '/' ? rel : std::string(MLASIM_SOURCE_DIR) + "/" + rel;
  Result<Scenario> r = load_scenario_file(path, sets);
  if (!r) FAIL(r.error().format());
  return r.value();
}

Scenario load_text(const std::string& text) {
  Result<Scenario> r = load_scenario_text(text, "t.yaml");
  if (!r) FAIL(r.error().format());
  return r.value();
}

void dry_run(const Scenario& s, const std::vector<StepSink*>& sinks) {
  Engine engine(s);
  for (StepSink* sink : sinks) engine.add_sink(sink);
  engine.run_to_end();
}

// The lanes' states, one string per lane in drawing order: "label:state,state,...".
std::vector<std::string> grid(const Timeline& t) {
  std::vector<std::string> out;
  for (int lane : t.lane_order()) {
    std::string row = t.lanes()[static_cast<std::size_t>(lane)].label + ":";
    for (std::size_t c = 0; c < t.columns().size(); ++c)
      row += std::string(c ? "," : "") + to_string(t.cell(lane, static_cast<int>(c)).state());
    out.push_back(row);
  }
  return out;
}

int total_count(const TimelineCell& cell) {
  int n = 0;
  for (int k : cell.count) n += k;
  return n;
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

std::string tmp_path(const std::string& name) {
  return (fs::temp_directory_path() / ("mlasim_timeline_" + std::to_string(::getpid()) + "_" + name)).string();
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Many short requests, all at step 0: prompt_len 2, max_tokens 1.
std::string many_requests_yaml(int n) {
  std::string y =
      "version: 1\nscheduler: {max_num_batched_tokens: 64, max_num_seqs: 8, max_model_len: 64}\n"
      "engine: {reorder_batch_threshold: 1}\nrequests:\n";
  for (int i = 0; i < n; ++i) y += "  - {id: r" + std::to_string(i) + ", prompt_len: 2, max_tokens: 1}\n";
  return y;
}

}  // namespace

TEST_CASE("timeline cells follow each request: paths, preemption, finished", "[timeline]") {
  const Scenario s = load_file("scenarios/scheduler/preemption_fcfs.yaml", {"engine.model_runner=v1"});  // V1's row order
  Timeline t(s, "title");
  dry_run(s, {&t});
  CHECK(t.steps_per_column() == 1);
  CHECK(t.requests_per_lane() == 1);
  CHECK(t.num_steps() == 5);
  // flashattn-mla's threshold 512 puts both fresh prompts on the decode path at step 0; b is
  // preempted at step 2 (when a finishes) and resumes at step 3.
  CHECK(grid(t) == std::vector<std::string>{
                       "a:fresh-on-decode,decode,decode,finished,finished",
                       "b:fresh-on-decode,decode,preempted,decode,decode",
                   });
  const TimelineCell& b0 = t.cell(1, 0);
  CHECK(b0.q == 21);
  CHECK(b0.nct == 0);
  CHECK(b0.prompt_len == 80);
  REQUIRE(b0.reason >= 0);
  CHECK(t.reasons()[static_cast<std::size_t>(b0.reason)].find("max query length 79 <= threshold 512") != std::string::npos);
  CHECK(t.columns()[0].num_mqa == 100);
  CHECK(t.columns()[0].num_fresh_on_decode == 2);
  CHECK(t.columns()[1].min_free_blocks == 0);
  CHECK(t.num_blocks() == 10);
}

TEST_CASE("timeline lanes follow the batch rows, waiting before a request is first scheduled", "[timeline]") {
  // b is listed second but arrives first; c arrives at step 1 and waits behind max_num_seqs 1.
  const Scenario s = load_text(
      "version: 1\nscheduler: {max_num_seqs: 1}\nengine: {reorder_batch_threshold: 1}\nrequests:\n"
      "  - {id: a, prompt_len: 4, max_tokens: 1, arrival_step: 1}\n"
      "  - {id: b, prompt_len: 4, max_tokens: 2}\n"
      "  - {id: c, prompt_len: 4, max_tokens: 1, arrival_step: 1}\n");
  Timeline t(s);
  dry_run(s, {&t});
  CHECK(grid(t) == std::vector<std::string>{
                       "b:prefill,decode,finished,finished",
                       "a:none,waiting,prefill,finished",
                       "c:none,waiting,waiting,prefill",
                   });
}

TEST_CASE("timeline aggregates past 200 steps: columns of 2^k steps keep every count", "[timeline]") {
  const Scenario s = load_file("scenarios/seed/lone_one_token_prompt.yaml",
                               {"requests.0.max_tokens=450"});
  Timeline t(s);
  dry_run(s, {&t});
  CHECK(t.num_steps() == 450);
  CHECK(t.steps_per_column() == 4);  // 450 > 200 and 225 > 200; 113 columns of 4
  REQUIRE(t.columns().size() == 113);
  CHECK(t.columns()[0].first_step == 0);
  CHECK(t.columns()[0].last_step == 3);
  CHECK(t.columns().back().first_step == 448);
  CHECK(t.columns().back().num_steps == 2);
  const TimelineCell& first = t.cell(0, 0);
  CHECK(first.count[static_cast<std::size_t>(CellState::kFreshOnDecode)] == 1);
  CHECK(first.count[static_cast<std::size_t>(CellState::kDecode)] == 3);
  CHECK(first.state() == CellState::kFreshOnDecode);  // the misrouting is never hidden
  CHECK(t.cell(0, 1).state() == CellState::kDecode);
  std::int64_t mqa = 0;
  int cells = 0;
  for (std::size_t c = 0; c < t.columns().size(); ++c) {
    mqa += t.columns()[c].num_mqa;
    cells += total_count(t.cell(0, static_cast<int>(c)));
  }
  CHECK(mqa == 450);
  CHECK(cells == 450);
  const std::string svg = render_timeline_svg({&t});
  CHECK(count_of(svg, "<rect class=\"cell ") == 113);
  CHECK(svg.find("a column is 4 steps, a lane 1 requests") != std::string::npos);
}

TEST_CASE("timeline groups requests past 64 lanes, every arrived request is in one state per step", "[timeline]") {
  const Scenario s = load_text(many_requests_yaml(100));
  Timeline t(s);
  dry_run(s, {&t});
  CHECK(t.requests_per_lane() == 2);
  REQUIRE(t.lanes().size() == 50);
  CHECK(t.lanes()[1].label == "requests 2\u20133");
  CHECK(t.lane_order()[49] == 49);  // grouped lanes stay in scenario order
  REQUIRE(t.steps_per_column() == 1);
  for (std::size_t c = 0; c < t.columns().size(); ++c) {
    int n = 0;
    for (std::size_t l = 0; l < t.lanes().size(); ++l) n += total_count(t.cell(static_cast<int>(l), static_cast<int>(c)));
    INFO("column " << c);
    CHECK(n == 100);
  }
  // 8 rows a step (max_num_seqs), each request one step: lanes 0-3 run at step 0, 4-7 at step 1.
  CHECK(t.cell(0, 0).count[static_cast<std::size_t>(CellState::kPrefill)] == 2);
  CHECK(t.cell(4, 0).count[static_cast<std::size_t>(CellState::kWaiting)] == 2);
  CHECK(t.cell(4, 1).count[static_cast<std::size_t>(CellState::kPrefill)] == 2);
  CHECK(t.cell(0, 1).count[static_cast<std::size_t>(CellState::kFinished)] == 2);
}

TEST_CASE("timeline SVG: one cell per request-step, the misrouted cell marked with its title", "[timeline]") {
  const Scenario s = load_file("scenarios/seed/lone_one_token_prompt.yaml");
  Timeline t(s, "lone");
  dry_run(s, {&t});
  const std::string svg = render_timeline_svg({&t});
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(count_of(svg, "<rect class=\"cell ") == 3);
  CHECK(count_of(svg, "<rect class=\"cell fresh-on-decode\"") == 1);
  CHECK(count_of(svg, "<rect class=\"cell decode\"") == 2);
  const std::size_t at = svg.find("<rect class=\"cell fresh-on-decode\"");
  const std::size_t title = svg.find("<title>", at);
  CHECK(svg.substr(title, 400).rfind("<title>step 0 \u00b7 hello \u00b7 q=1 nct=0 P=1 \u00b7 path mqa \u00b7 decode path "
                                     "(absorbed MQA form): FRESH PREFILL ON THE DECODE PATH \u00b7 region 3 prefill",
                                     0) == 0);
  // Two profiles, one above the other.
  const std::string two = render_timeline_svg({&t, &t});
  CHECK(count_of(two, "<rect class=\"cell ") == 6);
  CHECK(count_of(two, "<g class=\"timeline\"") == 2);
}

TEST_CASE("timeline SVG escapes ids into well-formed text", "[timeline]") {
  const Scenario s = load_text("version: 1\nrequests:\n  - {id: \"a<&>\\\"'\", prompt_len: 1, max_tokens: 1}\n");
  Timeline t(s);
  dry_run(s, {&t});
  const std::string svg = render_timeline_svg({&t});
  CHECK(svg.find(">a&lt;&amp;&gt;&quot;&#39;</text>") != std::string::npos);
  CHECK(svg.find("a<&") == std::string::npos);
  // What XML 1.0 cannot hold becomes U+FFFD: control characters, bad UTF-8, surrogates.
  CHECK(xml_escape("x\x01y") == "x\xEF\xBF\xBDy");
  CHECK(xml_escape("\xC3(") == "\xEF\xBF\xBD(");
  CHECK(xml_escape("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(xml_escape("caf\xC3\xA9 \xF0\x9F\x98\x80\t") == "caf\xC3\xA9 \xF0\x9F\x98\x80\t");
}

TEST_CASE("trace events carry the required fields, slices, instants and counters per step", "[timeline][trace]") {
  const Scenario s = load_file("scenarios/scheduler/preemption_fcfs.yaml", {"engine.model_runner=v1"});  // V1's row order
  const std::string path = tmp_path("trace.json");
  TraceEventSink trace(TraceClock::kStep);
  REQUIRE(trace.open(path, s.name).ok());
  dry_run(s, {&trace});
  REQUIRE(trace.commit().ok());
  Result<JsonValue> doc = parse_json(read_file(path), path);
  fs::remove(path);
  REQUIRE(doc.ok());
  const JsonValue* events = doc.value().find("traceEvents");
  REQUIRE(events);
  REQUIRE(events->is_array());
  int slices = 0, counters = 0, preempted = 0, finished = 0, names = 0;
  for (const JsonValue& e : events->array()) {
    for (const char* key : {"ph", "name"}) REQUIRE((e.find(key) && e.find(key)->is_string()));
    for (const char* key : {"ts", "pid", "tid"}) REQUIRE((e.find(key) && e.find(key)->is_number()));
    const std::string ph = e.find("ph")->string(), name = e.find("name")->string();
    if (ph == "X") {
      ++slices;
      REQUIRE((e.find("dur") && e.find("dur")->number() == 1000.0));
      const JsonValue* args = e.find("args");
      REQUIRE(args);
      for (const char* key : {"step", "q", "nct", "P"}) REQUIRE((args->find(key) && args->find(key)->is_number()));
      for (const char* key : {"path", "reason", "region"}) REQUIRE((args->find(key) && args->find(key)->is_string()));
    } else if (ph == "C") {
      ++counters;
      const JsonValue* args = e.find("args");
      REQUIRE((args && args->is_object() && !args->object().empty()));
      for (const auto& [k, v] : args->object()) CHECK(v.is_number());
    } else if (ph == "i") {
      (name == "preempted" ? preempted : finished)++;
    } else if (ph == "M" && name == "thread_name") {
      ++names;
    }
  }
  CHECK(slices == 7);        // a: steps 0-2, b: 0, 1, 3, 4
  CHECK(counters == 3 * 5);  // split tokens, requests, free KV blocks per step
  CHECK(preempted == 1);
  CHECK(finished == 2);
  CHECK(names == 2);
  // The first slice: a at step 0, time = step (1 ms per step).
  const JsonValue* first = nullptr;
  for (const JsonValue& e : events->array())
    if (e.find("ph")->string() == "X") {
      first = &e;
      break;
    }
  REQUIRE(first);
  CHECK(first->find("name")->string() == "FRESH PREFILL on the decode path (mqa)");
  CHECK(first->find("ts")->number() == 0.0);
  CHECK(first->find("args")->find("q")->number() == 79.0);
}

TEST_CASE("trace events stream to the file while the run goes, not at its end", "[timeline][trace]") {
  // 20,000 requests: the file's temporary grows past its 1 MiB write buffer mid-run.
  const int n = 20000;
  const std::string dir = tmp_path("stream");
  fs::create_directories(dir);
  {
    std::ofstream jsonl(dir + "/r.jsonl");
    for (int i = 0; i < n; ++i) jsonl << "{\"id\": \"r" << i << "\", \"prompt_len\": 2, \"max_tokens\": 2}\n";
    std::ofstream yaml(dir + "/s.yaml");
    yaml << "version: 1\nscheduler: {max_num_batched_tokens: 512, max_num_seqs: 256, max_model_len: 64}\n"
            "requests_file: r.jsonl\n";
  }
  const Scenario s = load_file(dir + "/s.yaml");
  const std::string path = dir + "/trace.json";
  TraceEventSink trace(TraceClock::kSimulated);
  REQUIRE(trace.open(path, s.name).ok());
  struct Probe final : StepSink {
    std::function<void(const StepRecord&)> f;
    void on_step(const StepRecord& step) override { f(step); }
  } probe;
  std::uintmax_t mid_run_bytes = 0;
  int steps = 0;
  probe.f = [&](const StepRecord&) {
    if (++steps != 100) return;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().filename().string().rfind("trace.json.tmp.", 0) == 0) mid_run_bytes = e.file_size();
  };
  Engine engine(s);
  engine.add_sink(&trace);
  engine.add_sink(&probe);
  engine.run_to_end();
  REQUIRE(trace.commit().ok());
  CHECK(mid_run_bytes > (1u << 20));
  const std::string text = read_file(path);
  CHECK(count_of(text, "\"name\": \"thread_name\"") == static_cast<std::size_t>(n));
  CHECK(count_of(text, "\"ph\": \"i\", \"name\": \"finished\"") == static_cast<std::size_t>(n));
  CHECK(text.substr(text.size() - 4) == "\n]}\n");
  fs::remove_all(dir);
}
