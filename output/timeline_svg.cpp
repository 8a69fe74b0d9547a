// Drawing a recorded timeline as SVG.
#include "output/timeline_svg.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/atomic_file.h"
#include "output/xml_text.h"

namespace mlasim {
namespace {

constexpr int kLeft = 170;       // lane labels
constexpr int kRight = 16;
constexpr int kGridWidth = 960;  // what the columns share, within the cell width bounds
constexpr int kLaneHeight = 16;
constexpr int kCellHeight = 13;
constexpr int kSplitStrip = 40;
constexpr int kBlocksStrip = 22;

constexpr const char* kStyle =
    "<style>"
    "text{font-family:DejaVu Sans,Helvetica,Arial,sans-serif;font-size:11px;fill:#222}"
    ".title{font-size:14px;font-weight:bold}.note{fill:#555}.axis{font-size:9px;fill:#555}"
    ".cell{stroke:#fff;stroke-width:0.5}"
    ".prefill{fill:#f28e2b}.decode{fill:#4e79a7}.waiting{fill:#c9c9c9}.finished{fill:#ececec}"
    ".preempted{fill:#b07aa1}"
    ".fresh-on-decode{fill:#e15759;stroke:#000;stroke-width:1.5}"
    ".mqa{fill:#4e79a7}.mha{fill:#f28e2b}.blocks{fill:#59a14f}.marker{fill:#e15759;stroke:#000;stroke-width:0.7}"
    ".strip{fill:#fafafa;stroke:#ddd;stroke-width:0.5}"
    "</style>";

const char* state_words(CellState s) {
  switch (s) {
    case CellState::kPrefill: return "prefill path (MHA form)";
    case CellState::kDecode: return "decode path (absorbed MQA form)";
    case CellState::kFreshOnDecode: return "decode path (absorbed MQA form): FRESH PREFILL ON THE DECODE PATH";
    case CellState::kPreempted: return "preempted (waiting to resume)";
    case CellState::kWaiting: return "waiting (not scheduled)";
    case CellState::kFinished: return "finished";
    case CellState::kNone: return "";
  }
  return "";
}

std::string steps_text(const TimelineColumn& c) {
  return c.first_step == c.last_step ? fmt::format("step {}", c.first_step)
                                     : fmt::format("steps {}\u2013{} ({} ran)", c.first_step, c.last_step, c.num_steps);
}

std::string cell_title(const Timeline& t, const TimelineLane& lane, const TimelineColumn& col, const TimelineCell& cell) {
  const CellState s = cell.state();
  const bool one = t.steps_per_column() == 1 && t.requests_per_lane() == 1;
  if (!one) {
    std::string counts;
    for (int k = kNumCellStates - 1; k > 0; --k) {
      const int n = cell.count[static_cast<std::size_t>(k)];
      if (n == 0) continue;
      counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", to_string(static_cast<CellState>(k)), n);
    }
    return fmt::format("{} \u00b7 {} \u00b7 request-steps: {}", steps_text(col), lane.label, counts);
  }
  if (s == CellState::kPrefill || s == CellState::kDecode || s == CellState::kFreshOnDecode) {
    std::string out = fmt::format("{} \u00b7 {} \u00b7 q={} nct={} P={} \u00b7 path {} \u00b7 {}", steps_text(col),
                                  lane.label, cell.q, cell.nct, cell.prompt_len,
                                  s == CellState::kPrefill ? "mha" : "mqa", state_words(s));
    if (cell.reason >= 0) out += " \u00b7 " + t.reasons()[static_cast<std::size_t>(cell.reason)];
    return out;
  }
  return fmt::format("{} \u00b7 {} \u00b7 {}", steps_text(col), lane.label, state_words(s));
}

int cell_width(const Timeline& t) {
  const int n = std::max<int>(1, static_cast<int>(t.columns().size()));
  return std::clamp(kGridWidth / n, 4, 40);
}

int section_height(const Timeline& t) {
  return 76 + kSplitStrip + 6 + kBlocksStrip + 18 + static_cast<int>(t.lanes().size()) * kLaneHeight + 14;
}

int section_width(const Timeline& t) {
  return kLeft + cell_width(t) * std::max<int>(1, static_cast<int>(t.columns().size())) + kRight;
}

std::string label_text(const std::string& label) {
  // Shown up to 24 characters (whole UTF-8 sequences); the full label is in the lane's title.
  std::size_t n = 0, chars = 0;
  while (n < label.size() && chars < 24) {
    const auto c = static_cast<unsigned char>(label[n]);
    n += c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : 4;
    ++chars;
  }
  return n >= label.size() ? label : label.substr(0, n) + "\u2026";
}

void draw_section(const Timeline& t, int y0, std::string& out) {
  const std::vector<TimelineColumn>& cols = t.columns();
  const int cw = cell_width(t);
  const int gap = cw >= 6 ? 1 : 0;
  out += fmt::format("<g class=\"timeline\" transform=\"translate(0,{})\">", y0);
  out += fmt::format("<text class=\"title\" x=\"8\" y=\"18\">{}</text>", xml_escape(t.title()));
  std::int64_t fresh = 0;
  for (const TimelineColumn& c : cols) fresh += c.num_fresh_on_decode;
  std::string scale = t.steps_per_column() > 1 || t.requests_per_lane() > 1
                          ? fmt::format("; aggregated: a column is {} steps, a lane {} requests, drawn in the state "
                                        "that matters most (hover for counts)",
                                        t.steps_per_column(), t.requests_per_lane())
                          : "";
  out += fmt::format(
      "<text class=\"note\" x=\"8\" y=\"34\">{} steps, {} requests; fresh prefills on the decode path: {}{}</text>",
      t.num_steps(), t.lanes().empty() ? 0 : t.lanes().back().last_index + 1, fresh, xml_escape(scale));
  // Legend.
  int lx = 8;
  for (CellState s : {CellState::kPrefill, CellState::kDecode, CellState::kFreshOnDecode, CellState::kPreempted,
                      CellState::kWaiting, CellState::kFinished}) {
    const char* name = s == CellState::kPrefill ? "prefill path (mha)"
                       : s == CellState::kDecode ? "decode path (mqa)"
                       : s == CellState::kFreshOnDecode ? "fresh prefill on the decode path"
                                                        : to_string(s);
    out += fmt::format("<rect class=\"legend {}\" x=\"{}\" y=\"42\" width=\"10\" height=\"10\"/>", to_string(s), lx);
    out += fmt::format("<text x=\"{}\" y=\"51\">{}</text>", lx + 14, name);
    lx += 14 + static_cast<int>(std::string(name).size()) * 6 + 10;
  }
  // Split strip: mean tokens per step in the column, num_mqa below num_mha.
  const int sy = 72;
  double peak = 1;
  for (const TimelineColumn& c : cols)
    peak = std::max(peak, static_cast<double>(c.num_mqa + c.num_mha) / std::max(1, c.num_steps));
  out += fmt::format("<rect class=\"strip\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>", kLeft, sy,
                     cw * static_cast<int>(cols.size()), kSplitStrip);
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">num_mqa / num_mha</text>", kLeft - 6, sy + 16);
  out += fmt::format("<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"end\">max {:g} tokens/step</text>",
                     kLeft - 6, sy + 28, peak);
  for (std::size_t i = 0; i < cols.size(); ++i) {
    const TimelineColumn& c = cols[i];
    const double steps = std::max(1, c.num_steps);
    const int x = kLeft + static_cast<int>(i) * cw;
    const double hq = kSplitStrip * (static_cast<double>(c.num_mqa) / steps) / peak,
                 hh = kSplitStrip * (static_cast<double>(c.num_mha) / steps) / peak;
    const std::string title =
        c.num_steps == 1 ? fmt::format("{}: num_mqa={} num_mha={}", steps_text(c), c.num_mqa, c.num_mha)
                         : fmt::format("{}: num_mqa={} num_mha={} in all", steps_text(c), c.num_mqa, c.num_mha);
    out += fmt::format("<g><title>{}</title>", xml_escape(title));
    if (c.num_mqa > 0)
      out += fmt::format("<rect class=\"mqa\" x=\"{}\" y=\"{:.2f}\" width=\"{}\" height=\"{:.2f}\"/>", x,
                         sy + kSplitStrip - hq, cw - gap, hq);
    if (c.num_mha > 0)
      out += fmt::format("<rect class=\"mha\" x=\"{}\" y=\"{:.2f}\" width=\"{}\" height=\"{:.2f}\"/>", x,
                         sy + kSplitStrip - hq - hh, cw - gap, hh);
    out += "</g>";
    if (c.num_fresh_on_decode > 0)
      out += fmt::format("<path class=\"marker\" d=\"M{} {}h{}l{} {}z\"><title>{}: {} fresh prefill(s) on the decode "
                         "path</title></path>",
                         x + cw / 2.0 - 4, sy - 8, 8, -4, 7, xml_escape(steps_text(c)), c.num_fresh_on_decode);
  }
  // Free KV blocks (the column's minimum) against the pool.
  const int by = sy + kSplitStrip + 6;
  out += fmt::format("<rect class=\"strip\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>", kLeft, by,
                     cw * static_cast<int>(cols.size()), kBlocksStrip);
  out += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">free KV blocks (of {})</text>", kLeft - 6, by + 15,
                     t.num_blocks());
  for (std::size_t i = 0; i < cols.size(); ++i) {
    const TimelineColumn& c = cols[i];
    const double h = t.num_blocks() > 0 ? kBlocksStrip * static_cast<double>(c.min_free_blocks) / t.num_blocks() : 0;
    out += fmt::format("<rect class=\"blocks\" x=\"{}\" y=\"{:.2f}\" width=\"{}\" height=\"{:.2f}\"><title>{}: {} free "
                       "blocks</title></rect>",
                       kLeft + static_cast<int>(i) * cw, by + kBlocksStrip - h, cw - gap, h, xml_escape(steps_text(c)),
                       c.min_free_blocks);
  }
  // Step numbers under the strips.
  const int ay = by + kBlocksStrip + 12;
  const int every = std::max(1, (36 + cw - 1) / cw);
  for (std::size_t i = 0; i < cols.size(); i += static_cast<std::size_t>(every))
    out += fmt::format("<text class=\"axis\" x=\"{}\" y=\"{}\">{}</text>", kLeft + static_cast<int>(i) * cw, ay,
                       cols[i].first_step);
  out += fmt::format("<text class=\"axis\" x=\"{}\" y=\"{}\" text-anchor=\"end\">step</text>", kLeft - 6, ay);
  // Lanes.
  const int gy = ay + 6;
  const std::vector<int> order = t.lane_order();
  for (std::size_t k = 0; k < order.size(); ++k) {
    const TimelineLane& lane = t.lanes()[static_cast<std::size_t>(order[k])];
    const int y = gy + static_cast<int>(k) * kLaneHeight;
    out += fmt::format("<g class=\"lane\"><text x=\"{}\" y=\"{}\" text-anchor=\"end\"><title>{}</title>{}</text>",
                       kLeft - 6, y + kCellHeight - 3, xml_escape(lane.label), xml_escape(label_text(lane.label)));
    for (std::size_t i = 0; i < cols.size(); ++i) {
      const TimelineCell& cell = t.cell(order[k], static_cast<int>(i));
      const CellState s = cell.state();
      if (s == CellState::kNone) continue;
      out += fmt::format("<rect class=\"cell {}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{}</title></rect>",
                         to_string(s), kLeft + static_cast<int>(i) * cw, y, cw - gap, kCellHeight,
                         xml_escape(cell_title(t, lane, cols[i], cell)));
    }
    out += "</g>";
  }
  out += "</g>";
}

}  // namespace

std::string render_timeline_svg(const std::vector<const Timeline*>& timelines) {
  int width = 880, height = 0;
  for (const Timeline* t : timelines) {
    width = std::max(width, section_width(*t));
    height += section_height(*t);
  }
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"mlasim-timeline\" width=\"{0}\" height=\"{1}\" "
      "viewBox=\"0 0 {0} {1}\">",
      width, height);
  out += kStyle;
  out += fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#fff\"/>", width, height);
  int y = 0;
  for (const Timeline* t : timelines) {
    draw_section(*t, y, out);
    y += section_height(*t);
  }
  out += "</svg>\n";
  return out;
}

std::string timeline_svg_document(const std::vector<const Timeline*>& timelines) {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + render_timeline_svg(timelines);
}

Status write_timeline_svg(const std::string& path, const std::vector<const Timeline*>& timelines) {
  return write_file_atomically(path, timeline_svg_document(timelines));
}

}  // namespace mlasim
