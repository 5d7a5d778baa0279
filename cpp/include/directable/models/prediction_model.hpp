#pragma once
// The discrete-time prediction model a horizon optimizer plans with:
//   x_{i+1} = f_i(x_i, u_i),
// with its vector-Jacobian products (the adjoint pass) and, optionally, its
// Jacobians (Gauss-Newton). `i` is the step inside the window (models may be
// time-varying). A model is immutable; every buffer a call needs lives in a
// PredictionData made by create_data(), one per thread.
#include <Eigen/Core>
#include <memory>

#include "directable/core/types.hpp"

namespace directable {

//! Per-thread buffers of a prediction model (tapes, scratch). Models
//! without buffers use this empty base.
class PredictionModel;

struct PredictionData {
  virtual ~PredictionData() = default;
  const PredictionModel* model = nullptr;  //!< the model that made it (create_data)
};

class PredictionModel {
 public:
  virtual ~PredictionModel() = default;
  virtual Index n() const = 0;  //!< state dimension
  virtual Index s() const = 0;  //!< control dimension
  //! Buffers for the calls below, sized for this model; one per thread.
  std::unique_ptr<PredictionData> create_data() const;
  //! Throws invalid_argument unless `data` was made by this model.
  void check_data(const PredictionData& data) const;
  //! x_next = f_i(x, u).
  virtual void step(const CRefVec& x, const CRefVec& u, RefVec x_next, Index i, PredictionData& data) const = 0;
  //! gx = (df_i/dx)' lam, gu = (df_i/du)' lam, evaluated at (x, u).
  virtual void vjp(const CRefVec& x, const CRefVec& u, const CRefVec& lam, RefVec gx, RefVec gu, Index i,
                   PredictionData& data) const = 0;
  //! gu alone, for callers that need no gx (the adjoint pass at the window's
  //! first step, whose state is given): gx is scratch, left unspecified.
  //! Models override it where gu costs less than the whole VJP.
  virtual void vjp_controls(const CRefVec& x, const CRefVec& u, const CRefVec& lam, RefVec gx, RefVec gu, Index i,
                            PredictionData& data) const {
    vjp(x, u, lam, gx, gu, i, data);
  }
  //! Whether jacobians() is available (needed by the Gauss-Newton method).
  virtual bool has_jacobians() const { return false; }
  //! A = df_i/dx (n x n), B = df_i/du (n x s) at (x, u). Default: throws
  //! invalid_argument (the model offers VJPs only).
  virtual void jacobians(const CRefVec& x, const CRefVec& u, Eigen::Ref<RowMatrix> A, Eigen::Ref<RowMatrix> B,
                         Index i, PredictionData& data) const;

  //! Checks a state (n) and a control (s) argument: shape and finiteness;
  //! throws naming `x_name` / `u_name`.
  void check_arguments(const CRefVec& x, const char* x_name, const CRefVec& u, const char* u_name) const;

 protected:
  //! The model's own buffers (create_data() stamps them). Default: none.
  virtual std::unique_ptr<PredictionData> make_data() const;
};

}  // namespace directable
