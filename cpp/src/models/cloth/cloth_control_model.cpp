#include "directable/models/cloth/cloth_control_model.hpp"

#include <string>

namespace directable {

namespace {

// Each dynamics/jacobian call builds its own buffers: the Model interface
// gives these calls no Data object, and both are outside the hot stepping path.
std::unique_ptr<ClothData> scratch(const ClothModel& cloth) { return cloth.create_data(); }

}  // namespace

ClothControlModel::ClothControlModel(std::shared_ptr<const ClothModel> cloth, std::vector<Index> controlled)
    : cloth_(std::move(cloth)), controlled_(std::move(controlled)) {
  if (!cloth_) throw std::invalid_argument("cloth must not be None");
  const Index V = cloth_->node_count();
  std::vector<std::uint8_t> seen(V, 0);
  for (Index k : controlled_) {
    if (k < 0 || k >= V)
      throw std::invalid_argument("controlled node " + std::to_string(k) + " is out of range [0, " + std::to_string(V) + ")");
    if (cloth_->pinned()[k]) throw std::invalid_argument("controlled node " + std::to_string(k) + " is pinned");
    if (seen[k]) throw std::invalid_argument("controlled node " + std::to_string(k) + " is listed twice");
    seen[k] = 1;
  }
  B_.setZero(6 * V, 3 * static_cast<Index>(controlled_.size()));
  for (std::size_t c = 0; c < controlled_.size(); ++c)
    for (int p = 0; p < 3; ++p) B_(3 * V + 3 * controlled_[c] + p, 3 * c + p) = 1.0 / cloth_->node_masses()[controlled_[c]];
}

void ClothControlModel::dynamics(const Eigen::Ref<const Eigen::VectorXd>& z, double, Eigen::Ref<Eigen::VectorXd> F) const {
  const Index n = 3 * cloth_->node_count();
  auto d = scratch(*cloth_);
  cloth_->applied_forces(z.head(n), z.tail(n), d->F, *d);
  for (Index a = 0; a < cloth_->node_count(); ++a) {
    const bool pin = cloth_->pinned()[a];
    const double inv_m = 1.0 / cloth_->node_masses()[a];
    for (int p = 0; p < 3; ++p) {
      F[3 * a + p] = pin ? 0.0 : z[n + 3 * a + p];
      F[n + 3 * a + p] = pin ? 0.0 : d->F[3 * a + p] * inv_m;
    }
  }
}

void ClothControlModel::jacobian(const Eigen::Ref<const Eigen::VectorXd>& z, double, Eigen::Ref<RowMatrix> J) const {
  const Index n = 3 * cloth_->node_count();
  auto d = scratch(*cloth_);
  cloth_->forces_and_jacobians(z.head(n), z.tail(n), *d);
  J.setZero();
  const auto& rows = cloth_->row_offsets();
  const auto& cols = cloth_->columns();
  for (Index r = 0; r < n; ++r) {
    const Index a = r / 3;
    if (cloth_->pinned()[a]) continue;
    J(r, n + r) = 1.0;
    const double inv_m = 1.0 / cloth_->node_masses()[a];
    for (int e = rows[r]; e < rows[r + 1]; ++e) {
      J(n + r, cols[e]) = d->Kx[e] * inv_m;
      J(n + r, n + cols[e]) = d->Kv[e] * inv_m;
    }
  }
}

std::unique_ptr<ModelData> ClothControlModel::create_data() const {
  auto d = std::make_unique<ClothControlData>();
  d->cloth = cloth_->create_data();
  const Index n = 3 * cloth_->node_count();
  d->x.setZero(n);
  d->v.setZero(n);
  d->u.setZero(n);
  return d;
}

void ClothControlModel::step(const Eigen::Ref<const Eigen::VectorXd>& z, double, double dt,
                             const Eigen::Ref<const Eigen::VectorXd>& w, Eigen::Ref<Eigen::VectorXd> z_next,
                             ModelData& data) const {
  auto& d = static_cast<ClothControlData&>(data);
  const Index n = 3 * cloth_->node_count();
  d.x = z.head(n);
  d.v = z.tail(n);
  d.u.setZero();
  for (std::size_t c = 0; c < controlled_.size(); ++c) d.u.segment<3>(3 * controlled_[c]) = w.segment<3>(3 * c);
  cloth_->step(d.x, d.v, dt, d.u.data(), ClothIntegrator::symplectic, *d.cloth);
  z_next.head(n) = d.x;
  z_next.tail(n) = d.v;
}

}  // namespace directable
