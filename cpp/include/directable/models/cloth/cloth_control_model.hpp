#pragma once
// The cloth seen through the continuous Model interface, so that LQR, MPC
// and simulate can drive it: z = [q, q'] (6V), controls w are the forces on
// the listed nodes (3 per node), z' = [q'; M^-1 F^A(q, q')] + B w with
// B = [0; M^-1 S]. Pinned nodes have zero rows (they never move).
#include <memory>
#include <vector>

#include "directable/models/cloth/cloth.hpp"
#include "directable/models/model.hpp"

namespace directable {

struct ClothControlData : ModelData {
  std::unique_ptr<ClothData> cloth;
  Eigen::VectorXd x, v, u;  //!< 3V each
};

class ClothControlModel final : public Model {
 public:
  //! controlled: node indices, each in range, not pinned, listed once.
  ClothControlModel(std::shared_ptr<const ClothModel> cloth, std::vector<Index> controlled);

  Index state_dim() const override { return 6 * cloth_->node_count(); }
  Index control_dim() const override { return 3 * static_cast<Index>(controlled_.size()); }
  void dynamics(const Eigen::Ref<const Eigen::VectorXd>& z, double t, Eigen::Ref<Eigen::VectorXd> F) const override;
  //! Analytic: [[0, I], [M^-1 dF/dx, M^-1 dF/dv]], pinned rows zero.
  void jacobian(const Eigen::Ref<const Eigen::VectorXd>& z, double t, Eigen::Ref<RowMatrix> J) const override;
  const Eigen::MatrixXd& control_matrix() const override { return B_; }
  std::unique_ptr<ModelData> create_data() const override;
  //! One symplectic Euler step (eq. 4-5), the cloth's own integrator.
  void step(const Eigen::Ref<const Eigen::VectorXd>& z, double t, double dt, const Eigen::Ref<const Eigen::VectorXd>& w,
            Eigen::Ref<Eigen::VectorXd> z_next, ModelData& data) const override;

  const ClothModel& cloth() const { return *cloth_; }
  const std::vector<Index>& controlled() const { return controlled_; }

 private:
  std::shared_ptr<const ClothModel> cloth_;
  std::vector<Index> controlled_;
  Eigen::MatrixXd B_;  //!< 6V x 3c
};

}  // namespace directable
