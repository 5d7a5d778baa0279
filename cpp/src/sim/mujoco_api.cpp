#include "directable/sim/mujoco_api.hpp"

#ifdef _WIN32
#include <windows.h>
#else
#include <dlfcn.h>
#endif

#include <mutex>
#include <stdexcept>
#include <unordered_map>

namespace directable {

namespace {

std::string version_string(int v) {
  return std::to_string(v / 1000000) + "." + std::to_string(v / 10000 % 100) + "." + std::to_string(v % 10000);
}

// The platform's loader: dlopen/dlsym, or LoadLibrary/GetProcAddress on Windows.
#ifdef _WIN32
void* open_library(const std::string& path) { return reinterpret_cast<void*>(LoadLibraryA(path.c_str())); }
void* find_symbol(void* handle, const char* name) {
  return reinterpret_cast<void*>(GetProcAddress(static_cast<HMODULE>(handle), name));
}
void close_library(void* handle) { FreeLibrary(static_cast<HMODULE>(handle)); }
std::string loader_error() { return "LoadLibrary failed, error " + std::to_string(GetLastError()); }
#else
void* open_library(const std::string& path) { return dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL); }
void* find_symbol(void* handle, const char* name) {
  dlerror();
  return dlsym(handle, name);
}
void close_library(void* handle) { dlclose(handle); }
std::string loader_error() {
  const char* why = dlerror();
  return why ? why : "dlopen failed";
}
#endif

template <class Fn>
void resolve(void* handle, const std::string& path, const char* name, Fn& out) {
  void* sym = find_symbol(handle, name);
  if (!sym) throw std::invalid_argument("MuJoCo library " + path + " has no symbol " + name);
  out = reinterpret_cast<Fn>(sym);
}

}  // namespace

std::shared_ptr<const MujocoApi> MujocoApi::load(const std::string& path) {
  // One table per path: dlopen is cheap when the library is loaded, but the
  // lookups need not repeat.
  static std::mutex mutex;
  static std::unordered_map<std::string, std::shared_ptr<const MujocoApi>> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = loaded.find(path); it != loaded.end()) return it->second;
  if (path.empty()) throw std::invalid_argument("library must be the path of MuJoCo's shared library, got an empty path");
  void* handle = open_library(path);
  if (!handle)
    throw std::invalid_argument("library must be a loadable MuJoCo shared library, got " + path + " (" +
                                loader_error() + ")");
  try {
    auto api = open(handle, path);
    loaded.emplace(path, api);
    return api;
  } catch (...) {
    close_library(handle);
    throw;
  }
}

std::shared_ptr<const MujocoApi> MujocoApi::open(void* handle, const std::string& path) {
  auto api = std::make_shared<MujocoApi>();
  api->path = path;
  api->handle_ = handle;
  VersionFn version = nullptr;
  resolve(handle, path, "mj_version", version);
  api->version = version();
  if (api->version / 10000 != header_version / 10000)
    throw std::invalid_argument("MuJoCo " + version_string(api->version) + " at " + path +
                                " is not supported by the compiled loop, which was written against MuJoCo " +
                                version_string(header_version) + " (the same major.minor release is needed)");
  resolve(handle, path, "mj_step", api->step);
  resolve(handle, path, "mj_step1", api->step1);
  resolve(handle, path, "mj_step2", api->step2);
  resolve(handle, path, "mj_forward", api->forward);
  resolve(handle, path, "mj_fwdPosition", api->fwd_position);
  resolve(handle, path, "mj_fwdVelocity", api->fwd_velocity);
  resolve(handle, path, "mj_fullM", api->full_m);
  resolve(handle, path, "mj_differentiatePos", api->differentiate_pos);
  resolve(handle, path, "mj_integratePos", api->integrate_pos);
  return api;
}

}  // namespace directable
