// Request streams over the inline list and over a requests_file.
#include "scenario/request_stream.h"

#include <algorithm>
#include <numeric>

#include "base/check.h"
#include "scenario/request_file.h"

namespace mlasim {
namespace {

class InlineRequestStream final : public RequestStream {
 public:
  explicit InlineRequestStream(const Scenario& s) : s_(s), order_(s.requests.size()) {
    std::iota(order_.begin(), order_.end(), 0);
    auto key = [&](int i) {
      const RequestSpec& r = s.requests[static_cast<std::size_t>(i)];
      return r.arrival_time_ns ? *r.arrival_time_ns : static_cast<std::int64_t>(r.arrival_step);
    };
    std::stable_sort(order_.begin(), order_.end(), [&](int a, int b) { return key(a) < key(b); });
  }
  const RequestSpec* peek() override {
    return next_ < order_.size() ? &s_.requests[static_cast<std::size_t>(order_[next_])] : nullptr;
  }
  int peek_index() const override { return next_ < order_.size() ? order_[next_] : -1; }
  RequestSpec pop() override {
    MLASIM_CHECK(next_ < order_.size(), "pop past the end of the requests");
    return s_.requests[static_cast<std::size_t>(order_[next_++])];
  }

 private:
  const Scenario& s_;
  std::vector<int> order_;
  std::size_t next_ = 0;
};

class FileRequestStream final : public RequestStream {
 public:
  explicit FileRequestStream(const Scenario& s) : reader_(s) { advance(); }
  const RequestSpec* peek() override { return has_ ? &pending_ : nullptr; }
  int peek_index() const override { return has_ ? index_ : -1; }
  RequestSpec pop() override {
    MLASIM_CHECK(has_, "pop past the end of the requests");
    RequestSpec out = std::move(pending_);
    advance();
    return out;
  }

 private:
  void advance() {
    Result<bool> got = reader_.next(pending_);
    if (!got) throw RequestStreamError{got.error()};
    has_ = got.value();
    if (has_) index_ = reader_.index();
  }
  RequestFileReader reader_;
  RequestSpec pending_;
  int index_ = -1;
  bool has_ = false;
};

}  // namespace

std::unique_ptr<RequestStream> open_request_stream(const Scenario& scenario) {
  if (!scenario.requests_file.empty()) return std::make_unique<FileRequestStream>(scenario);
  return std::make_unique<InlineRequestStream>(scenario);
}

}  // namespace mlasim
