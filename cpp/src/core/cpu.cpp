#include "directable/core/cpu.hpp"

#include <Eigen/Core>
#include <array>

namespace directable {

namespace {

// Levels in increasing order; a CPU that supports one supports those before.
constexpr std::array<const char*, 4> kX86Levels = {"x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4"};

int level_index(const std::string& isa) {
  for (int k = 0; k < static_cast<int>(kX86Levels.size()); ++k)
    if (isa == kX86Levels[k]) return k;
  return -1;
}

}  // namespace

std::string compiled_isa() {
#if defined(__x86_64__) || defined(_M_X64)
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512CD__) && defined(__AVX512DQ__) && \
    defined(__AVX512VL__)
  return "x86-64-v4";
#elif defined(__AVX2__) && defined(__FMA__) && defined(__BMI2__)
  return "x86-64-v3";
#elif defined(__SSE4_2__) && defined(__POPCNT__)
  return "x86-64-v2";
#else
  return "x86-64";
#endif
#elif defined(__aarch64__)
  return "aarch64";
#else
  return "other";
#endif
}

std::string cpu_isa() {
#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
  __builtin_cpu_init();
  const bool v2 = __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("popcnt") &&
                  __builtin_cpu_supports("ssse3");
  const bool v3 = v2 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
                  __builtin_cpu_supports("bmi2");
  const bool v4 = v3 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                  __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx512dq") &&
                  __builtin_cpu_supports("avx512vl");
  return v4 ? "x86-64-v4" : v3 ? "x86-64-v3" : v2 ? "x86-64-v2" : "x86-64";
#elif defined(__aarch64__)
  return "aarch64";
#else
  return compiled_isa();
#endif
}

std::string kernel_simd() {
  std::string sets = Eigen::SimdInstructionSetsInUse();  // Eigen 3.4 names AVX2 and FMA only with AVX-512
#ifdef EIGEN_VECTORIZE_AVX2
  if (sets.find("AVX2") == std::string::npos) sets += ", AVX2";
#endif
#ifdef EIGEN_VECTORIZE_FMA
  if (sets.find("FMA") == std::string::npos) sets += ", FMA";
#endif
  return sets;
}

bool cpu_supports(const std::string& isa) {
  const int want = level_index(isa);
  if (want < 0) return isa == cpu_isa();
  return want <= level_index(cpu_isa());
}

}  // namespace directable
