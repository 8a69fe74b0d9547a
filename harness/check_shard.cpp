// Parsing and applying a shard of the scenario list.
#include "harness/check_shard.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>

namespace mlasim {
namespace {

// A whole number >= 0 that fits an int, with nothing before or after it.
std::optional<int> parse_count(const std::string& text) {
  int v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || text[0] == '-' || ec != std::errc() || ptr != end) return std::nullopt;
  return v;
}

Error shard_error(const std::string& file, const std::string& key, const std::string& message, const std::string& hint) {
  Error e;
  e.file = file;
  e.key_path = key;
  e.message = message;
  e.hint = hint;
  return e;
}

}  // namespace

Result<Shard> parse_shard(const std::string& text) {
  const char* hint = "--shard I/N runs the scenarios whose index i has i % N == I, e.g. --shard 0/4 ... --shard 3/4";
  const std::size_t slash = text.find('/');
  std::optional<int> index = slash == std::string::npos ? std::nullopt : parse_count(text.substr(0, slash));
  std::optional<int> total = slash == std::string::npos ? std::nullopt : parse_count(text.substr(slash + 1));
  if (!index || !total)
    return shard_error("<command line>", "--shard", "\"" + text + "\" is not I/N (two whole numbers)", hint);
  if (*total == 0) return shard_error("<command line>", "--shard", "\"" + text + "\": the shard count N is 0", hint);
  if (*index >= *total)
    return shard_error("<command line>", "--shard",
                       "\"" + text + "\": the shard index " + std::to_string(*index) + " is not below the shard count " +
                           std::to_string(*total),
                       "shards are numbered from 0: --shard 0/" + std::to_string(*total) + " ... --shard " +
                           std::to_string(*total - 1) + "/" + std::to_string(*total));
  return Shard{*index, *total};
}

Result<std::optional<Shard>> shard_from_env(const char* index, const char* total) {
  if (!index && !total) return std::optional<Shard>();
  const char* both = "set both GTEST_SHARD_INDEX and GTEST_TOTAL_SHARDS, or neither";
  if (!total)
    return shard_error("<environment>", "GTEST_TOTAL_SHARDS",
                       std::string("not set, but GTEST_SHARD_INDEX is (\"") + index + "\")", both);
  if (!index)
    return shard_error("<environment>", "GTEST_SHARD_INDEX",
                       std::string("not set, but GTEST_TOTAL_SHARDS is (\"") + total + "\")", both);
  std::optional<int> i = parse_count(index);
  if (!i)
    return shard_error("<environment>", "GTEST_SHARD_INDEX", std::string("\"") + index + "\" is not a whole number >= 0",
                       "GTEST_SHARD_INDEX is this shard's number, from 0 to GTEST_TOTAL_SHARDS - 1");
  std::optional<int> n = parse_count(total);
  if (!n || *n == 0)
    return shard_error("<environment>", "GTEST_TOTAL_SHARDS", std::string("\"") + total + "\" is not a whole number >= 1",
                       "GTEST_TOTAL_SHARDS is the number of shards the suite is split into");
  if (*i >= *n)
    return shard_error("<environment>", "GTEST_SHARD_INDEX",
                       std::string("\"") + index + "\" is not below GTEST_TOTAL_SHARDS (\"" + total + "\")",
                       "GTEST_SHARD_INDEX runs from 0 to GTEST_TOTAL_SHARDS - 1");
  return std::optional<Shard>(Shard{*i, *n});
}

std::vector<std::size_t> shard_indices(std::size_t count, const Shard& shard) {
  std::vector<std::size_t> out;
  for (std::size_t i = static_cast<std::size_t>(shard.index); i < count; i += static_cast<std::size_t>(shard.total))
    out.push_back(i);
  return out;
}

Status touch_shard_status_file(const std::string& path) {
  std::ofstream f(path, std::ios::app);
  if (f) return Status::Ok();
  return shard_error(path, "", std::string("cannot create GTEST_SHARD_STATUS_FILE: ") + std::strerror(errno),
                     "GTEST_SHARD_STATUS_FILE must name a file in a writable, existing directory");
}

}  // namespace mlasim
