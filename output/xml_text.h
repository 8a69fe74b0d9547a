// Text for XML and HTML documents (SVG, JUnit, the HTML report): markup characters escaped, and
// what XML 1.0 cannot hold (control characters, invalid UTF-8) replaced by U+FFFD, so any
// scenario id or message yields a well-formed document.
#pragma once

#include <string>
#include <string_view>

namespace mlasim {

std::string xml_escape(std::string_view text);

}  // namespace mlasim
