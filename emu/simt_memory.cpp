// Shared memory of the SIMT emulator (see simt.h): the dynamic shared memory, cp.async and its groups,
// and the racecheck of its 16-byte chunks.
#include "emu/simt_worker.h"


namespace mlasim::emu {
namespace detail {

void perform(Worker& w, const std::vector<CpCopy>& g, int warp) {
  for (const CpCopy& c : g) {
    Chunk& ch = w.chunks[c.dst / 16];
    --ch.in_flight;
    ch.write_epoch = w.epoch;
    ch.writer_warp = warp;
    if (c.bytes > 0) std::memcpy(w.smem + c.dst, c.src, static_cast<std::size_t>(c.bytes));
    if (c.bytes < 16) std::memset(w.smem + c.dst + c.bytes, 0, static_cast<std::size_t>(16 - c.bytes));
  }
}

const unsigned char* smem_operand(Worker& w, std::uint32_t addr, const char* what) {
  if (addr % 16 != 0 || static_cast<std::size_t>(addr) + 16 > w.smem_bytes) {
    char msg[200];
    std::snprintf(msg, sizeof msg, "%s: shared address %u is misaligned or past the %zu bytes of dynamic shared memory",
                  what, addr, w.smem_bytes);
    fail(msg);
  }
  return w.smem + addr;
}

}  // namespace detail

using namespace detail;

unsigned char* dynamic_smem() { return cur_worker("dynamic shared memory").smem; }

std::uint32_t shared_offset(const void* p) {
  Worker& w = cur_worker("__cvta_generic_to_shared");
  const auto* c = static_cast<const unsigned char*>(p);
  if (c < w.smem || c > w.smem + w.smem_bytes)
    fail("__cvta_generic_to_shared of an address outside the block's dynamic shared memory");
  return static_cast<std::uint32_t>(c - w.smem);
}

void cp_async_16(std::uint32_t dst, const void* src, int src_bytes) {
  Worker& w = cur_worker("cp.async");
  (void)smem_operand(w, dst, "cp.async destination");
  if (src_bytes < 0 || src_bytes > 16) fail("cp.async: src-size must be 0..16");
  if (reinterpret_cast<std::uintptr_t>(src) % 16 != 0) fail("cp.async.cg: the global source must be 16-byte aligned");
  if (!device_range_ok(src, src_bytes > 0 ? static_cast<std::size_t>(src_bytes) : 1)) {
    char msg[200];
    std::snprintf(msg, sizeof msg, "cp.async source %p (%d bytes) lies outside every device allocation", src,
                  src_bytes);
    fail(msg);
  }
  Chunk& ch = w.chunks[dst / 16];
  const int warp = w.cur->linear / 32;
  if (ch.read_epoch == w.epoch && ch.reader_warp != warp) {
    char msg[220];
    std::snprintf(msg, sizeof msg,
                  "racecheck: cp.async into shared byte %u, which warp %d read with ldmatrix since the last "
                  "__syncthreads (write after read)",
                  dst, ch.reader_warp >= 0 ? ch.reader_warp : -1);
    fail(msg);
  }
  ++ch.in_flight;
  w.cur->pending.push_back({dst, src, src_bytes});
}

void cp_async_commit() {
  Worker& w = cur_worker("cp.async.commit_group");
  w.cur->groups.push_back(std::move(w.cur->pending));
  w.cur->pending.clear();
}

void cp_async_wait(int n) {
  Worker& w = cur_worker("cp.async.wait_group");
  auto& groups = w.cur->groups;
  while (static_cast<int>(groups.size()) > n) {
    perform(w, groups.front(), w.cur->linear / 32);
    groups.pop_front();
  }
}

}  // namespace mlasim::emu
