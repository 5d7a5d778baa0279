#pragma once
// Closed loops of a model under the eq. 14 PD law (control/particle_pd):
// one run with its whole record, and a sweep of many gain settings in
// parallel (Barbic & Popovic's Fig. 7 protocol: about 100 P and PD settings
// compared with LQR under one control budget).
#include <Eigen/Core>

#include "directable/control/particle_pd.hpp"
#include "directable/core/progress.hpp"
#include "directable/core/sequence.hpp"
#include "directable/sim/simulate.hpp"

namespace directable {

//! `steps` (<= T) steps of law.model() from x0 with w = PD(x, i) plus the
//! disturbance (steps x r, or empty) held over each step. The result's
//! controls and feedback are the law's w, effort |w|^2 per step,
//! tracking_error |x_i - x_ref[i]|. Throws std::domain_error naming the step
//! where the state goes non-finite.
SimulationResult simulate_particle_pd(const ParticlePD& law, const Eigen::Ref<const Eigen::VectorXd>& x0, Index steps,
                                      SeqView disturbance, const ProgressFn* progress = nullptr);

//! Outcomes of a sweep over gain settings.
struct ParticlePDSweep {
  RowMatrix final_error;   //!< m x P: |p_i - p_ref,i| at the last step (inf where diverged)
  RowMatrix max_error;     //!< m x P: the largest |p_i - p_ref,i| over the run (inf where diverged)
  Eigen::VectorXd effort;  //!< m: sum_i |w_i|^2 dt (inf where diverged)
  Eigen::VectorXi diverged_at;  //!< m: the step whose state went non-finite, -1 for none
};

//! One run per row (k_z, k_p, k_pdot) of gains (m x 3), each with the same
//! start, steps and disturbance; parallel over the settings (threads <= 0:
//! all cores), progress over the settings.
ParticlePDSweep sweep_particle_pd(const ParticlePD& law, const Eigen::Ref<const RowMatrix>& gains,
                                  const Eigen::Ref<const Eigen::VectorXd>& x0, Index steps, SeqView disturbance,
                                  int threads = 0, const ProgressFn* progress = nullptr);

}  // namespace directable
