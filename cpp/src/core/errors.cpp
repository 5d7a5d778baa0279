#include <Eigen/Cholesky>
#include <chrono>
#include <cmath>
#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <new>
#include <sstream>
#ifdef __linux__
#include <sys/mman.h>
#endif

#include "directable/core/errors.hpp"
#include "directable/core/sequence.hpp"

namespace directable {

namespace {

bool all_finite(const double* data, Index size) {
  // x - x is 0 for finite x and NaN otherwise; independent partial sums
  // vectorize (one running sum would be bound by the add latency).
  double acc[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
  Index i = 0;
  for (; i + 8 <= size; i += 8)
    for (int k = 0; k < 8; ++k) acc[k] += data[i + k] - data[i + k];
  for (; i < size; ++i) acc[0] += data[i] - data[i];
  double total = 0.0;
  for (double a : acc) total += a;
  return total == 0.0;
}

}  // namespace

double now_seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

std::string shape_str(Index rows, Index cols) {
  std::ostringstream s;
  s << "(" << rows << ", " << cols << ")";
  return s.str();
}

std::string shape_str(Index T, Index rows, Index cols) {
  std::ostringstream s;
  s << "(" << T << ", " << rows << ", " << cols << ")";
  return s.str();
}

void throw_shape(const std::string& name, const std::string& expected, const std::string& got) {
  throw std::invalid_argument(name + " must have shape " + expected + ", got " + got);
}

void check_shape(const std::string& name, Index rows, Index cols, Index exp_rows, Index exp_cols) {
  if (rows != exp_rows || cols != exp_cols) throw_shape(name, shape_str(exp_rows, exp_cols), shape_str(rows, cols));
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


void check_finite(const std::string& name, const double* data, Index size, Index first_index) {
  if (all_finite(data, size)) return;  // the loop below only names the first bad entry
  for (Index i = 0; i < size; ++i) {
    if (!std::isfinite(data[i])) {
      std::ostringstream s;
      s << name << " must be finite, got " << data[i] << " at flat index " << first_index + i;
      throw std::domain_error(s.str());
    }
  }
}

void check_positive(const std::string& name, double value) {
  if (!(value > 0.0) || !std::isfinite(value)) {
    std::ostringstream s;
    s << name << " must be a positive finite number, got " << value;
    throw std::domain_error(s.str());
  }
}

void check_positive_definite(const std::string& what, const Eigen::Ref<const Eigen::MatrixXd>& M) {
  Eigen::MatrixXd sym = 0.5 * (M + M.transpose());
  Eigen::LLT<Eigen::MatrixXd> llt(sym);
  if (llt.info() != Eigen::Success) throw std::domain_error(what + " must be symmetric positive definite");
}

void SeqView::check(const std::string& name, Index exp_rows, Index exp_cols, Index horizon) const {
  if (empty()) throw std::invalid_argument(name + " is missing");
  if (rows != exp_rows || cols != exp_cols) {
    std::string got = is_constant() ? shape_str(rows, cols) : shape_str(T, rows, cols);
    throw_shape(name, shape_str(exp_rows, exp_cols) + " or " + shape_str(horizon, exp_rows, exp_cols), got);
  }
  if (!is_constant() && T != horizon) {
    std::ostringstream s;
    s << name << " has " << T << " steps but the horizon is " << horizon << " (expected shape "
      << shape_str(horizon, exp_rows, exp_cols) << ", got " << shape_str(T, rows, cols) << ")";
    throw std::invalid_argument(s.str());
  }
}

void SeqView::check_finite(const std::string& name) const {
  if (!empty()) directable::check_finite(name, data, (is_constant() ? 1 : T) * rows * cols);
}

ProgressThrottle::ProgressThrottle(const ProgressFn* fn, Index total, double interval)
    : fn_(fn && *fn ? fn : nullptr), total_(total), interval_(interval), last_(now_seconds()) {}

bool ProgressThrottle::report(Index done) {
  if (cancelled_) return false;
  if (!fn_) return true;
  double t = now_seconds();
  if (t - last_ < interval_) return true;
  last_ = t;
  if (!(*fn_)(done, total_)) cancelled_ = true;
  return !cancelled_;
}

void ProgressThrottle::finish(Index done) {
  if (!cancelled_ && fn_ && !(*fn_)(done, total_)) cancelled_ = true;
  if (cancelled_) throw Cancelled();
}

}  // namespace directable
