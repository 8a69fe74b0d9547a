// logits.npy and logits_index.json streamed row by row (logits_files.h).
#include "output/logits_files.h"

#include <fmt/format.h>

#include <string_view>

#include "base/check.h"
#include "base/formats/npy.h"
#include "base/output_set.h"
#include "base/hash.h"

namespace mlasim {

std::vector<std::string> logits_file_paths(const std::string& dir) {
  return {dir + "/logits.npy", dir + "/logits_index.json"};
}

Status LogitsFilesStream::open(const std::string& dir, int vocab_size) {
  vocab_size_ = vocab_size;
  const std::vector<std::string> paths = logits_file_paths(dir);
  if (Status st = npy_.open(paths[0]); !st) return st;
  if (Status st = index_.open(paths[1]); !st) return st;
  npy_.write(npy_float32_header(0, vocab_size));  // finish() writes the row count over it
  // The fingerprint's 16 hex digits are written last, over a placeholder.
  const std::string placeholder(16, '0');
  index_json_.begin_object();
  index_json_.key("format").value("mlasim-logits-index");
  index_json_.key("version").value(1);
  index_json_.key("vocab_size").value(vocab_size);
  index_json_.key("logits_npy_fnv1a64").value(placeholder);
  index_json_.key("rows").begin_array();
  const std::string head = index_json_.take();
  hash_offset_ = head.rfind(placeholder);
  index_.write(head);
  return Status::Ok();
}

void LogitsFilesStream::add(const LogitsRecord& rows, const RequestNames& names) {
  MLASIM_CHECK(rows.index.empty() || rows.vocab_size == vocab_size_, "logits rows of another vocabulary size");
  for (const LogitsRow& r : rows.index) {
    index_json_.begin_object();
    index_json_.key("step").value(r.step);
    index_json_.key("id").value(names[r.index]);
    index_json_.key("position").value(r.position);
    index_json_.end_object();
  }
  index_.write(index_json_.take());
  npy_.write(std::string_view(reinterpret_cast<const char*>(rows.values.data()), rows.values.size() * sizeof(float)));
  rows_ += static_cast<std::int64_t>(rows.index.size());
}

Status LogitsFilesStream::finish() {
  const std::string header = npy_float32_header(rows_, vocab_size_);
  MLASIM_CHECK(header.size() == npy_float32_header(0, vocab_size_).size(), "the npy header changed size");
  npy_.overwrite(0, header);
  std::uint64_t hash = kStableHashBasis;
  if (Status st = npy_.read_back([&](std::string_view piece) { hash = stable_hash(piece, hash); }); !st) return st;
  index_.overwrite(hash_offset_, fmt::format("{:016x}", hash));
  index_json_.end_array();
  index_json_.end_object();
  index_.write(index_json_.str());
  if (Status st = npy_.finish(); !st) return st;
  return index_.finish();
}

Status LogitsFilesStream::publish() { return publish_together(outputs()); }

}  // namespace mlasim
