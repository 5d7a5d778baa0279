#include "directable/models/spring_chain.hpp"

#include <stdexcept>
#include <string>

namespace directable {

SpringChain::SpringChain(const Eigen::Ref<const Eigen::VectorXd>& masses, const Eigen::Ref<const Eigen::VectorXd>& k,
                         const Eigen::Ref<const Eigen::VectorXd>& k3, const Eigen::Ref<const Eigen::VectorXd>& c,
                         const Eigen::Ref<const Eigen::MatrixXd>& actuated)
    : m_(masses.size()), mass_(masses), k_(k), k3_(k3), c_(c) {
  if (m_ < 1) throw std::invalid_argument("masses must hold at least one mass");
  const std::string ms = "(" + std::to_string(m_) + ",)";
  if (k.size() != m_) throw_shape("stiffness", ms, "(" + std::to_string(k.size()) + ",)");
  if (k3.size() != m_) throw_shape("cubic", ms, "(" + std::to_string(k3.size()) + ",)");
  if (c.size() != m_) throw_shape("damping", ms, "(" + std::to_string(c.size()) + ",)");
  for (Index i = 0; i < m_; ++i) {
    check_positive("masses[" + std::to_string(i) + "]", mass_[i]);
    if (!(k_[i] >= 0) || !(k3_[i] >= 0) || !(c_[i] >= 0) || !std::isfinite(k_[i] + k3_[i] + c_[i]))
      throw std::domain_error("stiffness, cubic and damping must be finite and >= 0 (spring " + std::to_string(i) + ")");
  }
  // A 0 x 0 actuation means "every mass driven".
  S_ = (actuated.rows() == 0 && actuated.cols() == 0) ? Eigen::MatrixXd(Eigen::MatrixXd::Identity(m_, m_))
                                                      : Eigen::MatrixXd(actuated);
  if (S_.rows() != m_ || S_.cols() < 1)
    throw_shape("actuated", "(" + std::to_string(m_) + ", s) with s >= 1", shape_str(S_.rows(), S_.cols()));
  check_finite("actuated", S_.data(), S_.size());
  B_.setZero(2 * m_, S_.cols());
  B_.bottomRows(m_) = mass_.cwiseInverse().asDiagonal() * S_;
}

void SpringChain::dynamics(const Eigen::Ref<const Eigen::VectorXd>& z, double, Eigen::Ref<Eigen::VectorXd> F) const {
  const auto x = z.head(m_);
  const auto v = z.tail(m_);
  F.head(m_) = v;
  auto a = F.tail(m_);
  a.setZero();
  for (Index j = 0; j < m_; ++j) {
    const double d = x[j] - (j ? x[j - 1] : 0.0);
    const double dd = v[j] - (j ? v[j - 1] : 0.0);
    const double tension = k_[j] * d + k3_[j] * d * d * d + c_[j] * dd;
    a[j] -= tension;
    if (j) a[j - 1] += tension;
  }
  a.array() /= mass_.array();
}

void SpringChain::jacobian(const Eigen::Ref<const Eigen::VectorXd>& z, double, Eigen::Ref<RowMatrix> J) const {
  J.setZero();
  J.topRightCorner(m_, m_).setIdentity();
  const auto x = z.head(m_);
  for (Index j = 0; j < m_; ++j) {
    const double d = x[j] - (j ? x[j - 1] : 0.0);
    const double kt = k_[j] + 3.0 * k3_[j] * d * d;  // d tension / d extension
    // Spring j pulls mass j by -t and mass j-1 by +t, t = t(x_j - x_{j-1}).
    J(m_ + j, j) -= kt / mass_[j];
    J(m_ + j, m_ + j) -= c_[j] / mass_[j];
    if (j) {
      J(m_ + j, j - 1) += kt / mass_[j];
      J(m_ + j, m_ + j - 1) += c_[j] / mass_[j];
      J(m_ + j - 1, j) += kt / mass_[j - 1];
      J(m_ + j - 1, m_ + j) += c_[j] / mass_[j - 1];
      J(m_ + j - 1, j - 1) -= kt / mass_[j - 1];
      J(m_ + j - 1, m_ + j - 1) -= c_[j] / mass_[j - 1];
    }
  }
}

double SpringChain::energy(const Eigen::Ref<const Eigen::VectorXd>& z) const {
  if (z.size() != 2 * m_) throw_shape("z", "(" + std::to_string(2 * m_) + ",)", "(" + std::to_string(z.size()) + ",)");
  double e = 0.5 * (mass_.array() * z.tail(m_).array().square()).sum();
  for (Index j = 0; j < m_; ++j) {
    const double d = z[j] - (j ? z[j - 1] : 0.0);
    e += 0.5 * k_[j] * d * d + 0.25 * k3_[j] * d * d * d * d;
  }
  return e;
}

}  // namespace directable
