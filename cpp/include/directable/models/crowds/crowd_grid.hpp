#pragma once
// Continuum crowds (Treuille thesis ch. 4): the grid and its fields.
//
// Cells (i, j) are ny rows x nx columns, row-major (flat index j nx + i),
// centred at ((i + 1/2) h, (j + 1/2) h) on the domain [0, nx h] x [0, ny h]:
// the layout of MACGrid2D, whose face layout (all x-faces, then all
// y-faces) and bilinear interpolation the velocities use. Anisotropic
// fields are (4, ny nx) in the direction order E, N, W, S (theta = 0, 90,
// 180, 270 degrees); entry [d, M] refers to moving from cell M into its
// neighbour in direction d. Units as in Table 4.1: lengths in cells when
// h = 1, time in steps when dt = 1.
#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <vector>

#include "directable/core/types.hpp"
#include "directable/models/fluid/mac_grid.hpp"

namespace directable {

//! Direction index d of the anisotropic fields.
enum CrowdDirection : int { kEast = 0, kNorth = 1, kWest = 2, kSouth = 3 };
//! Cell offsets (di, dj) of the four directions.
constexpr int kDirDi[4] = {1, 0, -1, 0};
constexpr int kDirDj[4] = {0, 1, 0, -1};

//! Parameters of Table 4.1 plus the slope range of eq. 4.8. Checked on
//! construction (std::domain_error naming the parameter).
struct CrowdParams {
  double f_max = 0.15;     //!< unobstructed speed, cells per step
  double rho_min = 0.25;   //!< density where the flow speed starts to matter
  double rho_max = 0.563;  //!< density where people move with the flow
  double lam = 2.0;        //!< density exponent lambda of the splat
  double delta_min = 0.3;  //!< minimum distance between people, cells
  double alpha = 0.164;    //!< weight of path length
  double beta = 0.016;     //!< weight of time
  double gamma = 0.82;     //!< weight of discomfort per unit time
  double f_min = 0.0;      //!< speed on the steepest uphill slope
  double s_min = 0.0;      //!< slope giving f_max
  double s_max = 1.0;      //!< slope giving f_min
  //! The flow speed of eq. 4.9 never falls below flow_floor x f_T, in
  //! [0, 1]. 0 is eq. 4.9 as printed, where a dense crowd standing still
  //! (rho >= rho_max, ubar = 0) has speed exactly 0 into its cells: an
  //! absorbing jam (cost +inf behind it, nobody moves, ubar stays 0). A
  //! small floor lets people through such a jam at a crawl.
  double flow_floor = 0.0;

  //! Throws std::domain_error naming the first invalid parameter.
  void validate() const;
  //! Table 4.1's row "lanes", "vortex", "armies", "quad" or "city".
  static CrowdParams table_4_1(const std::string& name);
};

//! Traffic-light-like periodic closure of some cells: green for the first
//! green_fraction of every period (time shifted by phase), red otherwise.
struct PeriodicClosure {
  std::vector<std::uint8_t> mask;  //!< (ny nx) cells closed while red
  double green_fraction = 1.0;     //!< in [0, 1]
  double period = 1.0;             //!< steps (time units), > 0
  double phase = 0.0;              //!< time units added before the modulo
  bool green(double time) const;
};

//! The static description of the world: size, height field, static
//! discomfort, walls and periodic closures. Immutable once shared.
class CrowdGrid {
 public:
  //! height, discomfort: (ny nx) or empty (zero); blocked: (ny nx) or empty.
  CrowdGrid(Index nx, Index ny, double h, const Eigen::Ref<const Eigen::VectorXd>& height,
            const Eigen::Ref<const Eigen::VectorXd>& discomfort, const std::vector<std::uint8_t>& blocked);

  Index nx() const { return mac_.nx(); }
  Index ny() const { return mac_.ny(); }
  Index n_cells() const { return mac_.n_cells(); }
  double h() const { return mac_.h(); }
  const MACGrid2D& mac() const { return mac_; }
  const Eigen::VectorXd& height() const { return height_; }          //!< (ny nx)
  const Eigen::VectorXd& discomfort() const { return discomfort_; }  //!< (ny nx)
  const std::vector<std::uint8_t>& blocked() const { return blocked_; }
  bool is_blocked(Index c) const { return blocked_[c] != 0; }
  //! Neighbour of cell (i, j) in direction d, or -1 off the grid.
  Index neighbour(Index i, Index j, int d) const {
    const Index a = i + kDirDi[d], b = j + kDirDj[d];
    return (a < 0 || b < 0 || a >= nx() || b >= ny()) ? -1 : b * nx() + a;
  }
  //! Cell containing (x, y), or -1 outside the domain.
  Index cell_of(double x, double y) const;

  //! Adds a periodic closure (configuration: call before sharing the grid).
  void add_periodic(const std::vector<std::uint8_t>& mask, double green_fraction, double period, double phase);
  const std::vector<PeriodicClosure>& periodic() const { return periodic_; }
  //! Expected-speed factor of moving into each cell (the product of the
  //! green fractions of the closures containing it), (ny nx).
  const Eigen::VectorXd& expected_factor() const { return expected_; }
  //! 1 where some closure is red at `time`, (ny nx) written into `closed`.
  void red_cells(double time, std::vector<std::uint8_t>& closed) const;

