// Joining `mlasim check --junit` shard reports (check_merge.h): the reports are read as the lines
// check_reports_junit writes, each test case kept as written and the suite's counts recomputed.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string_view>

#include "harness/check_merge.h"

namespace mlasim {
namespace {

constexpr const char* kHint = "mlasim merge reads the JUnit reports `mlasim check --shard I/N --junit FILE` wrote, unchanged";

struct TestCase {
  std::string file;  // the scenario's path, unescaped: the order of one run
  std::string text;  // as written, its lines and their ends
  double seconds = 0;
  int failures = 0, errors = 0;
  std::size_t report = 0;
};

std::string xml_unescape(std::string_view s) {
  static const std::pair<std::string_view, char> kEntities[] = {
      {"&lt;", '<'}, {"&gt;", '>'}, {"&amp;", '&'}, {"&quot;", '"'}, {"&#39;", '\''}};
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    bool replaced = false;
    for (const auto& [entity, ch] : kEntities)
      if (s.substr(i, entity.size()) == entity) {
        out += ch;
        i += entity.size();
        replaced = true;
        break;
      }
    if (!replaced) out += s[i++];
  }
  return out;
}

// The lines of `text`, each with its number; the last line must end with a newline.
struct Lines {
  std::vector<std::string_view> lines;
  bool ends_with_newline = false;
};

Lines split_lines(std::string_view text) {
  Lines l;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      l.lines.push_back(text.substr(start));
      return l;
    }
    l.lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  l.ends_with_newline = true;
  return l;
}

// The value of attribute `name` in a tag line, or nullopt.
std::optional<std::string_view> attribute(std::string_view line, std::string_view name) {
  const std::string key = " " + std::string(name) + "=\"";
  const std::size_t at = line.find(key);
  if (at == std::string_view::npos) return std::nullopt;
  const std::size_t start = at + key.size(), end = line.find('"', start);
  if (end == std::string_view::npos) return std::nullopt;
  return line.substr(start, end - start);
}

class JunitReader {
 public:
  JunitReader(const ReportFile& f, std::size_t index) : f_(f), index_(index), lines_(split_lines(f.text)) {}

  Status read(std::vector<TestCase>& cases, ShardPlace& shard) {
    if (!lines_.ends_with_newline) return fail(static_cast<int>(lines_.lines.size()), 1, "the report does not end with a newline (cut short?)");
    if (Status st = expect(0, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"); !st) return st;
    if (Status st = expect(1, "<testsuites>"); !st) return st;
    if (line(2).rfind("  <testsuite name=\"mlasim check\" ", 0) != 0) return fail(3, 1, "not mlasim check's <testsuite>");
    const std::string_view props = line(3);
    const std::string_view prefix = "    <properties><property name=\"mlasim.shard\" value=\"";
    if (props.rfind(prefix, 0) != 0)
      return fail(4, 1, "no mlasim.shard property: not a shard's report (an unsharded run's report is already whole)");
    long long index = 0, count = 0, scenarios = 0;
    const std::string value(props.substr(prefix.size(), props.find('"', prefix.size()) - prefix.size()));
    if (std::sscanf(value.c_str(), "%lld/%lld of %lld", &index, &count, &scenarios) != 3 || count < 1 || index < 0 ||
        index >= count || scenarios < 0)
      return fail(4, static_cast<int>(prefix.size()) + 1, "mlasim.shard is \"" + value + "\", want \"I/N of M\"");
    shard = ShardPlace{index, count, scenarios};
    std::size_t i = 4;
    for (; i < lines_.lines.size() && line(i).rfind("    <testcase ", 0) == 0;) {
      TestCase c;
      c.report = index_;
      const std::string_view head = line(i);
      const std::optional<std::string_view> file = attribute(head, "file"), time = attribute(head, "time");
      if (!file || !time) return fail(static_cast<int>(i) + 1, 5, "a <testcase> without file and time");
      c.file = xml_unescape(*file);
      c.seconds = std::strtod(std::string(*time).c_str(), nullptr);
      std::size_t end = i;
      if (head.size() < 2 || head.substr(head.size() - 2) != "/>") {
        const std::string_view verdict = line(i + 1);
        c.failures = verdict.rfind("      <failure ", 0) == 0;
        c.errors = verdict.rfind("      <error ", 0) == 0;
        if (!c.failures && !c.errors) return fail(static_cast<int>(i) + 2, 1, "want <failure> or <error> in a failed <testcase>");
        for (end = i + 1; end < lines_.lines.size() && line(end) != "    </testcase>";) ++end;
        if (end == lines_.lines.size()) return fail(static_cast<int>(i) + 1, 5, "this <testcase> is never closed");
      }
      for (std::size_t k = i; k <= end; ++k) {
        c.text += line(k);
        c.text += '\n';
      }
      cases.push_back(std::move(c));
      i = end + 1;
    }
    if (Status st = expect(i, "  </testsuite>"); !st) return st;
    if (Status st = expect(i + 1, "</testsuites>"); !st) return st;
    if (i + 2 != lines_.lines.size()) return fail(static_cast<int>(i) + 3, 1, "text after </testsuites>");
    return Status::Ok();
  }

 private:
  std::string_view line(std::size_t i) const { return i < lines_.lines.size() ? lines_.lines[i] : std::string_view(); }
  Status fail(int line_number, int column, const std::string& message) const {
    return merge_error(f_.path, line_number, column, "", message, kHint);
  }
  Status expect(std::size_t i, std::string_view want) const {
    if (line(i) == want) return Status::Ok();
    return fail(static_cast<int>(i) + 1, 1, "want " + std::string(want));
  }

  const ReportFile& f_;
  std::size_t index_;
  Lines lines_;
};

}  // namespace

Result<std::string> merge_check_junit(const std::vector<ReportFile>& files) {
  std::vector<TestCase> cases;
  std::vector<ShardPlace> shards;
  for (std::size_t i = 0; i < files.size(); ++i) {
    ShardPlace s;
    if (Status st = JunitReader(files[i], i).read(cases, s); !st) return st.error();
    shards.push_back(s);
  }
  if (Status st = check_shards_whole(files, shards, "scenarios"); !st) return st.error();
  std::stable_sort(cases.begin(), cases.end(), [](const TestCase& a, const TestCase& b) { return a.file < b.file; });
  for (std::size_t i = 1; i < cases.size(); ++i)
    if (cases[i].file == cases[i - 1].file)
      return merge_error(files[cases[i].report].path, 0, 0, "",
                         "scenario " + cases[i].file + " is also in " + files[cases[i - 1].report].path,
                         "merge the shards of one campaign");
  if (static_cast<long long>(cases.size()) != shards[0].whole)
    return merge_error("<command line>", 0, 0, "",
                       fmt::format("the shards hold {} scenarios, their reports say {}", cases.size(), shards[0].whole),
                       "");
  int failures = 0, errors = 0;
  double seconds = 0;
  for (const TestCase& c : cases) {
    failures += c.failures;
    errors += c.errors;
    seconds += c.seconds;
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites>\n  <testsuite name=\"mlasim check\" tests=\"{}\" failures=\"{}\" errors=\"{}\" time=\"{:.3f}\">\n",
                     cases.size(), failures, errors, seconds);
  for (const TestCase& c : cases) out += c.text;
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace mlasim
