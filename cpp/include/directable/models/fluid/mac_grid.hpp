#pragma once
// 2D MAC grid fluid: the offline reference simulator of the reduced fluid
// (Treuille thesis ch. 3; Stam-style stable fluids on a staggered grid).
//
// Layout (fixed, shared with Python): a velocity field is one vector of
// size N = nu + nv, all x-faces first (ny rows x (nx+1) columns, row-major,
// x-face (i, j) at (i h, (j + 1/2) h)), then all y-faces ((ny+1) rows x nx
// columns, y-face (i, j) at ((i + 1/2) h, j h)). Cells (i, j) (pressure,
// smoke) are ny rows x nx columns, centre ((i + 1/2) h, (j + 1/2) h). The
// domain is [0, nx h] x [0, ny h] with free-slip walls: normal (wall) faces
// are zero, tangential velocity is free. Fixed solid cells (a mask) close
// every face they touch the same way; moving obstacles (FluidSim2D::step)
// close the faces of the cells whose centres they cover for one step.
#include <Eigen/Core>
#include <Eigen/IterativeLinearSolvers>
#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>
#include <memory>
#include <vector>

#include "directable/core/progress.hpp"
#include "directable/core/sequence.hpp"
#include "directable/models/fluid/shape2d.hpp"

namespace directable {

//! Bilinear interpolation stencil: 4 entries (index, weight, d weight/dx,
//! d weight/dy). Derivatives are those of the interpolant inside the cell
//! containing the point (zero across a clamped direction).
struct Stencil4 {
  Index idx[4];
  double w[4], dx[4], dy[4];
};

//! One flag per cell (row-major, ny x nx) or per face.
using Mask = Eigen::Array<bool, Eigen::Dynamic, 1>;

class MACGrid2D {
 public:
  //! solid: n_cells flags of fixed solid cells, or empty for none.
  MACGrid2D(Index nx, Index ny, double h, const Mask& solid = Mask());

  Index nx() const { return nx_; }
  Index ny() const { return ny_; }
  double h() const { return h_; }
  Index n_xfaces() const { return (nx_ + 1) * ny_; }
  Index n_yfaces() const { return nx_ * (ny_ + 1); }
  Index n_faces() const { return n_xfaces() + n_yfaces(); }  //!< N
  Index n_cells() const { return nx_ * ny_; }
  Index xface(Index i, Index j) const { return j * (nx_ + 1) + i; }
  Index yface(Index i, Index j) const { return n_xfaces() + j * nx_ + i; }
  //! Whether face f is closed: a domain wall or a face of a fixed solid cell.
  bool is_wall_face(Index f) const { return closed_[f]; }
  //! N flags: true on the closed faces (walls and faces of solid cells), always zero in a free-slip field.
  const Mask& wall_mask() const { return closed_; }
  //! n_cells flags of the fixed solid cells (all false without a mask).
  const Mask& solid() const { return solid_; }
  bool has_solid() const { return has_solid_; }
  //! The two cells of face f (-1 beyond a domain wall).
  void face_cells(Index f, Index& a, Index& b) const;
  //! World position of face f's centre.
  Eigen::Vector2d face_center(Index f) const;
  double width() const { return double(nx_) * h_; }
  double height() const { return double(ny_) * h_; }

  //! Discrete divergence (cells) of a face field u (N).
  void divergence(const Eigen::Ref<const Eigen::VectorXd>& u, Eigen::Ref<Eigen::VectorXd> div) const;
  //! Largest |divergence| of the columns of U (N x k) times h (a flux, so
  //! comparable to the velocities themselves).
  double max_divergence(const Eigen::Ref<const RowMatrix>& U) const;
  //! Projection onto divergence-free free-slip fields: closed faces are
  //! zeroed, then u -= grad p with -Lap p = -div u over the fluid cells
  //! (Neumann walls), solved by the sparse LDL' factorisation computed once
  //! in the constructor.
  //! pressure: n_cells work/out buffer.
  void project(Eigen::Ref<Eigen::VectorXd> u, Eigen::Ref<Eigen::VectorXd> pressure) const;
  //! The same projection of every row of fields (k x N), in place; checks
  //! the shape and that the fields are finite (named u in messages).
  void project_rows(Eigen::Ref<RowMatrix> fields) const;

  //! Stencils of the x-component, the y-component and a cell quantity at a
  //! point (clamped to the domain).
  void x_stencil(double x, double y, Stencil4& s) const;
  void y_stencil(double x, double y, Stencil4& s) const;
  void cell_stencil(double x, double y, Stencil4& s) const;
  //! Interpolated velocity (2) at a point.
  Eigen::Vector2d velocity_at(const Eigen::Ref<const Eigen::VectorXd>& u, double x, double y) const;
  //! Interpolated velocities of u (N) at the rows of points (P x 2), each
  //! clamped to the domain first, written to out (P x 2). Checks the shapes
  //! and that u and the points are finite.
  void velocities_at(const Eigen::Ref<const Eigen::VectorXd>& u, const Eigen::Ref<const RowMatrix>& points,
                     Eigen::Ref<RowMatrix> out) const;
  //! Clamps a point into the closed domain.
  void clamp(double& x, double& y) const;

