#pragma once
// A reduced fluid with moving objects (Treuille thesis Fig. 3.7): per step
// advect, diffuse, add forces, then for each object the boundary
// coefficients [F_i z; v_i] (the rigid ones are the object's velocity), and
// z += sum_i G_i [F_i z; v_i]. The full field of eq. 3.9 is
// u' = B z + sum_i R_i [Btilde_i, rigid_i] c_i.
#include <Eigen/Core>
#include <memory>
#include <vector>

#include "directable/models/fluid/coupling.hpp"
#include "directable/models/fluid/reduced_fluid.hpp"

namespace directable {

struct ReducedSceneData {
  std::unique_ptr<ReducedFluidData> fluid;
  std::vector<std::unique_ptr<CouplingData>> coupling;  //!< one per object
  std::vector<Eigen::VectorXd> coeffs;                   //!< m_i: object i's coefficients
  Eigen::VectorXd zero_w, z_flow;                        //!< r each
  std::vector<Eigen::VectorXd> local;                    //!< N_local_i: the combined local field of object i
};

class ReducedScene {
 public:
  ReducedScene(std::shared_ptr<const ReducedFluid> reduced, std::vector<std::shared_ptr<const Coupling>> couplings);

  const ReducedFluid& reduced() const { return *reduced_; }
  std::shared_ptr<const ReducedFluid> reduced_ptr() const { return reduced_; }
  Index objects() const { return Index(couplings_.size()); }
  const Coupling& coupling(Index i) const { return *couplings_[size_t(i)]; }
  std::shared_ptr<const Coupling> coupling_ptr(Index i) const { return couplings_[size_t(i)]; }
  Index max_m() const { return max_m_; }  //!< columns of the coefficient matrix
  std::unique_ptr<ReducedSceneData> create_data() const;

  //! Checks poses and velocities (K x 3 each, finite).
  void check_poses(const Eigen::Ref<const RowMatrix>& poses, const char* name) const;
  //! One step: z_next (r), coeffs (K x max_m, row i = [F_i z_flow; v_i],
  //! zero-padded, v_i = (Rot_i' (vx, vy), omega): the object's velocity in
  //! its own frame, where the rigid fields live), z_flow (r) in
  //! d.z_flow: the flow state the coefficients cancel.
  void step(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const Eigen::VectorXd>& w, double dt,
            const Eigen::Ref<const RowMatrix>& poses, const Eigen::Ref<const RowMatrix>& velocities,
            Eigen::Ref<Eigen::VectorXd> z_next, Eigen::Ref<RowMatrix> coeffs, ReducedSceneData& d) const;
  //! u' (eq. 3.9) at points (P x 2) into out (P x 2).
  void velocity_at(const Eigen::Ref<const RowMatrix>& points, const Eigen::Ref<const Eigen::VectorXd>& z,
                   const Eigen::Ref<const RowMatrix>& coeffs, const Eigen::Ref<const RowMatrix>& poses,
                   Eigen::Ref<RowMatrix> out, ReducedSceneData& d) const;
  //! u' on the world grid's faces (N).
  void velocity_field(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const RowMatrix>& coeffs,
                      const Eigen::Ref<const RowMatrix>& poses, Eigen::Ref<Eigen::VectorXd> u, ReducedSceneData& d) const;
  //! Normal speeds (q_i) of u' at object i's surface; with boundary =
  //! false, of B z alone.
  void surface_speed(Index i, const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const RowMatrix>& coeffs,
                     const Eigen::Ref<const RowMatrix>& poses, bool boundary, Eigen::Ref<Eigen::VectorXd> out,
                     ReducedSceneData& d) const;
  //! Per object, 1 - |S(u' - rigid)|^2 / |S(B z - rigid)|^2.
  void surface_energy_removed(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const RowMatrix>& coeffs,
                              const Eigen::Ref<const RowMatrix>& poses, const Eigen::Ref<const RowMatrix>& velocities,
                              Eigen::Ref<Eigen::VectorXd> out, ReducedSceneData& d) const;
  //! Particles (P x 2) moved by RK2 through u' (z, coeffs held over the
  //! step), clamped to the domain and pushed out of the objects along their
  //! surface normals.
  void advect_particles(Eigen::Ref<RowMatrix> points, const Eigen::Ref<const Eigen::VectorXd>& z,
                        const Eigen::Ref<const RowMatrix>& coeffs, const Eigen::Ref<const RowMatrix>& poses,
                        double dt, ReducedSceneData& d) const;

 private:
  void combine_local(const Eigen::Ref<const RowMatrix>& coeffs, ReducedSceneData& d) const;
  Eigen::Vector2d velocity(double x, double y, const Eigen::Ref<const Eigen::VectorXd>& z,
                           const std::vector<Pose2D>& poses, const ReducedSceneData& d) const;
  void check_state(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const RowMatrix>& coeffs,
                   const Eigen::Ref<const RowMatrix>& poses) const;
  std::vector<Pose2D> pose_list(const Eigen::Ref<const RowMatrix>& poses) const;

  std::shared_ptr<const ReducedFluid> reduced_;
  std::vector<std::shared_ptr<const Coupling>> couplings_;
  Index max_m_ = 0;
};

//! A scene with its objects held at fixed poses: the boundary terms of the
//! particle velocity u'(p) = Psi(p) z + sum_i Rot_i L_i(p_i) [F_i z; v_i]
//! (L_i: the local fields interpolated at the object-frame point p_i), a
//! linear function of z (FluidParticles on a scene).
class SceneAtPoses {
 public:
  //! poses, velocities: K x 3 each (world frame), checked finite.
  SceneAtPoses(std::shared_ptr<const ReducedScene> scene, const Eigen::Ref<const RowMatrix>& poses,
               const Eigen::Ref<const RowMatrix>& velocities);
  const ReducedScene& scene() const { return *scene_; }
  const RowMatrix& poses() const { return poses_; }
  const RowMatrix& velocities() const { return velocities_; }
  //! Adds the boundary terms at the world point (x, y): to v (velocity), to
  //! dv_dz (2 x r) when given, and to dv_dp (2 x 2, d v / d(x, y)) when given.
  void add_terms(double x, double y, const Eigen::Ref<const Eigen::VectorXd>& z, Eigen::Vector2d& v,
                 RowMatrix* dv_dz, Eigen::Matrix2d* dv_dp) const;
  //! Pushes (x, y) out of every object along its surface normal.
  void push_out(double& x, double& y) const;

 private:
  std::shared_ptr<const ReducedScene> scene_;
  RowMatrix poses_, velocities_;       //!< K x 3
  std::vector<Pose2D> pose_list_;
  std::vector<Eigen::MatrixXd> F_;     //!< p_i x r, feedforward at the fixed pose
  std::vector<Eigen::VectorXd> rigid_; //!< 3: the object's velocity in its own frame
};

}  // namespace directable
