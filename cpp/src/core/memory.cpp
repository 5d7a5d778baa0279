#include "directable/core/memory.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <new>
#ifdef __linux__
#include <sys/mman.h>
#endif
#if defined(__unix__) || defined(__APPLE__)
#include <unistd.h>
#endif

#include "directable/core/allocation.hpp"

namespace directable {

void check_allocation(const std::string& what, double bytes) {
  double physical = 0.0;
#if defined(_SC_PHYS_PAGES) && defined(_SC_PAGE_SIZE)
  physical = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
#endif
  if (!(physical > 0.0)) physical = 1e15;  // unknown: only absurd sizes fail here
  if (!(bytes <= physical)) {
    char text[64];
    std::snprintf(text, sizeof text, "%.3g GB, more than the %.3g GB of memory", bytes / 1e9, physical / 1e9);
    throw AllocationTooLarge(what + " would need " + text);
  }
}

namespace {

// A few freed large blocks, kept for the next request of the same size.
// Re-tuning allocates and drops a solution of the same shape call after
// call, and a fresh block costs a page fault and the kernel's zeroing per
// 2 MB: ~1.5 ms for the 21 MB cost-to-go of an n = 48, T = 1000 re-tune
// (7% of it). Never destroyed: blocks may be freed during static
// destruction; the process exit returns the memory.
class LargeBlockCache {
 public:
  void* take(std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (int k = 0; k < count_; ++k) {
      if (blocks_[k].bytes != bytes) continue;
      void* p = blocks_[k].p;
      total_ -= bytes;
      blocks_[k] = blocks_[--count_];
      return p;
    }
    return nullptr;
  }
  // False when the block does not fit: the caller frees it.
  bool keep(void* p, std::size_t bytes) {
    if (bytes > kMaxBytes / 2) return false;
    std::lock_guard<std::mutex> lock(mutex_);
    while (count_ > 0 && (count_ == kMax || total_ + bytes > kMaxBytes)) {  // drop the oldest
      std::free(blocks_[0].p);
      total_ -= blocks_[0].bytes;
      std::copy(blocks_ + 1, blocks_ + count_, blocks_);
      --count_;
    }
    blocks_[count_++] = {p, bytes};
    total_ += bytes;
    return true;
  }

 private:
  static constexpr int kMax = 4;
  // Bounded so that a process keeps at most 64 MB it no longer uses (a
  // re-tune at n = 48, T = 1000 re-makes 28 MB of K and P).
  static constexpr std::size_t kMaxBytes = std::size_t(64) << 20;
  struct Block {
    void* p;
    std::size_t bytes;
  };
  std::mutex mutex_;
  Block blocks_[kMax] = {};
  int count_ = 0;
  std::size_t total_ = 0;
};

LargeBlockCache& large_block_cache() {
  static auto* cache = new LargeBlockCache;
  return *cache;
}

std::size_t large_block_bytes(std::size_t bytes) { return (bytes + kLargeBlock - 1) / kLargeBlock * kLargeBlock; }

}  // namespace

void* allocate_large(std::size_t bytes) {
  const std::size_t rounded = large_block_bytes(bytes);
  if (void* p = large_block_cache().take(rounded)) return p;
  void* p = std::aligned_alloc(kLargeBlock, rounded);
  if (!p) throw std::bad_alloc();
#ifdef __linux__
  madvise(p, rounded, MADV_HUGEPAGE);  // advice only: failure just means 4 KB pages
#endif
  return p;
}

void free_large(void* p, std::size_t bytes) {
  if (p && !large_block_cache().keep(p, large_block_bytes(bytes))) std::free(p);
}

}  // namespace directable