  //! Face Laplacian D (N x N, symmetric negative definite on the open
  //! faces): 5-point stencil per component, closed faces are zero
  //! Dirichlet neighbours, tangential walls are zero-gradient (free slip).
  const Eigen::SparseMatrix<double>& laplacian() const { return laplacian_; }

  //! Semi-Lagrangian (RK2 back-trace) advection of u (N) through itself.
  void advect_velocity(const Eigen::Ref<const Eigen::VectorXd>& u, double dt, Eigen::Ref<Eigen::VectorXd> out) const;
  //! Semi-Lagrangian advection of a cell quantity through u.
  void advect_cells(const Eigen::Ref<const Eigen::VectorXd>& u, const Eigen::Ref<const Eigen::VectorXd>& q, double dt,
                    Eigen::Ref<Eigen::VectorXd> out) const;
  //! Particles (P x 2 positions, row-major) moved by RK2 (midpoint) through u; clamped to the domain.
  void advect_particles(const Eigen::Ref<const Eigen::VectorXd>& u, Eigen::Ref<RowMatrix> p, double dt) const;
  //! Adds a wind impulse: magnitude * direction * exp(-|x - c|^2 / width^2)
  //! on every non-wall face. Checks width > 0 and finite centre, direction and magnitude.
  void add_wind(Eigen::Ref<Eigen::VectorXd> f, double cx, double cy, double dirx, double diry, double magnitude,
                double width) const;

 private:
  void assemble_face_laplacian();

  Index nx_, ny_;
  double h_;
  Mask solid_;   //!< n_cells
  Mask closed_;  //!< N: walls and faces touching a solid cell
  bool has_solid_ = false;
  Eigen::SparseMatrix<double> laplacian_;                                //!< D, N x N
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> pressure_solver_;  //!< cell Laplacian, n_cells x n_cells
};

//! Pressure matrix over the fluid cells of g (solid[c] false): h^-2 times
//! the graph Laplacian of neighbouring fluid cells, one cell per connected
//! fluid region pinned (diagonal + h^-2; a compatible right-hand side
//! leaves it at zero), identity rows on solid cells. n_cells x n_cells, SPD.
void assemble_pressure_matrix(const MACGrid2D& g, const Mask& solid, Eigen::SparseMatrix<double>& A);
//! u -= grad p on every face whose two cells are fluid (solid[c] false).
void subtract_pressure_gradient(const MACGrid2D& g, const Mask& solid, const Eigen::Ref<const Eigen::VectorXd>& p,
                                Eigen::Ref<Eigen::VectorXd> u);

//! How FluidSim2D solves the pressure when moving obstacles change the
//! fluid cells: a fresh sparse LDL' per step, or conjugate gradients with an
//! incomplete-Cholesky preconditioner to a relative residual tolerance.
enum class PressureSolver { Direct, PCG };

//! Every state of a full run: velocities (T+1) x N, particles (T+1) x 2P
//! (x0, y0, x1, ... per row), density (T+1) x n_cells or 0 x 0 when not recorded.
struct FluidRun {
  RowMatrix velocities, particles, density;
};

//! Full simulator state and buffers: one step = force, semi-Lagrangian
//! advection, implicit viscosity (factorised once), projection; smoke and
//! particles are advected through the new field. The grid and the
//! factorisation are shared read-only; the state belongs to this object.
class FluidSim2D {
 public:
  //! solver, tolerance: the pressure solve of steps with moving obstacles
  //! (steps without them use the grid's factorisation).
  FluidSim2D(std::shared_ptr<const MACGrid2D> grid, double viscosity, double dt,
             PressureSolver solver = PressureSolver::Direct, double tolerance = 1e-12);

