// The seeded mutator of the hostile-input tests (mutate_scenarios, mutate_commands): hostile
// numbers, lines deleted, duplicated or borrowed, fragments of syntax, bytes changed, truncation,
// indentation. Deterministic for a seed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <regex>
#include <string>
#include <vector>

namespace hostile {

namespace fs = std::filesystem;

inline std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t nl = text.find('\n', start);
    out.push_back(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return out;
}

inline std::string join(const std::vector<std::string>& lines) {
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) out += (i ? "\n" : "") + lines[i];
  return out;
}

// Values a hostile user would try where a number is expected.
const std::vector<std::string> kNumbers = {
    "0",   "-1",   "1",    "2",   "2147483647", "2147483648", "-2147483649", "9223372036854775807", "1e308",
    "-1e308", ".inf", "-.inf", ".nan", "1.5", "0x10", "1e-320", "4294967296", "65536", "16777217", "1073741825",
    "99999999999999999999", "''", "[]", "{}", "~", "!!str 16", "!!float 3", "&a 4", "*a"};
const std::vector<std::string> kFragments = {"---\n", "!!str ", "!!int ", "&x ", "*x", "{", "}", "[", "]", ":",
                                             ", ", "\t", "\"", "'", "#", "\xC3", "\x01", "- ", "? ", "|\n"};

class Mutator {
 public:
  Mutator(std::uint64_t seed, const std::vector<std::string>& corpus_lines) : rng_(seed), corpus_(corpus_lines) {}

  std::string mutate(std::string text) {
    const int n = 1 + static_cast<int>(pick(3));
    for (int i = 0; i < n; ++i) text = once(text);
    return text;
  }

 private:
  std::size_t pick(std::size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_); }

  std::string once(const std::string& text) {
    std::vector<std::string> lines = lines_of(text);
    switch (pick(8)) {
      case 0: {  // a number becomes a hostile value
        static const std::regex number(R"((-?[0-9]+(\.[0-9]+)?(e-?[0-9]+)?))");
        std::vector<std::pair<std::size_t, std::size_t>> spots;
        for (auto it = std::sregex_iterator(text.begin(), text.end(), number); it != std::sregex_iterator(); ++it)
          spots.emplace_back(static_cast<std::size_t>(it->position()), static_cast<std::size_t>(it->length()));
        if (spots.empty()) return text;
        const auto [at, len] = spots[pick(spots.size())];
        return text.substr(0, at) + kNumbers[pick(kNumbers.size())] + text.substr(at + len);
      }
      case 1:  // a line deleted
        if (!lines.empty()) lines.erase(lines.begin() + static_cast<long>(pick(lines.size())));
        return join(lines);
      case 2:  // a line duplicated
        if (!lines.empty()) {
          const std::size_t i = pick(lines.size());
          lines.insert(lines.begin() + static_cast<long>(i), lines[i]);
        }
        return join(lines);
      case 3:  // a line from another scenario
        lines.insert(lines.begin() + static_cast<long>(pick(lines.size() + 1)), corpus_[pick(corpus_.size())]);
        return join(lines);
      case 4: {  // a fragment of YAML syntax inserted
        const std::size_t at = pick(text.size() + 1);
        return text.substr(0, at) + kFragments[pick(kFragments.size())] + text.substr(at);
      }
      case 5: {  // a byte replaced, inserted or deleted
        if (text.empty()) return text;
        std::string out = text;
        const std::size_t at = pick(out.size());
        const char c = static_cast<char>(pick(256));
        const std::size_t how = pick(3);
        if (how == 0) out[at] = c;
        else if (how == 1) out.insert(out.begin() + static_cast<long>(at), c);
        else out.erase(at, 1);
        return out;
      }
      case 6:  // truncated
        return text.substr(0, pick(text.size() + 1));
      default: {  // a line's indentation changed
        if (lines.empty()) return text;
        std::string& l = lines[pick(lines.size())];
        if (pick(2) == 0 && !l.empty() && l[0] == ' ') l.erase(0, 1);
        else l.insert(0, pick(2) ? " " : "  ");
        return join(lines);
      }
    }
  }

  std::mt19937_64 rng_;
  const std::vector<std::string>& corpus_;
};

}  // namespace hostile
