// Request lines with std::to_chars: exact integers, no locale, no floating point.
#include "tools/import/request_line.h"

#include <charconv>

namespace mlasim {
namespace {

template <typename Int>
void append_int(std::string& out, Int v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}

}  // namespace

void append_seconds(std::string& out, long long us) {
  append_int(out, us / 1'000'000);
  long long frac = us % 1'000'000;
  if (frac == 0) return;
  char digits[7] = {'0', '0', '0', '0', '0', '0', 0};
  for (int i = 5; i >= 0; --i, frac /= 10) digits[i] = static_cast<char>('0' + frac % 10);
  int n = 6;
  while (digits[n - 1] == '0') --n;
  out += '.';
  out.append(digits, static_cast<std::size_t>(n));
}

void append_request_line(std::string& out, long long arrival_us, long long prompt_len, long long max_tokens,
                         const std::vector<unsigned long long>* hash_ids) {
  out += "{\"arrival_time\": ";
  append_seconds(out, arrival_us);
  out += ", \"prompt_len\": ";
  append_int(out, prompt_len);
  out += ", \"max_tokens\": ";
  append_int(out, max_tokens);
  out += ", \"ignore_eos\": true";
  if (hash_ids) {
    out += ", \"prompt_hash_ids\": [";
    for (std::size_t i = 0; i < hash_ids->size(); ++i) {
      if (i) out += ", ";
      append_int(out, (*hash_ids)[i]);
    }
    out += ']';
  }
  out += "}\n";
}

}  // namespace mlasim
