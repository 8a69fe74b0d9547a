// posix_spawn + wait4: the child's own resource usage, nothing of the benchmark's.
#include "tools/bench/child_process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <chrono>
#include <cstring>

extern char** environ;

namespace mlasim::bench {

Child run_child(const std::vector<std::string>& args, const std::string& out, const std::string& err) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  Child c;
  pid_t pid = 0;
  const auto t0 = std::chrono::steady_clock::now();
  const int e = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (e != 0) {
    c.error = "cannot start " + args[0] + ": " + std::strerror(e);
    return c;
  }
  int status = 0;
  rusage ru{};
  if (wait4(pid, &status, 0, &ru) != pid) {
    c.error = "wait4 failed";
    return c;
  }
  c.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  c.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  c.user_s = static_cast<double>(ru.ru_utime.tv_sec) + static_cast<double>(ru.ru_utime.tv_usec) * 1e-6;
  c.cpu_s = c.user_s + static_cast<double>(ru.ru_stime.tv_sec) + static_cast<double>(ru.ru_stime.tv_usec) * 1e-6;
  c.peak_rss_kib = ru.ru_maxrss;  // KiB on Linux
  c.preempted = ru.ru_nivcsw;
  return c;
}

}  // namespace mlasim::bench
