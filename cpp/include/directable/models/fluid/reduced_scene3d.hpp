#pragma once
// A 3D reduced fluid with moving objects (Treuille thesis Fig. 3.7 and the
// 3D scenes of sec. 3.6): per step advect, diffuse, add forces, then for each
// object the boundary coefficients c_i = [F_i z; v_i, omega_i] (the rigid
// ones: the object's velocity and angular velocity in its own frame, where
// its six rigid fields live) and z += sum_i G_i c_i. The full field of eq.
// 3.9 is u' = B z + sum_i R_i [Btilde_i, rigid_i] c_i.
#include <Eigen/Core>
#include <memory>
#include <vector>

#include "directable/core/parallel.hpp"
#include "directable/models/fluid/coupling3d.hpp"
#include "directable/models/fluid/reduced_fluid3d.hpp"

namespace directable {

struct ReducedScene3DData {
  std::unique_ptr<ReducedFluidData> fluid;
  std::vector<std::unique_ptr<Coupling3DData>> coupling;  //!< one per object
  std::vector<Eigen::MatrixXd> F, G;                       //!< p_i x r, r x m_i
  Eigen::VectorXd zero_w, z_flow;                          //!< r each
  std::vector<Eigen::VectorXd> local;                      //!< N_local_i: object i's combined local field
  std::vector<Pose3D> poses;                               //!< K, the poses of the last query
  TeamChooser particle_team;                               //!< team of the particle advection, chosen by measurement
  std::vector<std::pair<Index, Index>> particle_order;     //!< P: (cell, particle), the visiting order
};

class ReducedScene3D {
 public:
  ReducedScene3D(std::shared_ptr<const ReducedFluid3D> reduced, std::vector<std::shared_ptr<const Coupling3D>> couplings);

  const ReducedFluid3D& reduced() const { return *reduced_; }
  std::shared_ptr<const ReducedFluid3D> reduced_ptr() const { return reduced_; }
  Index objects() const { return Index(couplings_.size()); }
  const Coupling3D& coupling(Index i) const { return *couplings_[std::size_t(i)]; }
  std::shared_ptr<const Coupling3D> coupling_ptr(Index i) const { return couplings_[std::size_t(i)]; }
  Index max_m() const { return max_m_; }  //!< columns of the coefficient matrix
  std::unique_ptr<ReducedScene3DData> create_data() const;

  //! Checks poses or velocities: K x 6 and finite.
  void check_poses(const Eigen::Ref<const RowMatrix>& poses, const char* name) const;
  //! One step: z_next (r), coeffs (K x max_m, row i = [F_i z_flow; R_i' v_i;
  //! R_i' omega_i], zero-padded); the flow state the coefficients cancel is
  //! left in d.z_flow. poses: K x 6 (position, rotation vector), velocities:
  //! K x 6 (velocity, angular velocity; world frame).
  void step(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const Eigen::VectorXd>& w, double dt,
            const Eigen::Ref<const RowMatrix>& poses, const Eigen::Ref<const RowMatrix>& velocities,
            Eigen::Ref<Eigen::VectorXd> z_next, Eigen::Ref<RowMatrix> coeffs, ReducedScene3DData& d) const;
  //! u' (eq. 3.9) at points (P x 3) into out (P x 3).
  void velocity_at(const Eigen::Ref<const RowMatrix>& points, const Eigen::Ref<const Eigen::VectorXd>& z,
                   const Eigen::Ref<const RowMatrix>& coeffs, const Eigen::Ref<const RowMatrix>& poses,
                   Eigen::Ref<RowMatrix> out, ReducedScene3DData& d) const;
  //! u' on the world grid's faces (N).
  void velocity_field(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const RowMatrix>& coeffs,
                      const Eigen::Ref<const RowMatrix>& poses, Eigen::Ref<Eigen::VectorXd> u,
                      ReducedScene3DData& d) const;
  //! Normal speeds (q_i) of u' at object i's surface; with boundary = false, of B z alone.
  void surface_speed(Index i, const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const RowMatrix>& coeffs,
                     const Eigen::Ref<const RowMatrix>& poses, bool boundary, Eigen::Ref<Eigen::VectorXd> out,
                     ReducedScene3DData& d) const;
  //! Per object, 1 - |S(u' - rigid)|^2 / |S(B z - rigid)|^2.
  void surface_energy_removed(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const RowMatrix>& coeffs,
                              const Eigen::Ref<const RowMatrix>& poses, const Eigen::Ref<const RowMatrix>& velocities,
                              Eigen::Ref<Eigen::VectorXd> out, ReducedScene3DData& d) const;
  //! Particles (P x 3, in place) moved by RK2 (midpoint) through u' + drift
  //! (z, coeffs held over the step), clamped to the domain and pushed out of
  //! the objects along the surface normal; parallel over particles (threads
  //! <= 0: the team chosen by measurement in d). Returns how many were pushed.
  Index advect_particles(Eigen::Ref<RowMatrix> points, const Eigen::Ref<const Eigen::VectorXd>& z,
                         const Eigen::Ref<const RowMatrix>& coeffs, const Eigen::Ref<const RowMatrix>& poses, double dt,
                         const Eigen::Vector3d& drift, int threads, ReducedScene3DData& d) const;

