// Runs a program as a child, as a user runs it, and reports what it cost: wall time, CPU time and
// peak RSS (the end-to-end benchmarks' measurement).
#pragma once

#include <string>
#include <vector>

namespace mlasim::bench {

struct Child {
  int exit_code = -1;                    // or 128 + signal; -1 when it could not be started
  double wall_s = 0, cpu_s = 0;          // cpu: the child's user + system time
  double user_s = 0;                     // user time alone
  long peak_rss_kib = 0, preempted = 0;  // preempted: involuntary context switches (a busy machine)
  std::string error;                     // why it could not be started or waited for
};

// Runs args (args[0] a path) with stdout and stderr sent to the files `out` and `err`; the wall time
// is taken around spawn + wait4, the peak RSS is this child's.
Child run_child(const std::vector<std::string>& args, const std::string& out, const std::string& err);

}  // namespace mlasim::bench
