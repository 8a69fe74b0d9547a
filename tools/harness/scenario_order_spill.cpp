// The spill file behind ScenarioOrderSpill.
#include "tools/harness/scenario_order_spill.h"

#include "sim/check.h"

namespace mlasim {

ScenarioOrderSpill::ScenarioOrderSpill() : file_(std::tmpfile()) {
  MLASIM_CHECK(file_ != nullptr, "cannot create a temporary file (check TMPDIR)");
}

ScenarioOrderSpill::~ScenarioOrderSpill() {
  if (file_) std::fclose(file_);
}

void ScenarioOrderSpill::add(int index, std::string_view text) {
  MLASIM_CHECK(index >= 0, "negative request index");
  if (static_cast<std::size_t>(index) >= entries_.size()) entries_.resize(static_cast<std::size_t>(index) + 1);
  MLASIM_CHECK(std::fwrite(text.data(), 1, text.size(), file_) == text.size(), "writing the temporary file failed");
  entries_[static_cast<std::size_t>(index)] = {end_, static_cast<std::uint32_t>(text.size()), true};
  end_ += text.size();
}

void ScenarioOrderSpill::for_each(const std::function<void(std::string_view)>& f) {
  MLASIM_CHECK(std::fflush(file_) == 0, "writing the temporary file failed");
  std::string buf;
  for (const Entry& e : entries_) {
    if (!e.present) continue;
    buf.resize(e.size);
    MLASIM_CHECK(std::fseek(file_, static_cast<long>(e.offset), SEEK_SET) == 0 &&
                     std::fread(buf.data(), 1, e.size, file_) == e.size,
                 "reading the temporary file failed");
    f(buf);
  }
  std::fseek(file_, 0, SEEK_END);
}

}  // namespace mlasim
