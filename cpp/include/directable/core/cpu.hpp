#pragma once
// Instruction sets: the ones the library was compiled for and the ones the
// running CPU offers (x86-64 micro-architecture levels, or the CPU family
// elsewhere), for build_info() and for choosing kernels at run time.
#include <string>

namespace directable {

//! The level the core was compiled for: "x86-64", "x86-64-v2", "x86-64-v3"
//! (AVX2, FMA), "x86-64-v4" (AVX-512 F/BW/CD/DQ/VL), or "aarch64", "other".
std::string compiled_isa();

//! The highest of those levels the running CPU supports (same names).
std::string cpu_isa();

//! Eigen's instruction sets in the kernels ("SSE, SSE2", "AVX SSE ... FMA", ...).
std::string kernel_simd();

//! Whether a binary compiled for `isa` may run on this CPU.
bool cpu_supports(const std::string& isa);

}  // namespace directable
