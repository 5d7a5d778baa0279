#pragma once
// Error conventions of the core: shapes -> std::invalid_argument,
// NaN/inf and definiteness -> std::domain_error, user cancel -> Cancelled.
#include <Eigen/Core>
#include <functional>
#include <stdexcept>
#include <string>

namespace directable {

using Index = Eigen::Index;

//! Thrown when a progress callback asks to stop (Ctrl-C in Python).
struct Cancelled : std::runtime_error {
  Cancelled() : std::runtime_error("computation cancelled") {}
};

//! Progress report: (work done, total work). Returning false cancels.
using ProgressFn = std::function<bool(Index, Index)>;

std::string shape_str(Index rows, Index cols);
std::string shape_str(Index T, Index rows, Index cols);

//! Throws std::invalid_argument "`name` must have shape E, got G".
[[noreturn]] void throw_shape(const std::string& name, const std::string& expected,
                              const std::string& got);

void check_shape(const std::string& name, Index rows, Index cols, Index exp_rows,
                 Index exp_cols);

//! Throws std::domain_error if any entry of data[0..size) is NaN or inf.
//! Monotonic wall-clock time in seconds (for throttles and timings).
double now_seconds();

//! Throws domain_error naming the first NaN/inf entry; its flat index is
//! reported as first_index + i (data may be one block of a larger array).
void check_finite(const std::string& name, const double* data, Index size, Index first_index = 0);

void check_positive(const std::string& name, double value);

//! Throws std::domain_error unless the symmetric part of M is positive
//! definite (Cholesky); `what` describes the matrix in the message.
void check_positive_definite(const std::string& what, const Eigen::Ref<const Eigen::MatrixXd>& M);

//! Calls the callback at most every `interval` seconds (and at the end);
//! throws Cancelled when it returns false. Not thread-safe: call from one thread.
class ProgressThrottle {
 public:
  ProgressThrottle(const ProgressFn* fn, Index total, double interval = 0.05);
  //! Returns false once cancelled (so workers can stop), never throws.
  bool report(Index done);
  //! Final report; throws Cancelled if the run was cancelled.
  void finish(Index done);
  bool cancelled() const { return cancelled_; }

 private:
  const ProgressFn* fn_;
  Index total_;
  double interval_;
  double last_;
  bool cancelled_ = false;
};

}  // namespace directable
