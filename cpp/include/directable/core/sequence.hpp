#pragma once
// Sequences of matrices over time, stored as C-contiguous (T, rows, cols)
// arrays: each step is a row-major block, exactly NumPy's layout, so arrays
// cross the Python boundary without copies.
#include <Eigen/Core>
#include <string>
#include <vector>

#include "directable/core/errors.hpp"
#include "directable/core/memory.hpp"
#include "directable/core/types.hpp"

namespace directable {

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
