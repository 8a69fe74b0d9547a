// A model run's logits written as the steps produce them (`--logits-dir`, and the logits golden's
// files): logits.npy and logits_index.json, one step's rows held at a time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/atomic_file.h"
#include "base/formats/json_writer.h"
#include "base/status.h"
#include "engine/request_names.h"
#include "engine/run_record.h"

namespace mlasim {

// The two files of a logits folder: DIR/logits.npy, then DIR/logits_index.json (the set's manifest).
std::vector<std::string> logits_file_paths(const std::string& dir);

// logits.npy and logits_index.json written as rows come: open() writes both headers beside their
// targets, add() appends each step's rows, finish() sets the npy's row count and the index's
// `logits_npy_fnv1a64` (the npy read back) and syncs both, publish() renames both into place as one
// set (publish_together). The bytes are those of the whole record written at once.
class LogitsFilesStream {
 public:
  Status open(const std::string& dir, int vocab_size);  // `dir` must exist
  void add(const LogitsRecord& rows, const RequestNames& names);
  Status finish();
  Status publish();
  // The two files, the index last (its hash of the npy makes it the set's manifest).
  std::vector<AtomicOutputFile*> outputs() { return {&npy_, &index_}; }

 private:
  AtomicOutputFile npy_, index_;
  JsonWriter index_json_;
  int vocab_size_ = 0;
  std::int64_t rows_ = 0;
  std::uint64_t hash_offset_ = 0;  // where the index's fingerprint digits start
};

}  // namespace mlasim
