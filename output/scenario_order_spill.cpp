// The spill file behind ScenarioOrderSpill.
#include "output/scenario_order_spill.h"

#include <cerrno>
#include <cstdlib>
#include <filesystem>

#include "base/check.h"

namespace mlasim {
namespace {

// The spill file cannot be written (a full /tmp, the file-size limit): an error with the OS's
// reason, which the CLI reports (exit 3 for a full disk or a size limit), never an abort.
[[noreturn]] void spill_failed(const char* what) {
  const int err = errno != 0 ? errno : EIO;
  const char* tmpdir = std::getenv("TMPDIR");
  const std::filesystem::path dir = tmpdir && *tmpdir ? tmpdir : "/tmp";
  throw std::filesystem::filesystem_error(what, dir / "(the run's temporary request file)",
                                          std::error_code(err, std::generic_category()));
}

}  // namespace

ScenarioOrderSpill::ScenarioOrderSpill() : file_(std::tmpfile()) {
  if (file_ == nullptr) spill_failed("cannot create a temporary file");
}

ScenarioOrderSpill::~ScenarioOrderSpill() {
  if (file_) std::fclose(file_);
}

void ScenarioOrderSpill::add(int index, std::string_view text) {
  MLASIM_CHECK(index >= 0, "negative request index");
  if (static_cast<std::size_t>(index) >= entries_.size()) entries_.resize(static_cast<std::size_t>(index) + 1);
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size()) spill_failed("writing a temporary file failed");
  entries_[static_cast<std::size_t>(index)] = {end_, static_cast<std::uint32_t>(text.size()), true};
  end_ += text.size();
}

void ScenarioOrderSpill::for_each(const std::function<void(std::string_view)>& f) {
  if (std::fflush(file_) != 0) spill_failed("writing a temporary file failed");
  std::string buf;
  for (const Entry& e : entries_) {
    if (!e.present) continue;
    buf.resize(e.size);
    if (std::fseek(file_, static_cast<long>(e.offset), SEEK_SET) != 0 || std::fread(buf.data(), 1, e.size, file_) != e.size)
      spill_failed("reading a temporary file failed");
    f(buf);
  }
  std::fseek(file_, 0, SEEK_END);
}

}  // namespace mlasim
