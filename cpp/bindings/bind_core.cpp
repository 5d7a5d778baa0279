#include "common.hpp"
#include "directable/core/allocation.hpp"
#include "directable/core/cpu.hpp"
#include "directable/core/parallel.hpp"
#include "directable/linalg/expm.hpp"

namespace directable::py_bind {

void bind_core(py::module_& m) {
  m.def("max_threads", &max_threads, "Number of threads the parallel precomputations use (OMP_NUM_THREADS).");
  m.def("set_max_threads", &set_max_threads, py::arg("threads"), "Sets the thread count of the parallel precomputations.");
  m.def("check_allocation", &check_allocation, py::arg("what"), py::arg("nbytes"),
        R"doc(Refuses a request larger than the machine's physical memory.

The Python layer's own arrays go through the same check as the core's, so a
size beyond the memory is a MemoryError that names the argument and the size
instead of NumPy's nameless one (or a fill that swaps for minutes).

Parameters
----------
what : str
    The request, named by the argument that sized it (``"steps = 10**12"``).
nbytes : float
    Its size in bytes (a float, so that products of huge counts do not wrap).

Raises
------
MemoryError
    When ``nbytes`` exceeds the physical memory; the message names ``what``
    and both sizes in GB.
)doc");
  m.def("build_info", []() {
    py::dict d;
    d["eigen"] = std::to_string(EIGEN_WORLD_VERSION) + "." + std::to_string(EIGEN_MAJOR_VERSION) + "." +
                 std::to_string(EIGEN_MINOR_VERSION);
    // from the kernels' own file: this one is compiled for the baseline in every variant
    const std::string simd = kernel_simd();
    d["simd"] = simd;
    d["avx2"] = simd.find("AVX2") != std::string::npos;
    d["fma"] = simd.find("FMA") != std::string::npos;
#ifdef _OPENMP
    d["openmp"] = true;
#else
    d["openmp"] = false;
#endif
    d["kernels"] = compiled_isa();
    d["cpu"] = cpu_isa();
    d["native"] = bool(DIRECTABLE_BUILD_NATIVE);
    d["compiler"] = std::string(DIRECTABLE_BUILD_COMPILER);
    d["build_type"] = std::string(DIRECTABLE_BUILD_TYPE);
    d["threads"] = max_threads();
    return d;
  }, R"doc(How this build was made and what it runs on.

Returns
-------
dict
    ``kernels``: the instruction-set level the core was compiled for
    ("x86-64", "x86-64-v3", ...); ``cpu``: the highest level this CPU offers;
    ``native``: built with -march=native; ``compiler``, ``build_type``,
    ``eigen`` (version), ``simd`` (Eigen's instruction sets in the
    kernels), ``avx2``, ``fma``, ``openmp``, ``threads`` (of the parallel precomputations).)doc");

  m.def("expm_bordered", [](const Array& H, const Array& C) {
    Eigen::MatrixXd h = matrix(H, "H"), c = matrix(C, "C");
    BorderedExpm e(h.rows(), c.cols());  // compute() checks H (m x m) and C (m x k)
    e.compute(h, c);
    return py::make_tuple(RowMatrix(e.E()), RowMatrix(e.G()), e.pade_degree(), e.squarings());
  }, py::arg("H"), py::arg("C"),
  R"doc(exp([[H, C], [0, 0]]) = [[E, G], [0, I]] by a structured Pade approximant.

H: (m, m), C: (m, k). Returns (E (m, m), G (m, k), pade_degree, squarings);
G = phi1(H) C. With k = 0 this is the plain matrix exponential of H.)doc");
}

}  // namespace directable::py_bind
