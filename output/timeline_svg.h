// The timeline as one self-contained SVG (docs/design.md "Pictures"): steps left to right, one
// lane per request, each cell coloured by what the request did in the step; above the lanes a
// strip of num_mqa / num_mha per step and one of free KV blocks. Every cell has a <title> (step,
// id, q, nct, P, path, reason); a fresh prefill on the decode path has class `fresh-on-decode`
// and a red outlined cell with a marker above the strip. Several timelines (one per engine
// profile) are drawn one above the other.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "output/timeline.h"

namespace mlasim {

// The <svg> element (no XML declaration), for a file or inline in HTML.
std::string render_timeline_svg(const std::vector<const Timeline*>& timelines);

// The SVG document: the XML declaration and the <svg> element.
std::string timeline_svg_document(const std::vector<const Timeline*>& timelines);

// Writes the SVG document atomically.
Status write_timeline_svg(const std::string& path, const std::vector<const Timeline*>& timelines);

}  // namespace mlasim