 private:
  void check_state(const Eigen::Ref<const Eigen::VectorXd>& z, const Eigen::Ref<const RowMatrix>& coeffs,
                   const Eigen::Ref<const RowMatrix>& poses) const;
  //! Fills d.poses and the combined local fields (zero without boundary).
  void prepare(const Eigen::Ref<const RowMatrix>& coeffs, const Eigen::Ref<const RowMatrix>& poses, bool boundary,
               ReducedScene3DData& d) const;
  Eigen::Vector3d velocity(const Eigen::Vector3d& x, const Eigen::Ref<const Eigen::VectorXd>& z,
                           const ReducedScene3DData& d) const;

  std::shared_ptr<const ReducedFluid3D> reduced_;
  std::vector<std::shared_ptr<const Coupling3D>> couplings_;
  Index max_m_ = 0;
};

//! A 3D scene with its objects held at fixed poses: the boundary terms of
//! the particle velocity u'(p) = Psi(p) z + sum_i R_i L_i(p_i) [F_i z; v_i]
//! (L_i: the local fields interpolated at the object-frame point p_i), a
//! linear function of z (FluidParticles3D on a scene).
class SceneAtPoses3D {
 public:
  //! poses, velocities: K x 6 each (world frame), checked finite.
  SceneAtPoses3D(std::shared_ptr<const ReducedScene3D> scene, const Eigen::Ref<const RowMatrix>& poses,
                 const Eigen::Ref<const RowMatrix>& velocities);
  const ReducedScene3D& scene() const { return *scene_; }
  const RowMatrix& poses() const { return poses_; }
  const RowMatrix& velocities() const { return velocities_; }
  //! Adds the boundary terms at the world point x: to v, to dv_dz (3 x r)
  //! and to dv_dx (3 x 3, d v / d x) when given.
  void add_terms(const Eigen::Vector3d& x, const Eigen::Ref<const Eigen::VectorXd>& z, Eigen::Vector3d& v,
                 RowMatrix* dv_dz, Eigen::Matrix3d* dv_dx) const;
  //! Pushes x out of every object along its surface normal; returns whether it moved.
  bool push_out(Eigen::Vector3d& x) const;

 private:
  std::shared_ptr<const ReducedScene3D> scene_;
  RowMatrix poses_, velocities_;        //!< K x 6
  std::vector<Pose3D> pose_list_;       //!< K
  std::vector<Eigen::MatrixXd> F_;      //!< p_i x r, feedforward at the fixed pose
  std::vector<Eigen::VectorXd> rigid_;  //!< 6: the object's velocity and angular velocity in its own frame
};

}  // namespace directable