  //! Throws std::domain_error naming `name` and the offending rows when a
  //! point of P (k x 2) is non-finite, outside the domain or in a blocked cell.
  void check_positions(const std::string& name, const Eigen::Ref<const RowMatrix>& P) const;
  //! Throws std::invalid_argument unless `mask` has n_cells entries, and
  //! std::domain_error if it has no free (unblocked) cell.
  void check_goal(const std::string& name, const std::vector<std::uint8_t>& mask) const;

 private:
  MACGrid2D mac_;
  Eigen::VectorXd height_, discomfort_, expected_;  // (ny nx) each
  std::vector<std::uint8_t> blocked_;                // (ny nx)
  std::vector<PeriodicClosure> periodic_;
};

//! Density splat of sec. 4.2.1 and the mean velocity of eq. 4.7 (lam > 0,
//! checked).
//! positions, velocities (P x 2); active (P, or empty = all) selects who
//! counts; rho (ny nx) and ubar (ny nx x 2) are overwritten.
void splat(const CrowdGrid& grid, const Eigen::Ref<const RowMatrix>& positions,
           const Eigen::Ref<const RowMatrix>& velocities, const std::vector<std::uint8_t>& active, double lam,
           Eigen::Ref<Eigen::VectorXd> rho, Eigen::Ref<RowMatrix> ubar);
//! Adds scale * the splat density of the points (P x 2) to `field` (ny nx).
void splat_density_add(const CrowdGrid& grid, const Eigen::Ref<const RowMatrix>& positions, double lam, double scale,
                       Eigen::Ref<Eigen::VectorXd> field);

//! Topographical speed f_T of eq. 4.8 of every move M -> N (4 x ny nx):
//! the slope (H[N] - H[M]) / h clamped into [s_min, s_max]. Moves into or
//! out of blocked cells and off the grid hold -1e300, a sentinel that
//! flow_speed turns into speed 0 (a real f_T is never negative). Depends
//! only on the grid and the parameters: a crowd computes it once per group.
void topographic_speed(const CrowdGrid& grid, const CrowdParams& params, Eigen::Ref<RowMatrix> fT);

//! Speed of eq. 4.9-4.10 from the topographical speed fT (4 x ny nx, with
//! topographic_speed's sentinel): f = f_T + w (f_ubar - f_T) with the flow
//! speed max(0, ubar[N] . n_d) and the weight clip((rho[N] - rho_min) /
//! (rho_max - rho_min), 0, 1); 0 on the sentinel moves. `factor` (ny nx, or
//! empty) scales the speed into each cell (expected periodic speed);
//! `closed` (ny nx, or empty) adds cells nobody may enter. One pass per
//! direction over contiguous cells, no allocation. `speed` may be `fT`
//! itself (the update is elementwise). Unchecked: the caller built the fields.
void flow_speed(const CrowdGrid& grid, const CrowdParams& params, const Eigen::Ref<const RowMatrix>& fT,
                const Eigen::Ref<const Eigen::VectorXd>& rho, const Eigen::Ref<const RowMatrix>& ubar,
                const std::vector<std::uint8_t>& closed, const Eigen::Ref<const Eigen::VectorXd>& factor,
                Eigen::Ref<RowMatrix> speed);

//! Speed field of eq. 4.8-4.10 in the fixed discrete form: per move M -> N,
//! the slope (H[N] - H[M]) / h clamped into [s_min, s_max], the flow speed
//! max(0, ubar[N] . n_d), the weight clip((rho[N] - rho_min) / (rho_max -
//! rho_min), 0, 1); zero into or out of blocked cells and off the grid.
//! `closed` (ny nx, or empty) adds cells nobody may enter; `factor` (ny nx,
//! or empty) scales the speed into each cell (expected periodic speed).
//! Validates the shapes (rho: ny nx, ubar: ny nx x 2, speed: 4 x ny nx) and
//! that rho and ubar are finite. speed: (4 x ny nx).
void speed_field(const CrowdGrid& grid, const CrowdParams& params, const Eigen::Ref<const Eigen::VectorXd>& rho,
                 const Eigen::Ref<const RowMatrix>& ubar, const std::vector<std::uint8_t>& closed,
                 const Eigen::Ref<const Eigen::VectorXd>& factor, Eigen::Ref<RowMatrix> speed);

//! Unit cost of eq. 4.4: C = (alpha f + beta + gamma g[N]) / f, +inf where
//! f = 0. speed, cost: (4 x ny nx); discomfort g: (ny nx). Validates shapes
//! and finiteness.
void unit_cost(const CrowdGrid& grid, const CrowdParams& params, const Eigen::Ref<const RowMatrix>& speed,
               const Eigen::Ref<const Eigen::VectorXd>& discomfort, Eigen::Ref<RowMatrix> cost);
//! unit_cost without the checks (the crowd step's own fields).
void unit_cost_unchecked(const CrowdGrid& grid, const CrowdParams& params, const Eigen::Ref<const RowMatrix>& speed,
                         const Eigen::Ref<const Eigen::VectorXd>& discomfort, Eigen::Ref<RowMatrix> cost);

}  // namespace directable
