// JSONL request file reading and checking.
#include "sim/request_file.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <unordered_map>
#include <unordered_set>

#include "base/file_read.h"
#include "sim/request.h"
#include "sim/request_tokens.h"
#include "sim/scheduler.h"
#include "sim/seeded_tokens.h"

namespace mlasim {
namespace {

constexpr const char* kKeys[] = {"id",         "arrival_step",   "arrival_time", "prompt",   "prompt_len",
                                 "prompt_hash_ids", "prompt_hash_block_size", "max_tokens", "min_tokens",
                                 "ignore_eos", "stop_token_ids", "output",       "priority", "accepted_drafts"};

bool parse_integer(std::string_view text, long long& out) {
  const auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && p == text.data() + text.size();
}

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
  for (const JsonLineValue& v : parser_.fields())
    if (std::find_if(std::begin(kKeys), std::end(kKeys), [&](const char* k) { return v.key == k; }) == std::end(kKeys))
      return error(v.key_column, v.key, "unknown key \"" + v.key + "\"",
                   "a request takes the keys of requests[] in scenarios/README.md");
  ++index_;
  const std::string p = "requests_file[" + std::to_string(index_) + "]";
  auto key = [&](const JsonLineValue& v) { return p + "." + v.key; };
  const int vocab = s_.model.vocab_size;
  auto read_int = [&](const JsonLineValue& v, long long lo, long long hi, long long& out) -> std::optional<Error> {
    if (v.kind != JsonLineValue::Kind::kNumber || !parse_integer(v.number, out))
      return error(v.column, key(v), "expected an integer", "write a whole number without a decimal point");
    if (out < lo || out > hi)
      return error(v.column, key(v), std::to_string(out) + " is out of range [" + std::to_string(lo) + ", " +
                                         std::to_string(hi) + "]");
    return std::nullopt;
  };
  auto read_list = [&](const JsonLineValue& v, bool tokens, std::vector<long long>& out) -> std::optional<Error> {
    if (v.kind != JsonLineValue::Kind::kNumberArray) return error(v.column, key(v), "expected a list of integers");
    out.clear();
    for (std::size_t i = 0; i < v.items.size(); ++i) {
      long long x = 0;
      const std::string k = key(v) + "[" + std::to_string(i) + "]";
      if (!parse_integer(v.items[i], x) || x < 0)
        return error(v.item_columns[i], k, "expected a non-negative integer");
      if (tokens && x >= vocab)
        return error(v.item_columns[i], k,
                     "token id " + std::to_string(x) + " is outside the vocabulary (vocab_size " +
                         std::to_string(vocab) + ")",
                     "token ids must be in [0, vocab_size); raise model.vocab_size or fix the id");
      out.push_back(x);
    }
    return std::nullopt;
  };
  auto to_ints = [](const std::vector<long long>& v) { return std::vector<int>(v.begin(), v.end()); };

  req = RequestSpec{};
  const JsonLineValue* id = parser_.find("id");
  if (has_ids_ == -1) has_ids_ = id != nullptr;
  if ((id != nullptr) != (has_ids_ == 1))
    return error(id ? id->key_column : 1, p + ".id",
                 has_ids_ ? "missing `id`: the file's first request has one" : "an `id` where the first request has none",
                 "give an id on every line, or on none (requests are then named r0, r1, ...)");
  if (id) {
    if (id->kind != JsonLineValue::Kind::kString) return error(id->column, p + ".id", "expected a string");
    req.id = id->text;
    if (req.id.empty()) return error(id->column, p + ".id", "must not be empty");
    for (unsigned char c : req.id)
      if (c < 0x20 || c == 0x7f)
        return error(id->column, p + ".id", "contains a control character",
                     "split goldens list rows one step per line: write the id without control characters");
  } else {
    req.id = "r" + std::to_string(index_);
  }
  long long x = 0;
  const JsonLineValue* step = parser_.find("arrival_step");
  const JsonLineValue* time = parser_.find("arrival_time");
  if (step && time)
    return error(time->key_column, p + ".arrival_time", "both arrival_step and arrival_time",
                 "a request arrives at a step or at a time, not both");
  std::int64_t arrival = 0;
  const JsonLineValue* arrival_node = step ? step : time;
  if (step) {
    if (auto e = read_int(*step, 0, 1LL << 30, x)) return *e;
    req.arrival_step = static_cast<int>(x);
    arrival = x;
  }
  if (time) {
    double seconds = 0;
    if (time->kind != JsonLineValue::Kind::kNumber)
      return error(time->column, p + ".arrival_time", "expected a number of seconds");
    const auto [ptr, ec] = std::from_chars(time->number.data(), time->number.data() + time->number.size(), seconds);
    if (ec != std::errc() || !std::isfinite(seconds) || seconds < 0 || seconds > 1e9)
      return error(time->column, p + ".arrival_time", "expected seconds in [0, 1e9]");
    arrival = std::llround(seconds * 1e9);
    req.arrival_time_ns = arrival;
  }
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

