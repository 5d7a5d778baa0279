#include "directable/models/prediction_model.hpp"

#include <stdexcept>
#include <string>

#include "directable/core/errors.hpp"

namespace directable {

std::unique_ptr<PredictionData> PredictionModel::make_data() const { return std::make_unique<PredictionData>(); }

std::unique_ptr<PredictionData> PredictionModel::create_data() const {
  std::unique_ptr<PredictionData> d = make_data();
  d->model = this;
  return d;
}

void PredictionModel::check_data(const PredictionData& data) const {
  if (data.model != this)
    throw std::invalid_argument("data must come from this prediction model's create_data(), got another model's");
}

void PredictionModel::jacobians(const CRefVec&, const CRefVec&, Eigen::Ref<RowMatrix>, Eigen::Ref<RowMatrix>, Index,
                                PredictionData&) const {
  throw std::invalid_argument("this prediction model offers no Jacobians (use method='lbfgs')");
}

void PredictionModel::check_arguments(const CRefVec& x, const char* x_name, const CRefVec& u,
                                      const char* u_name) const {
  const Index n = this->n(), s = this->s();
  if (x.size() != n) throw_shape(x_name, "(" + std::to_string(n) + ",)", "(" + std::to_string(x.size()) + ",)");
  if (u.size() != s) throw_shape(u_name, "(" + std::to_string(s) + ",)", "(" + std::to_string(u.size()) + ",)");
  check_finite(x_name, x.data(), n);
  check_finite(u_name, u.data(), s);
}

}  // namespace directable
