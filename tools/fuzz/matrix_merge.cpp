// Joining `mlasim matrix --shard I/N --json` reports (matrix_merge.h): each shard holds the cells
// i with i % N == I in the table's order, so shard I's j-th cell is cell I + j N. The cells are
// written back as they were read, by the same writer, so the whole report is byte-identical to
// one unsharded run's.
#include "tools/fuzz/matrix_merge.h"

#include <fmt/format.h>

#include <map>

#include "base/formats/json_writer.h"
#include "base/json_document.h"
#include "scenario/json_field_reader.h"

namespace mlasim {
namespace {

constexpr const char* kHint = "mlasim merge reads the reports `mlasim matrix --shard I/N --json FILE` wrote, unchanged";

Error node_error(const std::string& file, const JsonNode* at, const std::string& key, const std::string& message,
                 const std::string& hint = kHint) {
  return merge_error(file, at ? at->line : 0, at ? at->column : 0, key, message, hint);
}

// A value as JsonWriter writes it (numbers as they were written).
void write_node(JsonWriter& w, const JsonNode& n) {
  switch (n.kind) {
    case JsonNode::Kind::kNull: w.null(); return;
    case JsonNode::Kind::kBool: w.value(n.boolean); return;
    case JsonNode::Kind::kNumber: w.raw_element(n.text); return;
    case JsonNode::Kind::kString: w.value(n.text); return;
    case JsonNode::Kind::kArray:
      w.begin_array();
      for (const JsonNode& item : n.items) write_node(w, item);
      w.end_array();
      return;
    case JsonNode::Kind::kObject:
      w.begin_object();
      for (const JsonMember& m : n.members) {
        w.key(m.key);
        write_node(w, m.value);
      }
      w.end_object();
      return;
  }
}

// One shard's report: its document, its place and its cells.
struct ShardReport {
  JsonDocument doc;
  const JsonNode* cells = nullptr;
};

}  // namespace

Result<std::string> merge_matrix_reports(const std::vector<ReportFile>& files) {
  std::vector<ShardReport> shards;
  std::vector<ShardPlace> places;
  for (std::size_t i = 0; i < files.size(); ++i) {
    const ReportFile& f = files[i];
    Result<JsonDocument> doc = parse_json_document(f.text, f.path);
    if (!doc) return doc.error();
    ShardReport s;
    ShardPlace p;
    s.doc = std::move(doc.value());
    const JsonNode& root = s.doc.root;
    const JsonFieldReader r(f.path);
    try {
      Result<ShardPlace> place = read_report_head(r, root, "mlasim-matrix", "num_cells");
      if (!place) return place.error();
      p = place.value();
      s.cells = &r.required(root, "cells", "");
      r.expect_list(*s.cells, "cells");
    } catch (LoadError& e) {
      e.error.hint = kHint;
      return e.error;
    }
    const long long want = p.whole > p.index ? (p.whole - p.index + p.count - 1) / p.count : 0;
    if (static_cast<long long>(s.cells->items.size()) != want)
      return node_error(f.path, s.cells, "cells",
                        fmt::format("{} cells, shard {}/{} of {} holds {}", s.cells->items.size(), p.index, p.count,
                                    p.whole, want));
    if (!shards.empty()) {
      // One run: the same options (every member but shard and cells; the shards by check_shards_whole).
      const JsonNode& first = shards[0].doc.root;
      for (const JsonMember& m : root.members) {
        if (m.key == "shard" || m.key == "cells") continue;
        const JsonNode* other = first.find(m.key);
        JsonWriter a, b;
        write_node(a, m.value);
        if (other) write_node(b, *other);
        if (!other || a.text() != b.text())
          return node_error(f.path, &m.value, m.key, "differs from " + files[0].path + "'s: another matrix's shard",
                             "merge the shards of one `mlasim matrix` run: the same --seed, --runs, --model, --inject");
      }
    }
    places.push_back(p);
    shards.push_back(std::move(s));
  }
  if (Status st = check_shards_whole(files, places, "cells"); !st) return st.error();
  std::map<long long, std::size_t> by_index;  // shard index -> its report
  for (std::size_t i = 0; i < places.size(); ++i) by_index[places[i].index] = i;
  JsonWriter w;
  w.begin_object();
  for (const JsonMember& m : shards[0].doc.root.members) {
    if (m.key == "shard") continue;
    w.key(m.key);
    if (m.key != "cells") {
      write_node(w, m.value);
      continue;
    }
    w.begin_array();
    const long long count = places[0].count;
    for (long long cell = 0; cell < places[0].whole; ++cell) {
      const ShardReport& s = shards[by_index.at(cell % count)];
      write_node(w, s.cells->items[static_cast<std::size_t>(cell / count)]);
    }
    w.end_array();
  }
  w.end_object();
  return w.str();
}

}  // namespace mlasim
