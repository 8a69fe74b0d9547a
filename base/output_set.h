// Several output files published as one set, and what a killed mlasim left beside its outputs.
//
// A set of finished files (each synced beside its target, AtomicOutputFile::finish) is published
// through a journal: a file naming every temporary and its target is written (atomically) beside
// each target, then each temporary is renamed over its target, then the journals are removed. A
// kill at any moment leaves either no journal, so nothing was renamed (the old set, plus
// temporaries), or a journal naming finished temporaries, which recover_output_leftovers renames
// into place (the new set). Either way, once the next mlasim writing one of those outputs has
// started, the set is whole and no temporary is left.
#pragma once

#include <string>
#include <vector>

#include "base/atomic_file.h"
#include "base/status.h"

namespace mlasim {

// Publishes every file of `files` (each finished) or, when the journals cannot be written (a full
// disk), none: the error then leaves the targets as they were. One file is renamed directly.
Status publish_together(const std::vector<AtomicOutputFile*>& files);

// Before writing `targets`: completes the journals of killed processes found beside them (their
// whole sets, wherever the other files are), then removes those processes' temporaries
// (`TARGET.tmp.PID`, `TARGET.publish.PID.tmp.PID`). Files of a process still running are left
// alone. Returns one line per action, for a note on stderr.
std::vector<std::string> recover_output_leftovers(const std::vector<std::string>& targets);

// True when no process `pid` runs (its leftovers may go). This process counts as running.
bool process_gone(long pid);

}  // namespace mlasim
