// Several output files published as one set, and what a killed mlasim left beside its outputs.
//
// A set of finished files (each synced beside its target, AtomicOutputFile::finish) is published
// through a journal: a file naming every temporary and its target is written (atomically) beside
// each target, then each temporary is renamed over its target, then the journals are removed. A
// kill at any moment leaves either no journal, so nothing was renamed (the old set, plus
// temporaries), or a journal naming finished temporaries, which recover_output_leftovers renames
// into place (the new set). Either way, once the next mlasim writing those outputs has started,
// the set is whole and no temporary is left.
//
// What lies beside an output is untrusted (a shared workspace, a checked-out repository): a
// journal is acted on only when it is this user's regular file (never through a link, never a
// FIFO), carries the marker line and a checksum of its contents, and names only outputs of the
// command now running, each temporary its target's `TARGET.tmp.PID` beside it. Temporaries go only
// when they are this user's regular files with one link. Anything else is left alone, with a note.
#pragma once

#include <string>
#include <vector>

#include "base/atomic_file.h"
#include "base/status.h"

namespace mlasim {

// Publishes every file of `files` (each finished) or, when the journals cannot be written (a full
// disk), none: the error then leaves the targets as they were. One file is renamed directly.
Status publish_together(const std::vector<AtomicOutputFile*>& files);

// Before writing `targets`: completes the journals of killed processes found beside them when
// every file a journal names is one of `targets`, then removes those processes' temporaries
// (`TARGET.tmp.PID`, `TARGET.publish.PID.tmp.PID`). Files of a process still running, and
// whatever the rules above refuse, are left alone. Returns one line per action or refusal, for a
// note on stderr.
std::vector<std::string> recover_output_leftovers(const std::vector<std::string>& targets);

// True when no process `pid` runs (its leftovers may go). This process counts as running.
bool process_gone(long pid);

}  // namespace mlasim
