#pragma once
// 3D MAC grid fluid operators (Treuille thesis sec. 3.6-3.7; Bridson,
// "Fluid Simulation for Computer Graphics", ch. 4-5 for the pressure solve).
//
// Layout (fixed, shared with Python): a velocity field is one vector of size
// N = NX + NY + NZ: all x-faces (nz x ny x (nx+1), i fastest; x-face (i, j, k)
// at (i h, (j+1/2) h, (k+1/2) h)), then all y-faces (nz x (ny+1) x nx, at
// ((i+1/2) h, j h, (k+1/2) h)), then all z-faces ((nz+1) x ny x nx, at
// ((i+1/2) h, (j+1/2) h, k h)). Cells (i, j, k) are nz x ny x nx, i fastest,
// centre ((i+1/2) h, (j+1/2) h, (k+1/2) h). The domain [0, nx h] x [0, ny h] x
// [0, nz h] has free-slip walls. Cells may be solid (a fixed mask given to the
// grid, or obstacles per step): a face is *closed* when it lies on a wall or
// touches a solid cell; the projection keeps closed faces as they are given
// (zero for walls and fixed solids, the rigid normal velocity for moving ones)
// and solves the pressure over the fluid cells only.
#include <Eigen/Core>
#include <Eigen/SparseCholesky>
#include <Eigen/SparseCore>
#include <vector>

#include "directable/core/progress.hpp"
#include "directable/core/types.hpp"

namespace directable {

using CellMask = Eigen::Array<bool, Eigen::Dynamic, 1>;

//! Trilinear interpolation stencil: 8 entries (index, weight, d weight/dx,
//! d weight/dy, d weight/dz), derivatives of the interpolant inside the cell
//! containing the point (zero across a clamped direction).
struct Stencil8 {
  Index idx[8];
  double w[8], dx[8], dy[8], dz[8];
};

//! Buffers of one pressure solve (per call or per simulator; never shared by
//! threads). iterations / residual describe the last solve.
struct PressureWorkspace3D {
  explicit PressureWorkspace3D(Index cells = 0);
  void resize(Index cells);
  Eigen::VectorXd rhs, p, r, z, s, q, precon;  //!< n_cells each; p: the last pressure (a warm start's guess)
  std::vector<Index> component;                //!< n_cells: connected fluid component (-1 solid)
  std::vector<Index> queue;                    //!< n_cells: flood-fill buffer
  std::vector<unsigned char> flags;            //!< n_cells: fluid neighbours of each cell (PCG)
  Eigen::VectorXd component_sum;               //!< per component: rhs sum, then its mean
  Eigen::VectorXd component_count;             //!< per component: fluid cells
  Index iterations = 0;                        //!< PCG iterations of the last solve (0: direct)
  double residual = 0.0;                       //!< max |A p - b| / max |b| of the last solve
};

class MACGrid3D {
 public:
  //! solid: n_cells flags (cell order) of fixed solid cells, or empty. The
  //! fluid-cell pressure Laplacian is factorised here (sparse LDL') when the
  //! grid has at most direct_limit fluid cells; larger grids use MIC(0)-PCG.
  //! solid_shape: the shape of the caller's mask array, checked to be
  //! (nz, ny, nx) (empty: the mask is taken as flat).
  MACGrid3D(Index nx, Index ny, Index nz, double h, const CellMask& solid = CellMask(), Index direct_limit = -1,
            const std::vector<Index>& solid_shape = {});

  //! Default direct_limit: 8192 fluid cells (about 20^3). Measured to 1e-10
  //! (benchmarks/bench_fluid3d.py, 2 shared cores): one LDL' solve takes 7 ms
  //! against 10 ms for MIC(0)-PCG at 16^3, 37 against 29 ms at 24^3 and 76
  //! against 43 ms at 32^3, and the factor's fill and one-off cost grow
  //! faster than PCG's iterations.
  static constexpr Index kDefaultDirectLimit = 8192;

