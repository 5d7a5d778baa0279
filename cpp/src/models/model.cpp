#include "directable/core/parallel.hpp"
#include "directable/models/model.hpp"
#include "directable/core/progress.hpp"

namespace directable {

std::unique_ptr<ModelData> Model::create_data() const {
  auto d = std::make_unique<ModelData>();
  const Index n = state_dim();
  for (auto* v : {&d->k1, &d->k2, &d->k3, &d->k4, &d->tmp, &d->Bw}) v->setZero(n);
  return d;
}

void Model::step(const Eigen::Ref<const Eigen::VectorXd>& z, double t, double dt,
                 const Eigen::Ref<const Eigen::VectorXd>& w, Eigen::Ref<Eigen::VectorXd> z_next,
                 ModelData& d) const {
  // Classical RK4 with the control held over the step (zero-order hold,
  // the same assumption as the discretization).
  d.Bw.noalias() = control_matrix() * w;
  dynamics(z, t, d.k1);
  d.k1 += d.Bw;
  d.tmp = z + 0.5 * dt * d.k1;
  dynamics(d.tmp, t + 0.5 * dt, d.k2);
  d.k2 += d.Bw;
  d.tmp = z + 0.5 * dt * d.k2;
  dynamics(d.tmp, t + 0.5 * dt, d.k3);
  d.k3 += d.Bw;
  d.tmp = z + dt * d.k3;
  dynamics(d.tmp, t + dt, d.k4);
  d.k4 += d.Bw;
  z_next = z + (dt / 6.0) * (d.k1 + 2.0 * d.k2 + 2.0 * d.k3 + d.k4);
}

MatrixSeq linearize(const Model& model, SeqView z_ref, Index T, double t0, double dt, int threads,
                    const ProgressFn* progress) {
  const Index n = model.state_dim();
  if (z_ref.empty() || z_ref.rows != 1 || z_ref.cols != n || z_ref.is_constant())
    throw_shape("z_ref", "(T+1, " + std::to_string(n) + ") or (T, " + std::to_string(n) + ")",
                z_ref.empty() ? "nothing" : shape_str(z_ref.T, z_ref.cols));
  if (T == 0) T = z_ref.T - 1;  // 0: every state but the last
  if (T <= 0 || z_ref.T < T) throw std::invalid_argument("z_ref must hold at least T states, got " + std::to_string(z_ref.T));
  check_positive("dt", dt);
  z_ref.check_finite("z_ref");
  MatrixSeq A(T, n, n);
  parallel_steps(T, threads, progress, T, [] { return 0; }, [&](Index i, int&) {
    model.jacobian(ConstVecMap(z_ref.data + i * n, n), t0 + double(i) * dt, A[i]);
  });
  return A;
}

}  // namespace directable
