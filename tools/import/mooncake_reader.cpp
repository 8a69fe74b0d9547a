// Mooncake lines: one JSON object each; the four keys are required (others are skipped), and
// hash_ids must hold ceil(input_length / 512) ids.
#include "tools/import/mooncake_reader.h"

#include <charconv>

#include "tools/import/field_parse.h"
#include "base/json_scanner.h"
#include "base/line_reader.h"

namespace mlasim {
namespace {

constexpr const char* kLineHint =
    "each line is one JSON object, e.g. {\"timestamp\": 0, \"input_length\": 700, \"output_length\": 20, "
    "\"hash_ids\": [0, 1]}";

constexpr const char* kKeys[4] = {"timestamp", "input_length", "output_length", "hash_ids"};

// A problem with the value of one key, at `offset` in the line.
struct KeyError {
  std::size_t offset;
  std::string key;
  std::string message;
  std::string hint;
};

class MooncakeReader final : public TraceReader {
 public:
  explicit MooncakeReader(const std::string& path) : lines_(path) {}
  Status open() override { return lines_.open(); }
  bool has_hash_ids() const override { return true; }
  const char* time_key() const override { return "timestamp"; }

  Status next(TraceRecord& rec, bool& done) override {
    std::string_view line;
    do {
      if (!lines_.next(line)) {
        if (!lines_.status()) return lines_.status();
        done = true;
        return Status::Ok();
      }
    } while (is_blank(line));
    rec.line = lines_.line_number();
    try {
      parse_line(line, rec);
    } catch (const JsonSyntaxError& e) {
      return trace_error(lines_.path(), rec.line, static_cast<int>(e.offset) + 1, "", "invalid JSON: " + e.message, kLineHint);
    } catch (const KeyError& e) {
      return trace_error(lines_.path(), rec.line, static_cast<int>(e.offset) + 1, e.key, e.message, e.hint);
    }
    return Status::Ok();
  }

 private:
  static void check(const std::optional<FieldProblem>& p, std::size_t offset, const char* key) {
    if (p) throw KeyError{offset + static_cast<std::size_t>(p->offset), key, p->message, p->hint};
  }

  void parse_hash_ids(JsonScanner& sc, TraceRecord& rec) {
    rec.hash_ids.clear();
    sc.expect('[');
    if (sc.consume(']')) return;
    do {
      sc.skip_ws();
      const std::size_t at = sc.offset();
      const std::string_view tok = sc.number();
      unsigned long long id = 0;
      auto [ptr, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), id);
      if (ec != std::errc() || ptr != tok.data() + tok.size())
        throw KeyError{at, "hash_ids", "expected a whole number >= 0 as a hash id, found " + std::string(tok),
                       "hash ids are the trace's block hash numbers"};
      rec.hash_ids.push_back(id);
    } while (sc.consume(','));
    sc.expect(']');
  }

  // The value of known key `k` at `value_at`; `at` records where each key's value was.
  void parse_value(JsonScanner& sc, int k, std::size_t key_at, std::size_t value_at, std::size_t* at,
                   TraceRecord& rec) {
    if (at[k] != 0) throw KeyError{key_at, kKeys[k], "key given twice", "each key may appear once per line"};
    at[k] = value_at;
    if (k == 3) return parse_hash_ids(sc, rec);
    const std::string_view tok = sc.number();
    if (k == 0) {
      check(parse_milliseconds(tok, rec.time_ns), value_at, kKeys[k]);
      rec.time_text = tok;
      rec.time_column = static_cast<int>(value_at) + 1;
    } else {
      check(parse_count(tok, k == 1 ? rec.prompt_len : rec.output_len), value_at, kKeys[k]);
    }
  }

  void parse_line(std::string_view line, TraceRecord& rec) {
    JsonScanner sc(line);
    sc.expect('{');
    std::size_t at[4] = {0, 0, 0, 0};  // offset of each value; 0 = key not seen (a value is never at 0)
    if (!sc.consume('}')) {
      for (;;) {
        sc.skip_ws();
        const std::size_t key_at = sc.offset();
        const std::string_view key = sc.string(scratch_);
        sc.expect(':');
        sc.skip_ws();
        const std::size_t value_at = sc.offset();
        int k = 0;
        while (k < 4 && key != kKeys[k]) ++k;
        if (k == 4) {
          sc.skip_value();
        } else {
          parse_value(sc, k, key_at, value_at, at, rec);
        }
        if (sc.consume('}')) break;
        if (!sc.consume(','))
          sc.fail(sc.offset(), sc.at_end() ? "expected ',' or '}', found the end of the line" : "expected ',' or '}'");
      }
    }
    sc.skip_ws();
    if (!sc.at_end()) sc.fail(sc.offset(), "unexpected text after the object");
    for (int k = 0; k < 4; ++k)
      if (at[k] == 0)
        throw KeyError{0, kKeys[k], "missing key",
                       "Mooncake trace lines have timestamp, input_length, output_length and hash_ids"};
    const long long blocks = (rec.prompt_len + kMooncakeBlockTokens - 1) / kMooncakeBlockTokens;
    if (static_cast<long long>(rec.hash_ids.size()) != blocks)
      throw KeyError{at[3], "hash_ids",
                     std::to_string(rec.hash_ids.size()) + " hash ids for input_length " +
                         std::to_string(rec.prompt_len) + ", expected " + std::to_string(blocks) +
                         " (one per 512-token block)",
                     "Mooncake hashes each 512-token block of the prompt, the last one possibly partial"};
  }

  LineReader lines_;
  std::string scratch_;
};

}  // namespace

std::unique_ptr<TraceReader> make_mooncake_reader(const std::string& path) {
  return std::make_unique<MooncakeReader>(path);
}

}  // namespace mlasim
