// Construction, the Jacobian pattern, F^A and the energy of the cloth.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "directable/models/cloth/cloth.hpp"

#include "directable/core/allocation.hpp"

namespace directable {

namespace {

std::string vec3_str(const Eigen::Vector3d& v) {
  return "(" + std::to_string(v.x()) + ", " + std::to_string(v.y()) + ", " + std::to_string(v.z()) + ")";
}

void check_nonnegative(const std::string& name, double value) {
  if (!std::isfinite(value)) throw std::domain_error(name + " must be finite, got " + std::to_string(value));
  if (value < 0.0) throw std::invalid_argument(name + " must be >= 0, got " + std::to_string(value));
}

void check_strictly_positive(const std::string& name, double value) {
  if (!std::isfinite(value)) throw std::domain_error(name + " must be finite, got " + std::to_string(value));
  if (!(value > 0.0)) throw std::invalid_argument(name + " must be > 0, got " + std::to_string(value));
}

void validate(const ClothParams& p, const std::vector<Collider>& colliders) {
  if (p.nx < 2 || p.ny < 2)
    throw std::invalid_argument("nx and ny must be >= 2, got nx=" + std::to_string(p.nx) + ", ny=" + std::to_string(p.ny));
  // ~30 doubles per node: positions, masses, springs (up to 6 per node, 3 numbers each)
  check_allocation("a cloth of nx * ny = " + std::to_string(p.nx) + " * " + std::to_string(p.ny) + " nodes",
                   30.0 * 8.0 * double(p.nx) * double(p.ny));
  check_strictly_positive("spacing", p.spacing);
  check_strictly_positive("mass", p.mass);
  check_strictly_positive("k_struct", p.k_struct);
  check_nonnegative("k_shear", p.k_shear);
  check_nonnegative("k_bend", p.k_bend);
  check_nonnegative("k_bend2", p.k_bend2);
  check_nonnegative("damping", p.damping);
  if (!p.gravity.allFinite()) throw std::domain_error("gravity must be finite, got " + vec3_str(p.gravity));
  if (!p.origin.allFinite()) throw std::domain_error("origin must be finite, got " + vec3_str(p.origin));
  const Index V = p.nx * p.ny;
  for (Index k : p.pinned)
    if (k < 0 || k >= V)
      throw std::invalid_argument("pinned node " + std::to_string(k) + " is out of range [0, " + std::to_string(V) + ")");
  for (const Collider& c : colliders) {
    const std::string what = c.kind == Collider::Kind::sphere ? "Sphere" : "Plane";
    if (!c.point.allFinite()) throw std::domain_error(what + " center/point must be finite, got " + vec3_str(c.point));
    check_strictly_positive(what + " stiffness", c.stiffness);
    check_nonnegative(what + " friction", c.friction);
    if (c.kind == Collider::Kind::sphere) check_strictly_positive("Sphere radius", c.radius);
    if (c.kind == Collider::Kind::plane) {
      if (!c.normal.allFinite()) throw std::domain_error("Plane normal must be finite, got " + vec3_str(c.normal));
      if (!(c.normal.norm() > 0.0)) throw std::invalid_argument("Plane normal must be non-zero, got " + vec3_str(c.normal));
    }
  }
}

}  // namespace

ClothModel::ClothModel(const ClothParams& params, std::vector<Collider> colliders)
    : params_(params), colliders_(std::move(colliders)) {
  validate(params_, colliders_);
  for (Collider& c : colliders_)
    if (c.kind == Collider::Kind::plane) c.normal.normalize();
  const Index nx = params_.nx, ny = params_.ny;
  V_ = nx * ny;
  masses_ = Eigen::VectorXd::Constant(V_, params_.mass);
  pinned_.assign(V_, 0);
  for (Index k : params_.pinned) pinned_[k] = 1;
  keep_ = Eigen::VectorXd::Ones(V_);
  for (Index k : params_.pinned) keep_[k] = 0.0;
  q0_.resize(3 * V_);
  for (Index j = 0; j < ny; ++j)
    for (Index i = 0; i < nx; ++i)
      q0_.segment<3>(3 * (j * nx + i)) =
          params_.origin + params_.spacing * Eigen::Vector3d(static_cast<double>(i), static_cast<double>(j), 0.0);

  auto add = [&](int di, int dj, double k) {
    if (k == 0.0) return;  // a spring type of stiffness 0 is absent
    SpringFamily f;
    f.di = di;
    f.dj = dj;
    f.rest = params_.spacing * std::sqrt(static_cast<double>(di * di + dj * dj));
    f.stiffness = k;
    f.i_begin = std::max<Index>(0, -di);
    f.i_end = nx - std::max<Index>(0, di);
    f.j_end = ny - dj;
    if (f.count() == 0) return;
    families_.push_back(f);
    const Index lo = f.i_begin, last = (f.j_end - 1) * nx + f.i_end - 1;
    Eigen::ArrayXd w = Eigen::ArrayXd::Zero(last - lo + 1);
    for (Index j = 0; j < f.j_end; ++j)
      for (Index i = f.i_begin; i < f.i_end; ++i) w[j * nx + i - lo] = 1.0;
    family_first_.push_back(lo);
    family_weight_.push_back(w);
  };
  add(1, 0, params_.k_struct);
  add(0, 1, params_.k_struct);
  add(1, 1, params_.k_shear);
  add(-1, 1, params_.k_shear);
  add(2, 0, params_.k_bend);
  add(0, 2, params_.k_bend);
  add(2, 2, params_.k_bend2);
  add(-2, 2, params_.k_bend2);
  build_pattern();
}

Index ClothModel::spring_count() const {
  Index n = 0;
  for (const SpringFamily& f : families_) n += f.count();
  return n;
}

void ClothModel::build_pattern() {
  const Index nx = params_.nx;
  std::vector<std::vector<int>> nbr(V_);
  for (Index a = 0; a < V_; ++a) nbr[a].push_back(static_cast<int>(a));
  for (const SpringFamily& f : families_)
    for (Index j = 0; j < f.j_end; ++j)
      for (Index i = f.i_begin; i < f.i_end; ++i) {
        const Index a = j * nx + i, b = a + f.dj * nx + f.di;
        nbr[a].push_back(static_cast<int>(b));
        nbr[b].push_back(static_cast<int>(a));
      }
  block_start_.assign(V_ + 1, 0);
  block_cols_.clear();
  for (Index a = 0; a < V_; ++a) {
    std::sort(nbr[a].begin(), nbr[a].end());
    nbr[a].erase(std::unique(nbr[a].begin(), nbr[a].end()), nbr[a].end());
    block_cols_.insert(block_cols_.end(), nbr[a].begin(), nbr[a].end());
    block_start_[a + 1] = static_cast<int>(block_cols_.size());
  }
  row_offsets_.assign(3 * V_ + 1, 0);
  columns_.clear();
  for (Index a = 0; a < V_; ++a)
    for (int p = 0; p < 3; ++p) {
      for (int s = block_start_[a]; s < block_start_[a + 1]; ++s)
        for (int q = 0; q < 3; ++q) columns_.push_back(3 * block_cols_[s] + q);
      row_offsets_[3 * a + p + 1] = static_cast<int>(columns_.size());
    }
  auto first_entry = [&](Index r, Index c) { return row_offsets_[3 * r] + 3 * block_slot(r, c); };
  diagonal_entry_.resize(V_);
  for (Index a = 0; a < V_; ++a) diagonal_entry_[a] = first_entry(a, a);
  spring_entry_.clear();
  for (const SpringFamily& f : families_)
    for (Index j = 0; j < f.j_end; ++j)
      for (Index i = f.i_begin; i < f.i_end; ++i) {
        const Index a = j * nx + i, b = a + f.dj * nx + f.di;
        spring_entry_.insert(spring_entry_.end(), {first_entry(a, a), first_entry(a, b), first_entry(b, a), first_entry(b, b)});
      }
}

int ClothModel::block_slot(Index row_node, Index col_node) const {
  const int* begin = block_cols_.data() + block_start_[row_node];
  const int* end = block_cols_.data() + block_start_[row_node + 1];
  return static_cast<int>(std::lower_bound(begin, end, static_cast<int>(col_node)) - begin);
}

std::unique_ptr<ClothData> ClothModel::create_data(ClothIntegrator method) const {
  auto d = std::make_unique<ClothData>();
  for (Eigen::VectorXd* b : {&d->X, &d->Y, &d->Z, &d->VX, &d->VY, &d->VZ, &d->FX, &d->FY, &d->FZ}) b->setZero(V_);
  for (Eigen::VectorXd* b : {&d->DX, &d->DY, &d->DZ, &d->L}) b->setZero(V_);
  d->F.setZero(3 * V_);
  d->dt_over_m.setZero(V_);
  d->speed2.setZero(V_);
  d->rhs.setZero(3 * V_);
  d->dv.setZero(3 * V_);
  const Index nnz = static_cast<Index>(columns_.size());
  d->Kx.setZero(nnz);
  d->Kv.setZero(nnz);
  if (method == ClothIntegrator::symplectic) return d;
  d->Bs.setZero(V_, 6);
  d->Ks.setZero(V_, 3);
  d->Dg.setZero(V_, 6);
  d->Kn.setZero(V_, 3);
  // The pattern is symmetric, so the CSR arrays also describe the CSC matrix.
  Eigen::VectorXd ones = Eigen::VectorXd::Ones(nnz);
  d->A = Eigen::Map<const Eigen::SparseMatrix<double>>(3 * V_, 3 * V_, nnz, row_offsets_.data(), columns_.data(),
                                                       ones.data());
  if (method == ClothIntegrator::implicit) {
    d->analysis = std::make_shared<const BlockLDLT>(3 * V_, 3, row_offsets_, columns_);
    d->factor = d->analysis->create_data();
    const Index nx = params_.nx;
    for (const SpringFamily& f : families_)
      for (Index j = 0; j < f.j_end; ++j)
        for (Index i = f.i_begin; i < f.i_end; ++i)
          d->spring_slots.push_back(d->analysis->block_slot(j * nx + i, j * nx + i + f.dj * nx + f.di));
    for (Index a = 0; a < V_; ++a) d->node_slots.push_back(d->analysis->block_slot(a, a));
  }
  d->cg.setTolerance(1e-12);
  return d;
}

namespace {

// Flat (3V) <-> structure of arrays (V each), on restrict parameters so that
// the stride-3 gathers and scatters vectorise.
void deinterleave(Index V, const double* __restrict q, double* __restrict X, double* __restrict Y, double* __restrict Z) {
  for (Index a = 0; a < V; ++a) {
    X[a] = q[3 * a];
    Y[a] = q[3 * a + 1];
    Z[a] = q[3 * a + 2];
  }
}

void interleave(Index V, const double* __restrict X, const double* __restrict Y, const double* __restrict Z,
                double* __restrict q) {
  for (Index a = 0; a < V; ++a) {
    q[3 * a] = X[a];
    q[3 * a + 1] = Y[a];
    q[3 * a + 2] = Z[a];
  }
}

}  // namespace

void ClothModel::load_state(const Eigen::Ref<const Eigen::VectorXd>& x, const Eigen::Ref<const Eigen::VectorXd>& v,
                            ClothData& d) const {
  deinterleave(V_, x.data(), d.X.data(), d.Y.data(), d.Z.data());
  deinterleave(V_, v.data(), d.VX.data(), d.VY.data(), d.VZ.data());
}

void ClothModel::store_state(const ClothData& d, double* x, double* v) const {
  interleave(V_, d.X.data(), d.Y.data(), d.Z.data(), x);
  interleave(V_, d.VX.data(), d.VY.data(), d.VZ.data(), v);
}

void ClothModel::throw_degenerate(const SpringFamily& f, const ClothData& d) const {
  const Index nx = params_.nx;
  for (Index j = 0; j < f.j_end; ++j)
    for (Index i = f.i_begin; i < f.i_end; ++i) {
      const Index a = j * nx + i, b = a + f.dj * nx + f.di;
      const double L = std::sqrt(std::pow(d.X[b] - d.X[a], 2) + std::pow(d.Y[b] - d.Y[a], 2) + std::pow(d.Z[b] - d.Z[a], 2));
      if (!(L >= 1e-9 * f.rest))
        throw std::domain_error("x (the positions) has a degenerate spring between nodes " + std::to_string(a) + " and " +
                                std::to_string(b) +
                                ": length " + std::to_string(L) + " m (rest " + std::to_string(f.rest) + " m)");
    }
  throw std::domain_error("x (the positions) has a degenerate spring");
}

namespace {

//! One family's spring forces on their start nodes (T = tension / L times
//! the spring vector, N each) from structure-of-arrays positions and
//! velocities: xa, va at the start nodes, xb, vb at the end nodes. Absent
//! slots (weight 0) count as springs at rest. Returns true when a spring is
//! shorter than min_length. Branch-free, on restrict parameters, so that it
//! vectorises (this file is compiled with -fno-math-errno: the square root
//! needs no scalar errno path).
bool family_tensions(Index N, double k, double c, double rest, double min_length, const double* __restrict w,
                     const double* __restrict xa, const double* __restrict ya, const double* __restrict za,
                     const double* __restrict xb, const double* __restrict yb, const double* __restrict zb,
                     const double* __restrict vxa, const double* __restrict vya, const double* __restrict vza,
                     const double* __restrict vxb, const double* __restrict vyb, const double* __restrict vzb,
                     double* __restrict TX, double* __restrict TY, double* __restrict TZ) {
  int degenerate = 0;
  for (Index s = 0; s < N; ++s) {
    const double dx = xb[s] - xa[s], dy = yb[s] - ya[s], dz = zb[s] - za[s];
    const double L = w[s] * std::sqrt(dx * dx + dy * dy + dz * dz) + (1.0 - w[s]) * rest;
    degenerate |= L < min_length;  // NaN states are caught by the callers' divergence checks
    const double il = 1.0 / L;
    const double rel = (vxb[s] - vxa[s]) * dx + (vyb[s] - vya[s]) * dy + (vzb[s] - vza[s]) * dz;
    // tension / L = k (1 - rest / L) + c (dv . D) / L^2
    const double S = w[s] * (k * (1.0 - rest * il) + c * rel * (il * il));
    TX[s] = S * dx;
    TY[s] = S * dy;
    TZ[s] = S * dz;
  }
  return degenerate != 0;
}

//! F += T (sign +1) or F -= T (sign -1), N each.
void add_tensions(Index N, double sign, const double* __restrict TX, const double* __restrict TY,
                  const double* __restrict TZ, double* __restrict FX, double* __restrict FY, double* __restrict FZ) {
  for (Index s = 0; s < N; ++s) {
    FX[s] += sign * TX[s];
    FY[s] += sign * TY[s];
    FZ[s] += sign * TZ[s];
  }
}

//! family_tensions and both add_tensions in one pass, the forces added to
//! F at the start nodes and subtracted at the end nodes (offset ahead in
//! the same arrays) with no tension arrays written and read back. For
//! offsets of at least kFusedOffset the iterations that touch one entry are
//! further apart than any vector of up to that many lanes (safelen): each
//! entry gets its additions in the scalar loop's order.
constexpr Index kFusedOffset = 8;
bool family_forces(Index N, double k, double c, double rest, double min_length, const double* __restrict w,
                   const double* __restrict xa, const double* __restrict ya, const double* __restrict za,
                   const double* __restrict xb, const double* __restrict yb, const double* __restrict zb,
                   const double* __restrict vxa, const double* __restrict vya, const double* __restrict vza,
                   const double* __restrict vxb, const double* __restrict vyb, const double* __restrict vzb,
                   double* FX, double* FY, double* FZ, Index offset) {
  int degenerate = 0;
#pragma omp simd safelen(8) reduction(| : degenerate)
  for (Index s = 0; s < N; ++s) {
    const double dx = xb[s] - xa[s], dy = yb[s] - ya[s], dz = zb[s] - za[s];
    const double L = w[s] * std::sqrt(dx * dx + dy * dy + dz * dz) + (1.0 - w[s]) * rest;
    degenerate |= L < min_length;
    const double il = 1.0 / L;
    const double rel = (vxb[s] - vxa[s]) * dx + (vyb[s] - vya[s]) * dy + (vzb[s] - vza[s]) * dz;
    const double S = w[s] * (k * (1.0 - rest * il) + c * rel * (il * il));
    const double tx = S * dx, ty = S * dy, tz = S * dz;
    FX[s] += tx;
    FY[s] += ty;
    FZ[s] += tz;
    FX[s + offset] -= tx;
    FY[s + offset] -= ty;
    FZ[s + offset] -= tz;
  }
  return degenerate != 0;
}

}  // namespace

// Per family: the springs start at nodes a in [a_lo, a_lo + N) and end at
// a + offset; the few a in that range that have no spring (the row ends)
// carry weight 0. Families whose offset is at least kFusedOffset (every one
// but the row springs (1, 0) and (2, 0) of a grid with nx >= 8) add their
// forces to a and subtract them from a + offset in the same pass; for the
// others one pass computes the forces on a and two more scatter them (a
// fused scatter would alias within a vector).
void ClothModel::spring_forces(ClothData& d) const {
  const double c = params_.damping;
  for (std::size_t fi = 0; fi < families_.size(); ++fi) {
    const SpringFamily& f = families_[fi];
    const Index N = family_weight_[fi].size(), lo = family_first_[fi], hi = lo + f.dj * params_.nx + f.di;
    if (hi - lo >= kFusedOffset) {
      if (family_forces(N, f.stiffness, c, f.rest, 1e-9 * f.rest, family_weight_[fi].data(), d.X.data() + lo,
                        d.Y.data() + lo, d.Z.data() + lo, d.X.data() + hi, d.Y.data() + hi, d.Z.data() + hi,
                        d.VX.data() + lo, d.VY.data() + lo, d.VZ.data() + lo, d.VX.data() + hi, d.VY.data() + hi,
                        d.VZ.data() + hi, d.FX.data() + lo, d.FY.data() + lo, d.FZ.data() + lo, hi - lo))
        throw_degenerate(f, d);
      continue;
    }
    if (family_tensions(N, f.stiffness, c, f.rest, 1e-9 * f.rest, family_weight_[fi].data(), d.X.data() + lo,
                        d.Y.data() + lo, d.Z.data() + lo, d.X.data() + hi, d.Y.data() + hi, d.Z.data() + hi,
                        d.VX.data() + lo, d.VY.data() + lo, d.VZ.data() + lo, d.VX.data() + hi, d.VY.data() + hi,
                        d.VZ.data() + hi, d.DX.data(), d.DY.data(), d.DZ.data()))
      throw_degenerate(f, d);
    add_tensions(N, 1.0, d.DX.data(), d.DY.data(), d.DZ.data(), d.FX.data() + lo, d.FY.data() + lo, d.FZ.data() + lo);
    add_tensions(N, -1.0, d.DX.data(), d.DY.data(), d.DZ.data(), d.FX.data() + hi, d.FY.data() + hi, d.FZ.data() + hi);
  }
}

namespace {

//! Normal and friction force of one collider on one node; returns false
//! when the node is outside. Optionally the 3x3 Jacobians (accumulated).
bool collider_force(const Collider& col, const Eigen::Vector3d& x, const Eigen::Vector3d& v, Eigen::Vector3d& f,
                    Eigen::Matrix3d* Jx, Eigen::Matrix3d* Jv) {
  Eigen::Vector3d n;
  double phi, rho = 0.0;
  if (col.kind == Collider::Kind::sphere) {
    const Eigen::Vector3d r = x - col.point;
    rho = r.norm();
    phi = rho - col.radius;
    if (phi >= 0.0 || rho == 0.0) return false;
    n = r / rho;
  } else {
    n = col.normal;
    phi = n.dot(x - col.point);
    if (phi >= 0.0) return false;
  }
  const double fn = -col.stiffness * phi;  // > 0
  const Eigen::Matrix3d Pn = Eigen::Matrix3d::Identity() - n * n.transpose();
  const Eigen::Vector3d vt = Pn * v;
  const double eps = Collider::slip_velocity;
  const double sl = std::sqrt(vt.squaredNorm() + eps * eps);
  const Eigen::Vector3d g = vt / sl;
  f = fn * n - col.friction * fn * g;
  if (Jx) {
    const bool sphere = col.kind == Collider::Kind::sphere;
    const Eigen::Matrix3d dn = sphere ? Eigen::Matrix3d(Pn / rho) : Eigen::Matrix3d::Zero();  // dn/dx
    const Eigen::RowVector3d dfn = -col.stiffness * n.transpose();                            // dfn/dx
    const Eigen::Matrix3d G = (Eigen::Matrix3d::Identity() - g * g.transpose()) / sl;         // dg/dvt
    // dvt/dx = -(n v' + (n.v) I) dn/dx
    const Eigen::Matrix3d dvt = -(n * v.transpose() + n.dot(v) * Eigen::Matrix3d::Identity()) * dn;
    *Jx += n * dfn + fn * dn - col.friction * (g * dfn + fn * G * dvt);
    *Jv += -col.friction * fn * G * Pn;
  }
  return true;
}

}  // namespace

void ClothModel::collider_forces(ClothData& d) const {
  if (colliders_.empty()) return;
  Eigen::Vector3d f;
  for (Index a = 0; a < V_; ++a) {
    const Eigen::Vector3d x(d.X[a], d.Y[a], d.Z[a]), v(d.VX[a], d.VY[a], d.VZ[a]);
    for (const Collider& col : colliders_)
      if (collider_force(col, x, v, f, nullptr, nullptr)) {
        d.FX[a] += f.x();
        d.FY[a] += f.y();
        d.FZ[a] += f.z();
      }
  }
}

void ClothModel::soa_applied_forces(ClothData& d) const {
  const Eigen::Vector3d g = params_.gravity;
  d.FX = masses_ * g.x();
  d.FY = masses_ * g.y();
  d.FZ = masses_ * g.z();
  spring_forces(d);
  collider_forces(d);
}

void ClothModel::applied_forces(const Eigen::Ref<const Eigen::VectorXd>& x, const Eigen::Ref<const Eigen::VectorXd>& v,
                                Eigen::Ref<Eigen::VectorXd> F, PointMassData& data) const {
  ClothData& d = static_cast<ClothData&>(data);
  load_state(x, v, d);
  soa_applied_forces(d);
  double* Fp = F.data();
  for (Index a = 0; a < V_; ++a) {
    Fp[3 * a] = d.FX[a];
    Fp[3 * a + 1] = d.FY[a];
    Fp[3 * a + 2] = d.FZ[a];
  }
}

double ClothModel::energy(const Eigen::Ref<const Eigen::VectorXd>& x) const {
  const Index nx = params_.nx;
  double E = 0.0;
  for (const SpringFamily& f : families_)
    for (Index j = 0; j < f.j_end; ++j)
      for (Index i = f.i_begin; i < f.i_end; ++i) {
        const Index a = j * nx + i, b = a + f.dj * nx + f.di;
        const double L = (x.segment<3>(3 * b) - x.segment<3>(3 * a)).norm();
        E += 0.5 * f.stiffness * (L - f.rest) * (L - f.rest);
      }
  for (Index a = 0; a < V_; ++a) {
    const Eigen::Vector3d p = x.segment<3>(3 * a);
    E -= masses_[a] * params_.gravity.dot(p);
    for (const Collider& col : colliders_) {
      const double phi = col.kind == Collider::Kind::sphere ? (p - col.point).norm() - col.radius
                                                            : col.normal.dot(p - col.point);
      if (phi < 0.0) E += 0.5 * col.stiffness * phi * phi;
    }
  }
  return E;
}

void ClothModel::add_block(double* values, Index r, int entry, const Eigen::Matrix3d& B, bool accumulate) const {
  const int stride = row_offsets_[3 * r + 1] - row_offsets_[3 * r];
  for (int p = 0; p < 3; ++p) {
    double* row = values + entry + p * stride;
    for (int q = 0; q < 3; ++q) row[q] = (accumulate ? row[q] : 0.0) + B(p, q);
  }
}

void ClothModel::write_block(double* values, Index r, int entry, const double* B) const {
  const int stride = row_offsets_[3 * r + 1] - row_offsets_[3 * r];
  for (int p = 0; p < 3; ++p)
    for (int q = 0; q < 3; ++q) values[entry + p * stride + q] = B[3 * p + q];
}

namespace {

//! One spring's Jacobian blocks: Jx = dF_a/dx_b and Jv = dF_a/dv_b (3 x 3
//! each; dF_a/dx_a = -Jx, dF_b/dx_a = Jx, dF_b/dx_b = -Jx, the same for v),
//! for the spring vector dxv = x_b - x_a (length L > 0) and dvv = v_b - v_a.
inline void spring_jacobians(const SpringFamily& f, double c, const Eigen::Vector3d& dxv, const Eigen::Vector3d& dvv,
                             Eigen::Matrix3d& Jx, Eigen::Matrix3d& Jv) {
  const double L = dxv.norm();
  const Eigen::Vector3d u = dxv / L;
  const Eigen::Matrix3d P = Eigen::Matrix3d::Identity() - u * u.transpose();
  const double rel = dvv.dot(u);
  Jx = f.stiffness * u * u.transpose() + (f.stiffness * (L - f.rest) + c * rel) / L * P + (c / L) * u * (P * dvv).transpose();
  Jv = c * u * u.transpose();
}

}  // namespace

void ClothModel::forces_and_jacobians(const Eigen::Ref<const Eigen::VectorXd>& x,
                                      const Eigen::Ref<const Eigen::VectorXd>& v, ClothData& d) const {
  applied_forces(x, v, d.F, d);
  // Every off-diagonal block belongs to exactly one spring and is assigned
  // below (dF/dv's stay zero without damping); only the diagonal blocks,
  // shared by a node's springs and colliders, accumulate.
  double* Kx = d.Kx.data();
  double* Kv = d.Kv.data();
  for (Index a = 0; a < V_; ++a) {
    add_block(Kx, a, diagonal_entry_[a], Eigen::Matrix3d::Zero(), false);
    add_block(Kv, a, diagonal_entry_[a], Eigen::Matrix3d::Zero(), false);
  }
  const Index nx = params_.nx;
  const double c = params_.damping;
  const int* entry = spring_entry_.data();
  Eigen::Matrix3d Jx, Jv;
  for (const SpringFamily& f : families_)
    for (Index j = 0; j < f.j_end; ++j)
      for (Index i = f.i_begin; i < f.i_end; ++i) {
        const Index a = j * nx + i, b = a + f.dj * nx + f.di;
        const Eigen::Vector3d dxv(d.X[b] - d.X[a], d.Y[b] - d.Y[a], d.Z[b] - d.Z[a]);
        const Eigen::Vector3d dvv(d.VX[b] - d.VX[a], d.VY[b] - d.VY[a], d.VZ[b] - d.VZ[a]);
        spring_jacobians(f, c, dxv, dvv, Jx, Jv);
        add_block(Kx, a, entry[0], -Jx);
        add_block(Kx, a, entry[1], Jx, false);
        add_block(Kx, b, entry[2], Jx, false);
        add_block(Kx, b, entry[3], -Jx);
        if (c != 0.0) {
          add_block(Kv, a, entry[0], -Jv);
          add_block(Kv, a, entry[1], Jv, false);
          add_block(Kv, b, entry[2], Jv, false);
          add_block(Kv, b, entry[3], -Jv);
        }
        entry += 4;
      }
  if (colliders_.empty()) return;
  Eigen::Vector3d fc;
  for (Index a = 0; a < V_; ++a) {
    const Eigen::Vector3d xa(d.X[a], d.Y[a], d.Z[a]), va(d.VX[a], d.VY[a], d.VZ[a]);
    Eigen::Matrix3d Jx = Eigen::Matrix3d::Zero(), Jv = Eigen::Matrix3d::Zero();
    bool any = false;
    for (const Collider& col : colliders_) any |= collider_force(col, xa, va, fc, &Jx, &Jv);
    if (any) {
      add_block(Kx, a, diagonal_entry_[a], Jx);
      add_block(Kv, a, diagonal_entry_[a], Jv);
    }
  }
}

void ClothModel::implicit_system(const Eigen::Ref<const Eigen::VectorXd>& x, const Eigen::Ref<const Eigen::VectorXd>& v,
                                 double dt, const double* u, ClothData& d, bool into_factor) const {
  // The terms of forces_and_jacobians in closed form per spring, computed
  // family by family on structure-of-arrays slots (vectorised) and added
  // into A and rhs directly: no dF/dx, dF/dv arrays are written or read
  // back. With u = (x_b - x_a) / L, dv = v_b - v_a, rel = u . dv, w = dv -
  // rel u and alpha = k (1 - rest / L) + c rel / L (the tension over L):
  //   dF_a/dx_b = Jx = k u u' + alpha (I - u u') + (c / L) u w',  dF_a/dv_b = c u u',
  //   B = dt c u u' + dt^2 sym(Jx) = beta u u' + gamma I + eta (u w' + w u'),
  //     beta = dt c + dt^2 (k - alpha), gamma = dt^2 alpha, eta = dt^2 c / (2 L),
  //   dt^2 Jx dv = dt^2 ((k rel + (c / L) |w|^2) u + alpha w),  F_a = alpha (x_b - x_a).
  // Block (a, b) of A = M - dt dF/dv - dt^2 sym(dF/dx) is -B and blocks
  // (a, a), (b, b) gain B; rhs_a gains dt^2 Jx dv and rhs_b loses it.
  using Arr = Eigen::Map<Eigen::ArrayXd>;
  using CArr = Eigen::Map<const Eigen::ArrayXd>;
  load_state(x, v, d);
  const Eigen::Vector3d g = params_.gravity;
  d.FX = masses_ * g.x();
  d.FY = masses_ * g.y();
  d.FZ = masses_ * g.z();
  d.Dg.setZero();
  d.Kn.setZero();
  const Index nx = params_.nx;
  const double c = params_.damping, dt2 = dt * dt;
  double* A = d.A.valuePtr();
  double* panels = into_factor ? d.factor.factor.data() : nullptr;
  if (into_factor) d.analysis->clear_panels(d.factor);
  // a symmetric block B (xx yy zz xy xz yz) into the panels at a slot, or into A's CSR rows
  auto put_block = [&](const BlockLDLTSlot& slot, const double* B) {
    double* out = panels + slot.offset;
    const Index ld = slot.stride;
    out[0] = B[0], out[1] = B[3], out[2] = B[4];
    out[ld] = B[3], out[ld + 1] = B[1], out[ld + 2] = B[5];
    out[2 * ld] = B[4], out[2 * ld + 1] = B[5], out[2 * ld + 2] = B[2];
  };
  const int* entry = spring_entry_.data();
  const BlockLDLTSlot* spring_slot = into_factor ? d.spring_slots.data() : nullptr;
  for (std::size_t fi = 0; fi < families_.size(); ++fi) {
    const SpringFamily& f = families_[fi];
    const Eigen::ArrayXd& weight = family_weight_[fi];
    const Index N = weight.size(), lo = family_first_[fi], hi = lo + f.dj * nx + f.di;
    Arr DX(d.DX.data(), N), DY(d.DY.data(), N), DZ(d.DZ.data(), N), IL(d.L.data(), N);
    DX = CArr(d.X.data() + hi, N) - CArr(d.X.data() + lo, N);
    DY = CArr(d.Y.data() + hi, N) - CArr(d.Y.data() + lo, N);
    DZ = CArr(d.Z.data() + hi, N) - CArr(d.Z.data() + lo, N);
    IL = weight * (DX.square() + DY.square() + DZ.square()).sqrt() + (1.0 - weight) * f.rest;  // absent slots: rest length
    if (!(IL.minCoeff() >= 1e-9 * f.rest)) throw_degenerate(f, d);
    IL = IL.inverse();
    {
      const double k = f.stiffness, rest = f.rest, beta0 = dt * c + dt2 * k;
      const double* __restrict w = weight.data();
      const double* __restrict il = d.L.data();
      double* __restrict dx = d.DX.data();
      double* __restrict dy = d.DY.data();
      double* __restrict dz = d.DZ.data();
      const double *__restrict vxa = d.VX.data() + lo, *__restrict vya = d.VY.data() + lo, *__restrict vza = d.VZ.data() + lo;
      const double *__restrict vxb = d.VX.data() + hi, *__restrict vyb = d.VY.data() + hi, *__restrict vzb = d.VZ.data() + hi;
      double *__restrict bxx = d.Bs.col(0).data(), *__restrict byy = d.Bs.col(1).data(), *__restrict bzz = d.Bs.col(2).data();
      double *__restrict bxy = d.Bs.col(3).data(), *__restrict bxz = d.Bs.col(4).data(), *__restrict byz = d.Bs.col(5).data();
      double *__restrict kx = d.Ks.col(0).data(), *__restrict ky = d.Ks.col(1).data(), *__restrict kz = d.Ks.col(2).data();
      for (Index s = 0; s < N; ++s) {
        const double ux = dx[s] * il[s], uy = dy[s] * il[s], uz = dz[s] * il[s];
        const double dvx = vxb[s] - vxa[s], dvy = vyb[s] - vya[s], dvz = vzb[s] - vza[s];
        const double rel = ux * dvx + uy * dvy + uz * dvz;
        const double wx = dvx - rel * ux, wy = dvy - rel * uy, wz = dvz - rel * uz;
        const double alpha = w[s] * (k * (1.0 - rest * il[s]) + c * rel * il[s]);
        const double beta = w[s] * beta0 - dt2 * alpha, gamma = dt2 * alpha, eta = w[s] * 0.5 * dt2 * c * il[s];
        bxx[s] = beta * ux * ux + gamma + 2.0 * eta * ux * wx;
        byy[s] = beta * uy * uy + gamma + 2.0 * eta * uy * wy;
        bzz[s] = beta * uz * uz + gamma + 2.0 * eta * uz * wz;
        bxy[s] = beta * ux * uy + eta * (ux * wy + wx * uy);
        bxz[s] = beta * ux * uz + eta * (ux * wz + wx * uz);
        byz[s] = beta * uy * uz + eta * (uy * wz + wy * uz);
        const double su = dt2 * w[s] * (k * rel + c * il[s] * (wx * wx + wy * wy + wz * wz)), sw = dt2 * alpha;
        kx[s] = su * ux + sw * wx;
        ky[s] = su * uy + sw * wy;
        kz[s] = su * uz + sw * wz;
        dx[s] *= alpha;  // the spring force on a
        dy[s] *= alpha;
        dz[s] *= alpha;
      }
    }
    // per node: the forces, the diagonal blocks' sums and the rhs terms (two passes: a and b do not alias)
    Arr(d.FX.data() + lo, N) += DX;
    Arr(d.FY.data() + lo, N) += DY;
    Arr(d.FZ.data() + lo, N) += DZ;
    Arr(d.FX.data() + hi, N) -= DX;
    Arr(d.FY.data() + hi, N) -= DY;
    Arr(d.FZ.data() + hi, N) -= DZ;
    d.Dg.middleRows(lo, N) += d.Bs.topRows(N);
    d.Dg.middleRows(hi, N) += d.Bs.topRows(N);
    d.Kn.middleRows(lo, N) += d.Ks.topRows(N);
    d.Kn.middleRows(hi, N) -= d.Ks.topRows(N);
    // the off-diagonal blocks (a, b) and (b, a): -B, or zero when an end is pinned
    const double *bxx = d.Bs.col(0).data(), *byy = d.Bs.col(1).data(), *bzz = d.Bs.col(2).data();
    const double *bxy = d.Bs.col(3).data(), *bxz = d.Bs.col(4).data(), *byz = d.Bs.col(5).data();
    for (Index j = 0; j < f.j_end; ++j)
      for (Index i = f.i_begin; i < f.i_end; ++i, entry += 4) {
        const Index a = j * nx + i, b = a + f.dj * nx + f.di, s = a - lo;
        const double keep = (pinned_[a] || pinned_[b]) ? 0.0 : -1.0;
        const double block[6] = {keep * bxx[s], keep * byy[s], keep * bzz[s], keep * bxy[s], keep * bxz[s], keep * byz[s]};
        if (into_factor) {
          put_block(*spring_slot++, block);
        } else {
          const double full[9] = {block[0], block[3], block[4], block[3], block[1], block[5], block[4], block[5], block[2]};
          write_block(A, a, entry[1], full);
          write_block(A, b, entry[2], full);
        }
      }
  }
  // per node: M + the springs' blocks + the colliders' on the diagonal, and the right-hand side
  // dt (F + u + dt dF/dx v); a pinned node's row and column are those of the identity
  double* rhs = d.rhs.data();
  double* F = d.F.data();
  Eigen::Vector3d fc;
  Eigen::Matrix3d Jx, Jv;
  for (Index a = 0; a < V_; ++a) {
    Eigen::Vector3d fa(d.FX[a], d.FY[a], d.FZ[a]);
    Eigen::Matrix3d D;
    Eigen::Vector3d kv;
    if (pinned_[a]) {
      D.setIdentity();
      kv.setZero();
      for (const Collider& col : colliders_)  // F^A still includes the colliders' forces
        if (collider_force(col, Eigen::Vector3d(d.X[a], d.Y[a], d.Z[a]), Eigen::Vector3d(d.VX[a], d.VY[a], d.VZ[a]), fc,
                           nullptr, nullptr))
          fa += fc;
    } else {
      const double m = masses_[a];
      D << m + d.Dg(a, 0), d.Dg(a, 3), d.Dg(a, 4), d.Dg(a, 3), m + d.Dg(a, 1), d.Dg(a, 5), d.Dg(a, 4), d.Dg(a, 5),
          m + d.Dg(a, 2);
      kv = d.Kn.row(a).transpose();
      if (!colliders_.empty()) {
        const Eigen::Vector3d xa(d.X[a], d.Y[a], d.Z[a]), va(d.VX[a], d.VY[a], d.VZ[a]);
        Jx.setZero();
        Jv.setZero();
        bool any = false;
        for (const Collider& col : colliders_)
          if (collider_force(col, xa, va, fc, &Jx, &Jv)) {
            fa += fc;
            any = true;
          }
        if (any) {
          D += -dt * Jv - (0.5 * dt2) * (Jx + Jx.transpose());
          kv += dt2 * (Jx * va);
        }
      }
    }
    if (into_factor) {
      const double block[6] = {D(0, 0), D(1, 1), D(2, 2), D(1, 0), D(2, 0), D(2, 1)};
      put_block(d.node_slots[a], block);
    } else {
      add_block(A, a, diagonal_entry_[a], D, false);
    }
    for (int r = 0; r < 3; ++r) {
      F[3 * a + r] = fa[r];
      rhs[3 * a + r] = pinned_[a] ? 0.0 : dt * (fa[r] + (u ? u[3 * a + r] : 0.0)) + kv[r];
    }
  }
}

}  // namespace directable
