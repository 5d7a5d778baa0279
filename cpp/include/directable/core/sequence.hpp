#pragma once
// Sequences of matrices over time, stored as C-contiguous (T, rows, cols)
// arrays: each step is a row-major block, exactly NumPy's layout, so arrays
// cross the Python boundary without copies.
#include <Eigen/Core>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "directable/core/errors.hpp"

namespace directable {

using RowMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatMap = Eigen::Map<RowMatrix>;
using ConstMatMap = Eigen::Map<const RowMatrix>;
using VecMap = Eigen::Map<Eigen::VectorXd>;
using ConstVecMap = Eigen::Map<const Eigen::VectorXd>;

//! Read-only view of T matrices (rows x cols). step_stride == 0 means one
//! matrix constant in time (then any step index is valid).
struct SeqView {
  const double* data = nullptr;
  Index T = 0;  //!< number of steps (1 for a constant matrix)
  Index rows = 0;
  Index cols = 0;
  Index step_stride = 0;  //!< rows * cols, or 0 when constant in time

  SeqView() = default;
  SeqView(const double* d, Index T_, Index r, Index c, bool constant)
      : data(d), T(T_), rows(r), cols(c), step_stride(constant ? 0 : r * c) {}
  static SeqView constant(const double* d, Index r, Index c) { return SeqView(d, 1, r, c, true); }

  bool empty() const { return data == nullptr; }
  bool is_constant() const { return step_stride == 0; }
  ConstMatMap operator[](Index i) const { return ConstMatMap(data + i * step_stride, rows, cols); }

  //! Checks block shape and that the length is 1 (constant) or T.
  void check(const std::string& name, Index exp_rows, Index exp_cols, Index horizon) const;
  void check_finite(const std::string& name) const;
};

//! Allocator that leaves doubles uninitialized on resize, for outputs that
//! are written in full right away (zero-filling 65 MB of gains is ~10% of a
//! sweep).
//! Large blocks (gain and cost-to-go schedules run to 100 MB) are 2 MB
//! aligned and, on Linux, advised as transparent huge pages: first touch then
//! costs one fault per 2 MB instead of one per 4 KB (~20 ms per 100 MB).
//! A few freed blocks are kept for reuse by the next request of the same
//! size (solutions re-made call after call then skip the faults).
void* allocate_large(std::size_t bytes);
void free_large(void* p, std::size_t bytes);
constexpr std::size_t kLargeBlock = std::size_t(1) << 21;

template <class T>
struct NoInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = NoInitAllocator<U>;
  };
  NoInitAllocator() = default;
  template <class U>
  NoInitAllocator(const NoInitAllocator<U>&) {}
  T* allocate(std::size_t count) {
    if (count * sizeof(T) >= kLargeBlock) return static_cast<T*>(allocate_large(count * sizeof(T)));
    return std::allocator<T>::allocate(count);
  }
  void deallocate(T* p, std::size_t count) {
    if (count * sizeof(T) >= kLargeBlock)
      free_large(p, count * sizeof(T));
    else
      std::allocator<T>::deallocate(p, count);
  }
  template <class U>
  void construct(U* p) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

//! Owning sequence of T matrices; storage never moves after construction,
//! so NumPy views handed out stay valid for the owner's lifetime.
class MatrixSeq {
 public:
  struct Uninitialized {};
  MatrixSeq() = default;
  MatrixSeq(Index T, Index rows, Index cols) : T_(T), rows_(rows), cols_(cols), data_(T * rows * cols, 0.0) {}
  //! Storage left uninitialized: every entry must be written before use.
  MatrixSeq(Index T, Index rows, Index cols, Uninitialized) : T_(T), rows_(rows), cols_(cols), data_(T * rows * cols) {}

  Index T() const { return T_; }
  Index rows() const { return rows_; }
  Index cols() const { return cols_; }
  double* data() { return data_.data(); }
  const double* data() const { return data_.data(); }
  MatMap operator[](Index i) { return MatMap(data_.data() + i * rows_ * cols_, rows_, cols_); }
  ConstMatMap operator[](Index i) const { return ConstMatMap(data_.data() + i * rows_ * cols_, rows_, cols_); }
  //! A single stored matrix is viewed as constant in time.
  SeqView view() const { return SeqView(data_.data(), T_, rows_, cols_, T_ == 1); }

 private:
  Index T_ = 0, rows_ = 0, cols_ = 0;
  std::vector<double, NoInitAllocator<double>> data_;
};

//! Owning (T, dim) array of vectors (states, controls), row per step.
class VectorSeq {
 public:
  VectorSeq() = default;
  VectorSeq(Index T, Index dim) : T_(T), dim_(dim), data_(T * dim, 0.0) {}
  //! Storage left uninitialized: every entry must be written before use.
  VectorSeq(Index T, Index dim, MatrixSeq::Uninitialized) : T_(T), dim_(dim), data_(T * dim) {}
  Index T() const { return T_; }
  Index dim() const { return dim_; }
  double* data() { return data_.data(); }
  const double* data() const { return data_.data(); }
  VecMap operator[](Index i) { return VecMap(data_.data() + i * dim_, dim_); }
  ConstVecMap operator[](Index i) const { return ConstVecMap(data_.data() + i * dim_, dim_); }

 private:
  Index T_ = 0, dim_ = 0;
  std::vector<double, NoInitAllocator<double>> data_;
};

}  // namespace directable
