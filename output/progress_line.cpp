// The terminal progress line.
#include "output/progress_line.h"

#include <unistd.h>

#include <cstdlib>

namespace mlasim {

ProgressLine::ProgressLine(std::FILE* out, int num_requests, bool force)
    : out_(out),
      num_requests_(num_requests),
      enabled_(force || (::isatty(::fileno(out)) == 1 && std::getenv("CI") == nullptr)),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

void ProgressLine::on_step(const StepRecord& st) {
  ++steps_;
  tokens_ += st.total_num_scheduled_tokens;
  if (!enabled_ || (steps_ & 63) != 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_ < std::chrono::milliseconds(250)) return;
  last_ = now;
  draw();
}

void ProgressLine::on_request_finished(const RequestRecord& /*request*/) { ++finished_; }

void ProgressLine::draw() {
  const double elapsed = std::chrono::duration<double>(last_ - start_).count();
  const double rate = elapsed > 0 ? static_cast<double>(tokens_) / elapsed : 0;
  const double eta = finished_ > 0 ? elapsed * static_cast<double>(num_requests_ - finished_) /
                                         static_cast<double>(finished_)
                                   : 0;
  std::fprintf(out_, "\r\033[Kstep %lld, %lld/%d requests finished, %.0f tokens/s, ETA %.0f s", steps_, finished_,
               num_requests_, rate, eta);
  std::fflush(out_);
  drawn_ = true;
}

void ProgressLine::on_end(const RunTotals& /*totals*/) {
  if (drawn_) {
    std::fputs("\r\033[K", out_);
    std::fflush(out_);
  }
}

}  // namespace mlasim
