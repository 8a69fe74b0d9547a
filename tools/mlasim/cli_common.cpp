// Helpers shared by the subcommands: fault names, CPU threads, device selection, report paths.
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include "model/cpu_thread_pool.h"

#include "base/atomic_file.h"
#include "base/output_set.h"
#include "tools/mlasim/commands.h"
#ifdef MLASIM_HAVE_CUDA
#include "tools/mlasim/cuda_module.h"
#endif

namespace mlasim::cli {

int report_error(const Error& error) {
  std::cerr << error.format() << "\n";
  return error.output ? kExitOutputFailed : kExitBadInput;
}

bool parse_faults(const std::vector<std::string>& names, FaultSet& faults) {
  for (const std::string& n : names) {
    std::optional<Fault> f = parse_fault(n);
    if (!f) {
      std::cerr << "--inject: unknown fault \"" << n << "\"\n  hint: known faults:";
      for (Fault known : all_faults()) std::cerr << " " << to_string(known);
      std::cerr << "\n";
      return false;
    }
    faults.add(*f);
  }
  return true;
}

bool output_path_ok(const char* flag, const std::string& requested) {
  if (requested.empty()) return true;
  Result<std::string> resolved = resolve_output_path(requested);
  if (!resolved) {
    Error e = resolved.error();
    e.key_path = flag;
    std::cerr << e.format() << "\n";
    return false;
  }
  const std::string& path = resolved.value();
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (parent.empty() || std::filesystem::is_directory(parent, ec)) return true;
  std::cerr << path << ": error: " << flag << ": the directory " << parent.string()
            << " does not exist\n  hint: create it first, or write the file elsewhere\n";
  return false;
}

void add_cpu_threads_option(CLI::App* cmd) {
  cmd->add_option_function<std::string>(
         "--cpu-threads", [](const std::string& text) { set_cpu_threads(*parse_cpu_threads(text)); },
         "Threads for the CPU reference: a number 1..1024 or auto (default: MLASIM_CPU_THREADS, else\n"
         "every CPU this process may use); results are bitwise the same for any count")
      ->type_name("N|auto")
      ->check(CLI::Validator(
          [](std::string& text) {
            return parse_cpu_threads(text) ? std::string() : "want auto or a number 1..1024, got \"" + text + "\"";
          },
          ""));
}

namespace {

// The file a path names, for comparing: symbolic links and "..", resolved as far as they exist.
std::string same_file_key(const std::string& path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  return ec ? std::filesystem::absolute(path).lexically_normal().string() : p.string();
}

}  // namespace

bool outputs_distinct(const NamedPaths& outputs, const NamedPaths& inputs) {
  std::vector<std::pair<std::string, std::string>> seen;  // (key, flag)
  for (const auto& [flag, path] : outputs) {
    if (path.empty()) continue;
    const std::string key = same_file_key(path);
    for (const auto& [in_role, in_path] : inputs) {
      if (in_path.empty() || same_file_key(in_path) != key) continue;
      std::cerr << path << ": error: " << flag << " names " << in_role
                << ", which this command reads: writing it would replace it\n"
                << "  hint: write " << flag << " elsewhere\n";
      return false;
    }
    for (const auto& [other_key, other_flag] : seen) {
      if (other_key != key) continue;
      std::cerr << path << ": error: " << other_flag << " and " << flag
                << " name the same file: one output would replace the other\n"
                << "  hint: give each output a file of its own\n";
      return false;
    }
    seen.emplace_back(key, flag);
  }
  return true;
}

Status write_output_set(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::string> targets;
  for (const auto& [path, text] : files)
    if (!path.empty()) targets.push_back(path);
  for (const std::string& note : recover_output_leftovers(targets)) std::cerr << "note: " << note << "\n";
  std::vector<std::unique_ptr<AtomicOutputFile>> outputs;
  std::vector<AtomicOutputFile*> finished;
  for (const auto& [path, text] : files) {
    if (path.empty()) continue;
    auto& file = *outputs.emplace_back(std::make_unique<AtomicOutputFile>());
    if (Status st = file.open(path); !st) return st;
    file.write(text);
    if (Status st = file.finish(); !st) return st;
    finished.push_back(&file);
  }
  return publish_together(finished);
}

CLI::Validator seed_validator() {
  return CLI::Validator(
      [](std::string& text) {
        unsigned long long v = 0;
        const char* end = text.data() + text.size();
        const auto [ptr, ec] = std::from_chars(text.data(), end, v);
        if (!text.empty() && ptr == end && ec == std::errc()) return std::string();
        return "want a whole number 0..18446744073709551615, got \"" + text.substr(0, 40) + "\"";
      },
      "SEED");
}

CLI::Validator seconds_validator(double max_seconds) {
  return CLI::Validator(
      [max_seconds](std::string& text) {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        if (!text.empty() && end == text.c_str() + text.size() && std::isfinite(v) && v > 0 && v <= max_seconds)
          return std::string();
        return fmt::format("want seconds > 0 and at most {:.0f}, got \"{}\"", max_seconds, text.substr(0, 40));
      },
      "S");
}

bool cpu_threads_env_ok() {
  const char* env = std::getenv("MLASIM_CPU_THREADS");
  if (env == nullptr || parse_cpu_threads(env)) return true;
  std::cerr << "mlasim: error: MLASIM_CPU_THREADS=\"" << env << "\": want auto or a number 1..1024\n"
            << "  hint: unset it to use every CPU, or see --cpu-threads\n";
  return false;
}

int check_device(const std::string& device) {
  if (device == "cpu") return kExitOk;
#ifdef MLASIM_HAVE_CUDA
  std::string why;
  const CudaBackendModule* cuda = cuda_backend_module(&why);
  if (!cuda) {
    std::cerr << "mlasim: --device cuda requested but the CUDA backend cannot be loaded: " << why << "\n";
    return kExitNoGpu;
  }
  if (cuda->usable_device_count(&why) == 0) {
    std::cerr << "mlasim: --device cuda requested but no usable CUDA device: " << why << "\n";
    return kExitNoGpu;
  }
  return kExitOk;
#else
  std::cerr << "mlasim: --device cuda requested but this mlasim was built without CUDA (see `mlasim version`)\n";
  return kExitNoGpu;
#endif
}

}  // namespace mlasim::cli