  Index nx() const { return nx_; }
  Index ny() const { return ny_; }
  Index nz() const { return nz_; }
  double h() const { return h_; }
  Index n_xfaces() const { return (nx_ + 1) * ny_ * nz_; }
  Index n_yfaces() const { return nx_ * (ny_ + 1) * nz_; }
  Index n_zfaces() const { return nx_ * ny_ * (nz_ + 1); }
  Index n_faces() const { return n_xfaces() + n_yfaces() + n_zfaces(); }  //!< N
  Index n_cells() const { return nx_ * ny_ * nz_; }
  Index xface(Index i, Index j, Index k) const { return (k * ny_ + j) * (nx_ + 1) + i; }
  Index yface(Index i, Index j, Index k) const { return n_xfaces() + (k * (ny_ + 1) + j) * nx_ + i; }
  Index zface(Index i, Index j, Index k) const { return n_xfaces() + n_yfaces() + (k * ny_ + j) * nx_ + i; }
  Index cell(Index i, Index j, Index k) const { return (k * ny_ + j) * nx_ + i; }
  double width() const { return double(nx_) * h_; }
  double height() const { return double(ny_) * h_; }
  double depth() const { return double(nz_) * h_; }
  bool uses_direct_solver() const { return direct_; }

  //! The fixed solid cells (n_cells; all false without a mask).
  const CellMask& solid() const { return solid_; }
  //! The two cells a face separates (lower, upper along its axis; -1 outside
  //! the domain) and its axis (0, 1, 2).
  void face_cells(Index f, Index& c0, Index& c1, int& axis) const;
  //! N flags: wall faces and faces touching a fixed solid cell (always zero in
  //! a field of this grid).
  Eigen::Array<bool, Eigen::Dynamic, 1> closed_mask() const;
  //! Face centre (3) of face f.
  Eigen::Vector3d face_center(Index f) const;
  Eigen::Vector3d cell_center(Index c) const;

  //! Discrete divergence (cells) of a face field u (N).
  void divergence(const Eigen::Ref<const Eigen::VectorXd>& u, Eigen::Ref<Eigen::VectorXd> div) const;
  //! Largest |div| h over the fluid cells, or |value| on a closed face, of the
  //! columns of U (N x k): 0 for fields of this grid.
  double max_divergence(const Eigen::Ref<const RowMatrix>& U) const;

  //! Projection onto divergence-free fields of this grid: closed faces are
  //! zeroed, then u -= grad p over the fluid cells (direct solve or PCG to the
  //! relative residual tol). Throws domain_error with the residual when PCG
  //! does not converge.
  void project(Eigen::Ref<Eigen::VectorXd> u, PressureWorkspace3D& ws, double tol,
               const ProgressFn* progress = nullptr) const;
  //! Projection with the cells `solid` (n_cells, a superset of the fixed mask)
  //! solid for this call: faces touching them keep their values (the caller's
  //! boundary velocities; wall faces are zeroed), the pressure is solved over
  //! the other cells with MIC(0)-PCG (or the direct factor when `solid` is the
  //! fixed mask), with the boundary fluxes in the right-hand side.
  //! progress: polled every PCG iteration (throttled); returning false
  //! (Ctrl-C) throws Cancelled. warm_start: PCG starts from ws.p, the last
  //! solve's pressure (a simulator's pressure changes little per step).
  void project_with(Eigen::Ref<Eigen::VectorXd> u, const CellMask& solid, PressureWorkspace3D& ws, double tol,
                    bool fixed_mask, const ProgressFn* progress = nullptr, bool warm_start = false) const;
  //! The projection of every row of fields (k x N), in place; checks the shape
  //! and that the fields are finite (named u in messages).
  void project_rows(Eigen::Ref<RowMatrix> fields, double tol) const;

