// Azure rows: the timestamp through parse_azure_timestamp, the two token counts.
#include "tools/import/azure_reader.h"

#include "tools/import/civil_time.h"
#include "tools/import/csv_trace_reader.h"

namespace mlasim {
namespace {

class AzureReader final : public CsvTraceReader {
 public:
  explicit AzureReader(const std::string& path)
      : CsvTraceReader(path, "azure", {"TIMESTAMP", "ContextTokens", "GeneratedTokens"}) {}
  const char* time_key() const override { return "TIMESTAMP"; }

 protected:
  Status parse_row(const std::vector<const CsvField*>& f, TraceRecord& rec) override {
    if (auto p = parse_azure_timestamp(f[0]->text, rec.time_ns)) return field_error(0, *f[0], *p);
    rec.time_text = f[0]->text;
    rec.time_column = f[0]->column;
    if (auto p = parse_count(f[1]->text, rec.prompt_len)) return field_error(1, *f[1], *p);
    if (auto p = parse_count(f[2]->text, rec.output_len)) return field_error(2, *f[2], *p);
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<TraceReader> make_azure_reader(const std::string& path) { return std::make_unique<AzureReader>(path); }

}  // namespace mlasim
