// Flags and output shared by the fuzz, shrink and matrix commands.
#include "base/file_read.h"
#include "tools/mlasim/fuzz_cli.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "harness/ordered_pool.h"

#include "tools/fuzz/finding.h"
#include "tools/fuzz/shrinker.h"
#include "base/atomic_file.h"
#include "base/created_folders.h"
#include "verify/split_golden.h"
#include "tools/mlasim/commands.h"

namespace mlasim::cli {

bool parse_jobs_and_shard(const std::string& jobs_text, const std::string& shard_text, int& jobs,
                          std::optional<Shard>& shard) {
  Result<int> parsed_jobs = parse_jobs(jobs_text, std::thread::hardware_concurrency());
  if (!parsed_jobs) {
    std::cerr << parsed_jobs.error().format() << "\n";
    return false;
  }
  jobs = parsed_jobs.value();
  if (shard_text.empty()) return true;
  Result<Shard> parsed_shard = parse_shard_option(shard_text);
  if (!parsed_shard) {
    std::cerr << parsed_shard.error().format() << "\n";
    return false;
  }
  shard = parsed_shard.value();
  return true;
}

bool parse_properties(const std::vector<std::string>& names, bool with_model, std::vector<Property>& out) {
  for (const std::string& name : names) {
    std::optional<Property> p = parse_property(name);
    if (!p) {
      std::cerr << "--property: unknown property \"" << name << "\"\n  hint: one of";
      for (const PropertyInfo& i : property_infos()) std::cerr << " " << i.name;
      std::cerr << "\n";
      return false;
    }
    for (const PropertyInfo& i : property_infos())
      if (i.property == *p && i.needs_model && !with_model) {
        std::cerr << "--property " << name << " compares logits, so it needs --model\n";
        return false;
      }
    out.push_back(*p);
  }
  return true;
}

std::string properties_help() {
  std::string out;
  for (const PropertyInfo& i : property_infos()) {
    std::string meaning = i.meaning;
    for (std::size_t pos = meaning.find('\n'); pos != std::string::npos; pos = meaning.find('\n', pos + 1))
      meaning.insert(pos + 1, std::string(36, ' '));
    out += "  " + std::string(i.name) + std::string(34 - std::string(i.name).size(), ' ') + meaning + "\n";
  }
  return out;
}

std::vector<std::string> set_keys(const std::vector<std::string>& sets) {
  std::vector<std::string> keys;
  for (const std::string& s : sets) keys.push_back(s.substr(0, s.find('=')));
  return keys;
}

Status write_creating_folder(const std::string& path, const std::string& text) {
  const std::string parent = std::filesystem::path(path).parent_path().string();
  CreatedFolders folders;
  if (!parent.empty())
    if (Status st = folders.create(parent); !st) return st;
  if (Status st = write_file_atomically(path, text); !st) return st;
  folders.keep();
  return Status::Ok();
}

int shrink_and_write(const Scenario& trace, const Violation& v, const FaultSet& faults,
                     const std::vector<std::string>& keep, const std::string& path, const std::string& origin,
                     const std::string& golden_dir) {
  ShrinkResult shrunk{trace, v, 0};
  if (v.property == Property::kMatchesGoldenSplit) {
    std::cout << "not shrunk: a smaller trace has no golden\n";
  } else {
    ShrinkOptions options;
    options.keep_keys = keep;
    options.property = v.property;
    options.faults = faults;
    shrunk = shrink(trace, v, options);
    std::cout << "shrunk in " << shrunk.attempts << " replays to " << describe_batch(shrunk.scenario) << "\n  "
              << shrunk.violation.detail << "\n";
  }
  if (path.empty()) return kExitRegression;
  Result<std::string> yaml = finding_yaml(shrunk.scenario, shrunk.violation, origin, faults, golden_dir);
  if (!yaml) {
    std::cerr << yaml.error().format() << "\n";
    return kExitBadInput;
  }
  if (Status st = write_creating_folder(path, yaml.value()); !st) {
    return report_error(st.error());
  }
  std::cout << "wrote " << path << "\n";
  if (v.property == Property::kMatchesGoldenSplit) {
    const std::string folder = (std::filesystem::path(path).parent_path() / "golden").string();
    if (Status st = check_regular_input(split_golden_path(golden_dir, trace.name), "the split golden"); !st)
      return report_error(st.error());
    std::ifstream in(split_golden_path(golden_dir, trace.name), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    const std::string copy = split_golden_path(folder, trace.name);
    if (Status st = write_creating_folder(copy, text.str()); !st) {
      return report_error(st.error());
    }
    std::cout << "wrote " << copy << " (mlasim check " << path << " --golden-dir " << folder << " fails on it)\n";
  }
  return kExitRegression;
}

}  // namespace mlasim::cli