  //! Stencils of the x-, y-, z-component and of a cell quantity at a point (clamped).
  void x_stencil(double x, double y, double z, Stencil8& s) const;
  void y_stencil(double x, double y, double z, Stencil8& s) const;
  void z_stencil(double x, double y, double z, Stencil8& s) const;
  void cell_stencil(double x, double y, double z, Stencil8& s) const;
  //! Indices and weights only (no derivatives: the particle kernels' stencil)
  //! of component axis (0, 1, 2) or of a cell quantity (3) at p (clamped).
  void weights(int axis, const Eigen::Vector3d& p, Stencil8& s) const;
  //! Interpolated velocity (3) at a point (clamped to the domain).
  Eigen::Vector3d velocity_at(const Eigen::Ref<const Eigen::VectorXd>& u, const Eigen::Vector3d& p) const;
  //! Interpolated velocities of u (N) at the rows of points (P x 3), written to
  //! out (P x 3). Checks the shapes and that u and the points are finite.
  void velocities_at(const Eigen::Ref<const Eigen::VectorXd>& u, const Eigen::Ref<const RowMatrix>& points,
                     Eigen::Ref<RowMatrix> out) const;
  //! The rows of points (P x 3) ordered by the cell they lie in (cell index,
  //! row): particle loops visited in this order reuse the interpolation rows
  //! of their neighbours from cache. order is resized to P.
  void cell_order(const Eigen::Ref<const RowMatrix>& points, std::vector<std::pair<Index, Index>>& order) const;
  //! Clamps a point into the closed domain.
  void clamp(Eigen::Vector3d& p) const;

  //! Face Laplacian D (N x N, symmetric negative definite on the open faces):
  //! 7-point stencil per component, closed faces are zero Dirichlet
  //! neighbours, tangential walls zero-gradient (free slip).
  const Eigen::SparseMatrix<double>& laplacian() const { return laplacian_; }

  //! Semi-Lagrangian (RK2 back-trace) advection of u (N) through itself; wall faces zero.
  void advect_velocity(const Eigen::Ref<const Eigen::VectorXd>& u, double dt, Eigen::Ref<Eigen::VectorXd> out,
                       const ProgressFn* progress = nullptr) const;
  //! Semi-Lagrangian advection of a cell quantity q through u + drift (a uniform velocity, 3).
  void advect_cells(const Eigen::Ref<const Eigen::VectorXd>& u, const Eigen::Ref<const Eigen::VectorXd>& q, double dt,
                    const Eigen::Vector3d& drift, Eigen::Ref<Eigen::VectorXd> out) const;
  //! Particles (P x 3) moved by RK2 (midpoint) through u + drift; clamped to the domain.
  void advect_particles(const Eigen::Ref<const Eigen::VectorXd>& u, Eigen::Ref<RowMatrix> p, double dt,
                        const Eigen::Vector3d& drift) const;
  //! Adds magnitude * direction * exp(-|x - c|^2 / width^2) on every open
  //! face. Checks width > 0 and finite centre, direction and magnitude.
  void add_wind(Eigen::Ref<Eigen::VectorXd> f, const Eigen::Vector3d& center, const Eigen::Vector3d& direction,
                double magnitude, double width) const;
  //! Checks a velocity-sized vector: shape (N,) and finite.
  void check_field(const char* name, const Eigen::Ref<const Eigen::VectorXd>& u) const;
  //! Checks a cell-sized vector: shape (n_cells,) and finite.
  void check_cells(const char* name, const Eigen::Ref<const Eigen::VectorXd>& q) const;

 private:
  void factor_pressure();
  void assemble_face_laplacian();
  bool is_wall_face(Index f) const;
  //! Fills ws.component (flood fill of the fluid cells) and removes the mean
  //! of ws.rhs on each component (the compatibility of the Neumann problem).
  void make_compatible(const CellMask& solid, PressureWorkspace3D& ws) const;
  void solve_pcg(const CellMask& solid, PressureWorkspace3D& ws, double tol, bool warm, const ProgressFn* progress) const;

  Index nx_, ny_, nz_;
  double h_;
  CellMask solid_;                                                 //!< n_cells fixed solid flags
  bool direct_ = false;                                            //!< whether pressure_solver_ is used
  std::vector<Index> fluid_index_;                                 //!< n_cells: row in the direct system (-1 solid)
  std::vector<Index> pinned_;                                      //!< one pinned row per fluid component
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> pressure_solver_;  //!< fluid cells x fluid cells
  Eigen::SparseMatrix<double> laplacian_;                          //!< D, N x N
};

}  // namespace directable