  const MACGrid2D& grid() const { return *grid_; }
  std::shared_ptr<const MACGrid2D> grid_ptr() const { return grid_; }
  double viscosity() const { return viscosity_; }
  double dt() const { return dt_; }
  const Eigen::VectorXd& velocity() const { return velocity_; }
  const Eigen::VectorXd& density() const { return density_; }
  const RowMatrix& particles() const { return particles_; }
  //! Sets the velocity (N), checked finite.
  void set_velocity(const Eigen::Ref<const Eigen::VectorXd>& u);
  //! Sets the smoke density (n_cells), checked finite.
  void set_density(const Eigen::Ref<const Eigen::VectorXd>& rho);
  //! Sets the particles (P x 2), checked finite.
  void set_particles(const Eigen::Ref<const RowMatrix>& p);
  //! One step with external acceleration field f (N; empty = none).
  void step(const Eigen::Ref<const Eigen::VectorXd>& f);
  //! One step with moving obstacles: the cells whose centres they cover are
  //! solid for this step, every face touching such a cell takes the normal
  //! component of the obstacle's rigid velocity at the face centre, and the
  //! pressure is solved over the fluid cells with that flux in the
  //! right-hand side. Smoke in solid cells is zeroed, particles inside an
  //! obstacle are pushed out along its surface normal. The new velocity is
  //! the rigid field on the solid cells' faces, so it is divergence-free on
  //! every cell. Throws invalid_argument when an obstacle leaves the domain.
  void step(const Eigen::Ref<const Eigen::VectorXd>& f, const std::vector<Obstacle2D>& obstacles);
  //! Like run(), with obstacles k = 0..K-1 of the given shapes at
  //! poses(t, 3k..3k+2) moving with velocities(t, 3k..3k+2) during step t
  //! (poses, velocities: T x 3K).
  FluidRun run_obstacles(const Eigen::Ref<const RowMatrix>& forces,
                         const std::vector<std::shared_ptr<const Shape2D>>& shapes,
                         const Eigen::Ref<const RowMatrix>& poses, const Eigen::Ref<const RowMatrix>& velocities,
                         bool record_density, const ProgressFn* progress = nullptr);
  PressureSolver pressure_solver() const { return solver_; }
  double tolerance() const { return tolerance_; }
  //! Solid cells of the last step (n_cells; fixed solids and obstacles).
  const Mask& step_solid() const { return step_solid_; }
  //! Conjugate-gradient iterations and relative residual of the last
  //! obstacle step's pressure solve (0 with the direct solver).
  Index pcg_iterations() const { return pcg_iterations_; }
  double pcg_residual() const { return pcg_residual_; }
  //! forces.rows() steps, row t the acceleration field of step t (N
  //! columns); returns every state (the initial one first). Throws
  //! domain_error naming the step when the velocity becomes non-finite.
  FluidRun run(const Eigen::Ref<const RowMatrix>& forces, bool record_density, const ProgressFn* progress = nullptr);
  //! directions.rows() steps under winds that follow the particles: at
  //! step t a wind of direction directions.row(t) (2) and magnitude
  //! magnitudes[k] blows at particle k's position at the start of the step
  //! (add_wind, Gaussian of the given width). Records and reports like run().
  FluidRun run_particle_winds(const Eigen::Ref<const RowMatrix>& directions,
                              const Eigen::Ref<const Eigen::VectorXd>& magnitudes, double width,
                              const ProgressFn* progress = nullptr);

 private:
  void advance(const Eigen::Ref<const Eigen::VectorXd>& f);
  void advance_obstacles(const Eigen::Ref<const Eigen::VectorXd>& f, const std::vector<Obstacle2D>& obstacles);
  void project_obstacles(const std::vector<Obstacle2D>& obstacles);
  //! Runs T steps, the force of step t written by force(t, f) (f: N, zeroed
  //! first), recording every state and checking the velocity stays finite.
  template <class ForceFn>
  FluidRun run_with(Index T, bool record_density, const ProgressFn* progress, ForceFn force,
                    const std::vector<Obstacle2D>* obstacles = nullptr);

  std::shared_ptr<const MACGrid2D> grid_;
  double viscosity_, dt_;
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> diffusion_solver_;  //!< I - nu dt D, N x N
  Eigen::VectorXd velocity_, density_;           //!< N, n_cells
  Eigen::VectorXd advected_, advected_density_;  //!< N, n_cells: step buffers
  Eigen::VectorXd pressure_;                     //!< n_cells: projection buffer
  RowMatrix particles_;                          //!< P x 2
  PressureSolver solver_;
  double tolerance_;
  Mask step_solid_;                              //!< n_cells: solid cells of the last step
  Eigen::VectorXi owner_;                        //!< n_cells: -1 fluid, -2 fixed solid, k obstacle k
  Eigen::VectorXd rhs_;                          //!< n_cells: pressure right-hand side
  Eigen::SparseMatrix<double> pressure_matrix_;  //!< n_cells x n_cells, this step's fluid cells
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> moving_direct_;
  Eigen::ConjugateGradient<Eigen::SparseMatrix<double>, Eigen::Lower | Eigen::Upper,
                           Eigen::IncompleteCholesky<double>>
      moving_pcg_;
  Index pcg_iterations_ = 0;
  double pcg_residual_ = 0.0;
};

}  // namespace directable
