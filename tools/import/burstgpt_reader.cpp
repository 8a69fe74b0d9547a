// BurstGPT rows: seconds, request and response tokens; Model, Total tokens and Log Type are
// required in the header but not used (later releases add columns, which are ignored).
#include "tools/import/burstgpt_reader.h"

#include "tools/import/csv_trace_reader.h"

namespace mlasim {
namespace {

class BurstGptReader final : public CsvTraceReader {
 public:
  explicit BurstGptReader(const std::string& path)
      : CsvTraceReader(path, "burstgpt",
                       {"Timestamp", "Model", "Request tokens", "Response tokens", "Total tokens", "Log Type"}) {}
  const char* time_key() const override { return "Timestamp"; }

 protected:
  Status parse_row(const std::vector<const CsvField*>& f, TraceRecord& rec) override {
    if (auto p = parse_decimal_seconds(f[0]->text, rec.time_ns)) return field_error(0, *f[0], *p);
    rec.time_text = f[0]->text;
    rec.time_column = f[0]->column;
    if (auto p = parse_count(f[2]->text, rec.prompt_len)) return field_error(2, *f[2], *p);
    if (auto p = parse_count(f[3]->text, rec.output_len)) return field_error(3, *f[3], *p);
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<TraceReader> make_burstgpt_reader(const std::string& path) {
  return std::make_unique<BurstGptReader>(path);
}

}  // namespace mlasim