  std::vector<long long> list;
  const JsonLineValue* prompt = parser_.find("prompt");
  const JsonLineValue* prompt_len = parser_.find("prompt_len");
  const JsonLineValue* hash_ids = parser_.find("prompt_hash_ids");
  const JsonLineValue* hash_block = parser_.find("prompt_hash_block_size");
  if (prompt) {
    if (auto e = read_list(*prompt, true, list)) return *e;
    if (list.empty()) return error(prompt->column, key(*prompt), "must not be empty", "a prompt has at least one token");
    req.prompt = to_ints(list);
  }
  if (!prompt && !prompt_len)
    return error(1, p, "missing `prompt` or `prompt_len`", "give the prompt's token ids, or its length for seeded ids");
  if ((hash_ids || hash_block) && (prompt || !prompt_len)) {
    const JsonLineValue* v = hash_ids ? hash_ids : hash_block;
    return error(v->key_column, key(*v), "prompt_hash_ids seeds a prompt given by prompt_len",
                 "give prompt_len (and no prompt) with prompt_hash_ids");
  }
  if (hash_block && !hash_ids)
    return error(hash_block->key_column, key(*hash_block), "prompt_hash_block_size without prompt_hash_ids");
  if (prompt_len) {
    if (auto e = read_int(*prompt_len, 1, (1LL << 31) - 1, x)) return *e;
    const int len = static_cast<int>(x);
    if (prompt && len != static_cast<int>(req.prompt.size()))
      return error(prompt_len->column, key(*prompt_len),
                   "prompt_len " + std::to_string(len) + " disagrees with the prompt's " +
                       std::to_string(req.prompt.size()) + " tokens",
                   "give either `prompt` or `prompt_len`, or make them agree");
    if (len >= s_.scheduler.max_model_len)
      return error(prompt_len->column, key(*prompt_len),
                   "prompt of " + std::to_string(len) + " tokens does not fit max_model_len " +
                       std::to_string(s_.scheduler.max_model_len),
                   "a prompt must leave room for at least one output token");
    if (!prompt) {
      int block = kDefaultPromptHashBlockSize;
      std::vector<std::uint64_t> ids;
      if (hash_block) {
        if (auto e = read_int(*hash_block, 1, 1LL << 20, x)) return *e;
        block = static_cast<int>(x);
      }
      if (hash_ids) {
        if (auto e = read_list(*hash_ids, false, list)) return *e;
        const std::size_t want = static_cast<std::size_t>((len + block - 1) / block);
        if (list.size() != want)
          return error(hash_ids->column, key(*hash_ids),
                       std::to_string(list.size()) + " hash ids for a prompt of " + std::to_string(len) +
                           " tokens in blocks of " + std::to_string(block) + " (needs " + std::to_string(want) + ")",
                       "one hash id per prompt block: ceil(prompt_len / prompt_hash_block_size)");
        ids.assign(list.begin(), list.end());
      }
      req.seeded_prompt_len = len;
      req.prompt_hash_ids = std::move(ids);
      req.prompt_hash_block_size = block;
    }
  } else if (static_cast<int>(req.prompt.size()) >= s_.scheduler.max_model_len) {
    return error(prompt->column, key(*prompt),
                 "prompt of " + std::to_string(req.prompt.size()) + " tokens does not fit max_model_len " +
                     std::to_string(s_.scheduler.max_model_len),
                 "a prompt must leave room for at least one output token");
  }
  if (const JsonLineValue* v = parser_.find("max_tokens")) {
    if (auto e = read_int(*v, 1, 1LL << 30, x)) return *e;
    req.max_tokens = static_cast<int>(x);
  }
  if (const JsonLineValue* v = parser_.find("min_tokens")) {
    if (auto e = read_int(*v, 0, 1LL << 30, x)) return *e;
    req.min_tokens = static_cast<int>(x);
    if (req.min_tokens > req.max_tokens)
      return error(v->column, key(*v),
                   "min_tokens " + std::to_string(req.min_tokens) + " exceeds max_tokens " +
                       std::to_string(req.max_tokens),
                   "lower min_tokens or raise max_tokens");
  }
  if (const JsonLineValue* v = parser_.find("ignore_eos")) {
    if (v->kind != JsonLineValue::Kind::kBool) return error(v->column, key(*v), "expected true or false");
    req.ignore_eos = v->boolean;
  }
  if (const JsonLineValue* v = parser_.find("stop_token_ids")) {
    if (auto e = read_list(*v, true, list)) return *e;
    req.stop_token_ids = to_ints(list);
  }
  if (const JsonLineValue* v = parser_.find("output")) {
    if (auto e = read_list(*v, true, list)) return *e;
    req.output = to_ints(list);
    req.output_given = true;
    const std::size_t n = std::min(req.output.size(), static_cast<std::size_t>(req.min_tokens));
    for (std::size_t j = 0; j < n; ++j) {
      const int tok = req.output[j];
      const bool eos = tok == s_.model.eos_token_id;
      if (!eos && std::find(req.stop_token_ids.begin(), req.stop_token_ids.end(), tok) == req.stop_token_ids.end())
        continue;
      return error(v->item_columns[j], key(*v) + "[" + std::to_string(j) + "]",
                   "output[" + std::to_string(j) + "] is " + (eos ? "EOS" : "stop token") + " " + std::to_string(tok) +
                       " before min_tokens " + std::to_string(req.min_tokens),
                   "no engine samples EOS or a stop id before min_tokens: move it to index >= min_tokens or lower "
                   "min_tokens");
    }
  }
  if (const JsonLineValue* v = parser_.find("priority")) {
    if (auto e = read_int(*v, -(1LL << 31) + 1, (1LL << 31) - 1, x)) return *e;
    req.priority = static_cast<int>(x);
  }
  if (const JsonLineValue* v = parser_.find("accepted_drafts")) {
    const int k = s_.scheduler.num_speculative_tokens;
    if (k == 0)
      return error(v->key_column, key(*v), "given without speculative decoding",
                   "set scheduler.num_speculative_tokens > 0, or drop accepted_drafts");
    if (auto e = read_list(*v, false, list)) return *e;
    for (std::size_t j = 0; j < list.size(); ++j)
      if (list[j] > k)
        return error(v->item_columns[j], key(*v) + "[" + std::to_string(j) + "]",
                     std::to_string(list[j]) + " accepted drafts, but only " + std::to_string(k) +
                         " are proposed per step",
                     "each entry is between 0 and scheduler.num_speculative_tokens");
    req.accepted_drafts = to_ints(list);
  }
  // Outputs past the listed ones continue from the request's seeded stream (Request::forced_output_token
  // gives the same ids seed_outputs would list), so none are stored.
  const Request request = make_request(req, s_.model, static_cast<ReqId>(index_));
  if (std::string problem = check_request(request, s_.scheduler, s_.scheduler.max_model_len); !problem.empty())
    return error(1, p, problem,
                 "shorten the prompt, lower max_tokens/min_tokens, or raise scheduler.num_gpu_blocks or max_model_len");
  return true;
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
