#pragma once
// The interface every reduced model offers to the controllers:
//   z' = F(z, t) + B w,
// with the Jacobian dF/dz for linearization and one integration step.
// A model never knows a controller.
#include <Eigen/Core>
#include <memory>

#include "directable/core/sequence.hpp"
#include "directable/core/progress.hpp"

namespace directable {

//! Per-run buffers of a model's step (Model/Data split: a Model is
//! immutable and may be shared by threads, each with its own data).
struct ModelData {
  virtual ~ModelData() = default;
  Eigen::VectorXd k1, k2, k3, k4, tmp, Bw;  //!< n each
};

class Model {
 public:
  virtual ~Model() = default;
  virtual Index state_dim() const = 0;    //!< n
  virtual Index control_dim() const = 0;  //!< s
  //! F(z, t), n.
  virtual void dynamics(const Eigen::Ref<const Eigen::VectorXd>& z, double t, Eigen::Ref<Eigen::VectorXd> F) const = 0;
  //! dF/dz at (z, t), n x n.
  virtual void jacobian(const Eigen::Ref<const Eigen::VectorXd>& z, double t, Eigen::Ref<RowMatrix> J) const = 0;
  //! B, n x s.
  virtual const Eigen::MatrixXd& control_matrix() const = 0;

  virtual std::unique_ptr<ModelData> create_data() const;
  //! z_next = state after dt with w held constant. Default: classical RK4.
  virtual void step(const Eigen::Ref<const Eigen::VectorXd>& z, double t, double dt,
                    const Eigen::Ref<const Eigen::VectorXd>& w, Eigen::Ref<Eigen::VectorXd> z_next,
                    ModelData& data) const;
};

//! A_i = dF/dz at z_ref[i], t0 + i dt, for i < T (T = 0: every state of
//! z_ref but the last). Parallel over steps.
MatrixSeq linearize(const Model& model, SeqView z_ref, Index T, double t0, double dt, int threads = 0,
                    const ProgressFn* progress = nullptr);

}  // namespace directable
