// JSONL request file reading and checking.
#include "scenario/request_file.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <functional>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "base/file_read.h"
#include "sim/request.h"
#include "scenario/request_reader.h"
#include "config/request_tokens.h"
#include "sim/scheduler.h"
#include "config/seeded_tokens.h"

namespace mlasim {
namespace {

bool parse_integer(std::string_view text, long long& out) {
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && p == text.data() + text.size();
}

// What the line's fields throw on the first problem; read_line returns it.
struct LineError {
  Error error;
};

// A requests_file line's fields: one flat JSON object, every value with its column.
class JsonRequestFields final : public RequestFields {
 public:
  using MakeError = std::function<Error(int column, const std::string& key, std::string message, std::string hint)>;
  JsonRequestFields(const JsonLineParser& parser, std::string path, MakeError error)
      : parser_(parser), p_(std::move(path)), error_(std::move(error)) {}

  bool has(const char* key) const override { return parser_.find(key) != nullptr; }
  std::string read_string(const char* key) const override {
    const JsonLineValue& v = at(key);
    if (v.kind != JsonLineValue::Kind::kString) throw_at(v.column, path(key), "expected a string");
    return v.text;
  }
  long long read_int(const char* key, long long lo, long long hi) const override {
    const JsonLineValue& v = at(key);
    long long out = 0;
    if (v.kind != JsonLineValue::Kind::kNumber || !parse_integer(v.number, out))
      throw_at(v.column, path(key), "expected an integer", "write a whole number without a decimal point");
    if (out < lo || out > hi)
      throw_at(v.column, path(key),
               std::to_string(out) + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return out;
  }
  double read_seconds(const char* key) const override {
    const JsonLineValue& v = at(key);
    if (v.kind != JsonLineValue::Kind::kNumber) throw_at(v.column, path(key), "expected a number of seconds");
    double seconds = 0;
    const auto [ptr, ec] = std::from_chars(v.number.data(), v.number.data() + v.number.size(), seconds);
    if (ec != std::errc() || !std::isfinite(seconds) || seconds < 0)
      throw_at(v.column, path(key), "expected seconds in [0, 1e9]");
    return seconds;
  }
  bool read_bool(const char* key) const override {
    const JsonLineValue& v = at(key);
    if (v.kind != JsonLineValue::Kind::kBool) throw_at(v.column, path(key), "expected true or false");
    return v.boolean;
  }
  std::vector<long long> read_int_list(const char* key, long long lo, long long hi) const override {
    const JsonLineValue& v = at(key);
    if (v.kind != JsonLineValue::Kind::kNumberArray) throw_at(v.column, path(key), "expected a list of integers");
    std::vector<long long> out;
    out.reserve(v.items.size());
    for (std::size_t i = 0; i < v.items.size(); ++i) {
      long long x = 0;
      if (!parse_integer(v.items[i], x) || x < lo || x > hi)
        throw_at(v.item_columns[i], item_path(key, i),
                 lo == 0 ? "expected a non-negative integer" : "expected an integer in [" + std::to_string(lo) + ", " +
                                                                  std::to_string(hi) + "]");
      out.push_back(x);
    }
    return out;
  }
  [[noreturn]] void fail(At at, const char* key, std::string message, std::string hint) const override {
    if (at == At::kRequest) throw_at(1, p_, std::move(message), std::move(hint));
    const JsonLineValue& v = this->at(key);
    throw_at(at == At::kKey ? v.key_column : v.column, path(key), std::move(message), std::move(hint));
  }
  [[noreturn]] void fail_item(const char* key, std::size_t item, std::string message, std::string hint) const override {
    throw_at(at(key).item_columns[item], item_path(key, item), std::move(message), std::move(hint));
  }

 private:
  const JsonLineValue& at(const char* key) const { return *parser_.find(key); }
  std::string path(const char* key) const { return p_ + "." + key; }
  std::string item_path(const char* key, std::size_t i) const { return path(key) + "[" + std::to_string(i) + "]"; }
  [[noreturn]] void throw_at(int column, const std::string& key, std::string message, std::string hint = {}) const {
    throw LineError{error_(column, key, std::move(message), std::move(hint))};
  }

  const JsonLineParser& parser_;
  std::string p_;
  MakeError error_;
};

}  // namespace

RequestFileReader::RequestFileReader(const Scenario& scenario) : s_(scenario), display_(scenario.requests_file) {
  in_.open(scenario.requests_file, std::ios::binary);
}

Error RequestFileReader::error(int column, const std::string& key, std::string message, std::string hint) const {
  Error e;
  e.file = display_;
  e.line = line_no_;
  e.column = column;
  e.key_path = key;
  e.message = std::move(message);
  e.hint = std::move(hint);
  return e;
}

Result<bool> RequestFileReader::next(RequestSpec& out) {
  if (!in_.is_open()) {
    Error e;
    e.file = display_;
    e.message = "cannot read the requests file";
    e.hint = "requests_file is relative to the scenario file; check the path and its permissions";
    return e;
  }
  bool too_long = false;
  while (getline_bounded(in_, line_, kMaxRequestLineBytes, too_long)) {
    ++line_no_;
    if (line_.find_first_not_of(" \t\r") == std::string::npos) continue;
    return read_line(out);
  }
  if (too_long) {
    ++line_no_;
    return error(1, "", "the line is longer than mlasim reads (" + format_bytes(static_cast<double>(kMaxRequestLineBytes)) + ")",
                 "one request per line; is this the file you meant? (a device or a stream does not end)");
  }
  if (in_.bad()) return error(0, "", "reading the file failed");
  return false;
}

Result<bool> RequestFileReader::read_line(RequestSpec& req) {
  if (!line_.empty() && line_.back() == '\r') line_.pop_back();
  if (!parser_.parse(line_))
    return error(parser_.error_column(), "", "not a JSON object: " + parser_.error_message(),
                 "one request per line as a JSON object, e.g. {\"prompt_len\": 12, \"max_tokens\": 4}");
  const std::vector<std::string>& keys = request_keys();
  for (const JsonLineValue& v : parser_.fields())
    if (std::find(keys.begin(), keys.end(), v.key) == keys.end())
      return error(v.key_column, v.key, "unknown key \"" + v.key + "\"",
                   "a request takes the keys of requests[] in scenarios/README.md");
  ++index_;
  const std::string p = "requests_file[" + std::to_string(index_) + "]";
  const JsonLineValue* id = parser_.find("id");
  if (has_ids_ == -1) has_ids_ = id != nullptr;
  if ((id != nullptr) != (has_ids_ == 1))
    return error(id ? id->key_column : 1, p + ".id",
                 has_ids_ ? "missing `id`: the file's first request has one" : "an `id` where the first request has none",
                 "give an id on every line, or on none (requests are then named r0, r1, ...)");
  try {
    req = read_request(JsonRequestFields(parser_, p,
                                         [this](int column, const std::string& key, std::string message, std::string hint) {
                                           return error(column, key, std::move(message), std::move(hint));
                                         }),
                       s_, "r" + std::to_string(index_));
  } catch (const LineError& e) {
    return e.error;
  }
  if (std::optional<Error> e = check_arrival_order(req, p)) return *e;
  // Outputs past the listed ones continue from the request's seeded stream (Request::forced_output_token
  // gives the same ids seed_outputs would list), so none are stored.
  const Request request = make_request(req, s_.model, static_cast<ReqId>(index_));
  if (std::string problem = check_request(request, s_.scheduler, s_.scheduler.max_model_len); !problem.empty())
    return error(1, p, problem, check_request_hint(problem));
  return true;
}

// A file's requests all arrive by step or all by time, in arrival order.
std::optional<Error> RequestFileReader::check_arrival_order(const RequestSpec& req, const std::string& p) {
  const JsonLineValue* step = parser_.find("arrival_step");
  const JsonLineValue* time = parser_.find("arrival_time");
  const JsonLineValue* arrival_node = step ? step : time;
  const std::int64_t arrival = time ? *req.arrival_time_ns : req.arrival_step;
  auto key = [&](const JsonLineValue& v) { return p + "." + v.key; };
  if (arrival_node) {
    const int timed = time != nullptr;
    if (timed_ == -1) timed_ = timed;
    if (timed != timed_)
      return error(arrival_node->key_column, key(*arrival_node),
                   timed_ ? "arrival_step in a file whose requests arrive by arrival_time"
                          : "arrival_time in a file whose requests arrive by arrival_step",
                   "a scenario's requests all use arrival_time or all use arrival_step");
  } else if (timed_ == 1) {
    return error(1, p + ".arrival_time", "missing arrival_time", "every request of a timed trace has arrival_time");
  }
  if (arrival < last_arrival_)
    return error(arrival_node ? arrival_node->column : 1, arrival_node ? key(*arrival_node) : p,
                 "arrives before the request on line " + std::to_string(last_arrival_line_),
                 "a requests_file lists requests in arrival order (non-decreasing arrival_step or arrival_time)");
  last_arrival_ = arrival;
  last_arrival_line_ = line_no_;
  return std::nullopt;
}

}  // namespace mlasim

namespace mlasim {
namespace {

// Request ids the expect block names, with where the first mention is written.
std::vector<std::pair<std::string, std::pair<int, int>>> expected_ids(const Scenario& s) {
  std::vector<std::pair<std::string, std::pair<int, int>>> out;
  std::unordered_set<std::string> seen;
  auto add = [&](const std::string& id, int line, int col) {
    if (seen.insert(id).second) out.push_back({id, {line, col}});
  };
  for (const StepExpectation& e : s.expect.steps) {
    for (const auto* list : {&e.new_reqs, &e.resumed, &e.preempted, &e.finished, &e.order})
      if (*list)
        for (const std::string& id : **list) add(id, e.line, e.column);
    if (e.num_scheduled_tokens)
      for (const auto& [id, q] : *e.num_scheduled_tokens) add(id, e.line, e.column);
    if (e.new_block_ids)
      for (const auto& [id, b] : *e.new_block_ids) add(id, e.line, e.column);
  }
  for (const RequestExpectation& e : s.expect.requests) add(e.id, e.line, e.column);
  return out;
}

}  // namespace

Status scan_requests_file(Scenario& scenario) {
  auto wanted = expected_ids(scenario);
  std::vector<bool> found(wanted.size(), false);
  std::unordered_map<std::string, std::size_t> wanted_index;
  for (std::size_t i = 0; i < wanted.size(); ++i) wanted_index.emplace(wanted[i].first, i);
  std::vector<std::uint64_t> hashes;
  RequestFileReader reader(scenario);
  RequestSpec spec;
  int count = 0;
  bool timed = false;
  while (true) {
    Result<bool> got = reader.next(spec);
    if (!got) return got.error();
    if (!got.value()) break;
    ++count;
    timed = timed || spec.arrival_time_ns.has_value();
    if (reader.has_ids()) hashes.push_back(stable_hash(spec.id));
    if (auto it = wanted_index.find(spec.id); it != wanted_index.end()) found[it->second] = true;
  }
  if (count == 0) {
    Error e;
    e.file = scenario.requests_file;
    e.message = "the requests file holds no request";
    e.hint = "a scenario needs at least one request: one JSON object per line";
    return e;
  }
  for (std::size_t i = 0; i < wanted.size(); ++i)
    if (!found[i]) {
      Error e;
      e.file = scenario.source;
      e.line = wanted[i].second.first;
      e.column = wanted[i].second.second;
      e.key_path = "expect";
      e.message = "unknown request id \"" + wanted[i].first + "\"";
      e.hint = "ids here must name a request of " + scenario.requests_file;
      return e;
    }
  std::sort(hashes.begin(), hashes.end());
  if (std::adjacent_find(hashes.begin(), hashes.end()) != hashes.end()) {
    // A repeated hash: find the lines (a second pass) and tell a real duplicate from a collision.
    std::vector<std::uint64_t> repeated;
    for (std::size_t i = 1; i < hashes.size(); ++i)
      if (hashes[i] == hashes[i - 1]) repeated.push_back(hashes[i]);
    std::vector<std::pair<std::string, int>> seen;  // id, line
    RequestFileReader again(scenario);
    while (true) {
      Result<bool> got = again.next(spec);
      if (!got) return got.error();
      if (!got.value()) break;
      if (!std::binary_search(repeated.begin(), repeated.end(), stable_hash(spec.id))) continue;
      for (const auto& [id, line] : seen)
        if (id == spec.id) {
          Error e;
          e.file = scenario.requests_file;
          e.line = again.line();
          e.column = 1;
          e.key_path = "requests_file[" + std::to_string(again.index()) + "].id";
          e.message = "duplicate request id \"" + spec.id + "\"";
          e.hint = "first used on line " + std::to_string(line) + "; request ids must be unique";
          return e;
        }
      seen.emplace_back(spec.id, again.line());
    }
  }
  scenario.num_requests = count;
  scenario.timed_arrivals = timed;
  return Status::Ok();
}

}  // namespace mlasim
