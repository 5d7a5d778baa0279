#pragma once
// Prediction with a continuous Model (z' = F(z, t) + B w): one explicit
// Euler step x+ = x + dt (F(x, t0 + i dt) + B u), a cheap simplified
// predictor; its VJP and Jacobians are those of this step, exactly.
#include <memory>

#include "directable/models/model.hpp"
#include "directable/models/prediction_model.hpp"

namespace directable {

struct EulerPredictionData : PredictionData {
  Eigen::VectorXd F;  //!< n: F(x, t)
  RowMatrix J;        //!< n x n: dF/dz
};

class EulerPrediction : public PredictionModel {
 public:
  //! model not null, dt > 0, t0 finite; throws naming the argument.
  EulerPrediction(std::shared_ptr<const Model> model, double dt, double t0 = 0.0);
  Index n() const override { return model_->state_dim(); }
  Index s() const override { return model_->control_dim(); }
  void step(const CRefVec& x, const CRefVec& u, RefVec x_next, Index i, PredictionData& data) const override;
  void vjp(const CRefVec& x, const CRefVec& u, const CRefVec& lam, RefVec gx, RefVec gu, Index i,
           PredictionData& data) const override;
  bool has_jacobians() const override { return true; }
  void jacobians(const CRefVec& x, const CRefVec& u, Eigen::Ref<RowMatrix> A, Eigen::Ref<RowMatrix> B, Index i,
                 PredictionData& data) const override;
  double dt() const { return dt_; }

 protected:
  std::unique_ptr<PredictionData> make_data() const override;

 private:
  std::shared_ptr<const Model> model_;
  double dt_, t0_;
};

}  // namespace directable
