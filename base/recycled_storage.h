// Storage handed on from an object about to be dropped to its successor of the same kind: fuzz
// replays tens of thousands of small traces on a thread, and an engine built afresh for each spent
// a fifth of its time in malloc and free. The successor is built exactly as a fresh one; only the
// capacity of the donor's vectors is reused (their contents are cleared).
#pragma once

#include <vector>

namespace mlasim {

template <class T>
void take_capacity(std::vector<T>& to, std::vector<T>& from) {
  to.swap(from);
  to.clear();
}

}  // namespace mlasim
