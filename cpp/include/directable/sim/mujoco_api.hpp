#pragma once
// MuJoCo's C API, found at run time: the library is built without MuJoCo's
// headers and without linking it. The caller (directable.mujoco) names the
// shared library its MuJoCo Python package loaded (libmujoco.so.* next to
// mujoco/__init__.py); dlopen then returns that same, already loaded copy,
// so models and data made by the Python package are understood by it.
//
// The function types below are declared from mujoco.h of MuJoCo 4.0.0
// (mjVERSION_HEADER 4000000, mjtNum = double); load() refuses a library whose
// mj_version() is another major.minor release, since MuJoCo changes
// signatures between minor releases (mj_fullM in 3.3).
#include <memory>
#include <string>

namespace directable {

//! MuJoCo's mjModel and mjData, opaque here: only MuJoCo's functions read them.
struct MjModelHandle;
struct MjDataHandle;

//! The entry points of one loaded MuJoCo library. Immutable; shared.
struct MujocoApi {
  //! mjVERSION_HEADER of the mujoco.h the types below were written against.
  static constexpr int header_version = 4000000;

  using StepFn = void (*)(const MjModelHandle* m, MjDataHandle* d);
  using FullMFn = void (*)(const MjModelHandle* m, const MjDataHandle* d, double* dst);
  using DifferentiatePosFn = void (*)(const MjModelHandle* m, double* qvel, double dt, const double* qpos1,
                                      const double* qpos2);
  using IntegratePosFn = void (*)(const MjModelHandle* m, double* qpos, const double* qvel, double dt);
  using VersionFn = int (*)();

  //! Opens `path` (dlopen RTLD_NOW | RTLD_LOCAL; LoadLibrary on Windows) and resolves every entry point;
  //! invalid_argument naming the path when it cannot be opened, lacks a
  //! symbol or reports another major.minor version than header_version.
  static std::shared_ptr<const MujocoApi> load(const std::string& path);

  std::string path;
  int version = 0;  //!< mj_version(): 100 * (100 * major + minor) + patch
  StepFn step = nullptr;           //!< mj_step
  StepFn step1 = nullptr;          //!< mj_step1: position and velocity stages
  StepFn step2 = nullptr;          //!< mj_step2: actuation, acceleration, integration
  StepFn forward = nullptr;        //!< mj_forward
  StepFn fwd_position = nullptr;   //!< mj_fwdPosition
  StepFn fwd_velocity = nullptr;   //!< mj_fwdVelocity
  FullMFn full_m = nullptr;        //!< mj_fullM: the dense nv x nv mass matrix (armature included)
  DifferentiatePosFn differentiate_pos = nullptr;  //!< mj_differentiatePos: (qpos2 (-) qpos1) / dt
  IntegratePosFn integrate_pos = nullptr;          //!< mj_integratePos: qpos <- qpos (+) dt qvel

 private:
  static std::shared_ptr<const MujocoApi> open(void* handle, const std::string& path);
  void* handle_ = nullptr;  //!< kept open for the process' life (MuJoCo's own module holds it too)
};

}  // namespace directable
