"""Runtime CPU dispatch: the level chosen at import, its override, and the
same results from every variant (the kernels differ in speed, not in what
they compute beyond rounding)."""
import os
import platform
import subprocess
import sys

import numpy as np
import pytest

import directable
from directable import _loader

X86 = platform.machine().lower() in ("x86_64", "amd64")
FLAGS_V3 = "fpu sse sse2 cx16 lahf_lm popcnt sse4_1 sse4_2 ssse3 avx avx2 bmi1 bmi2 f16c fma abm movbe xsave"


def test_cpu_level_from_cpuinfo():
    assert _loader.cpu_level("flags\t\t: fpu sse sse2\n") == "x86-64"
    assert _loader.cpu_level(f"flags\t: {FLAGS_V3}\n") == "x86-64-v3"
    assert _loader.cpu_level(f"flags\t: {FLAGS_V3} avx512f avx512bw avx512cd avx512dq avx512vl\n") == "x86-64-v4"
    # one flag short of v3 is v2
    assert _loader.cpu_level(f"flags\t: {FLAGS_V3.replace(' fma', '')}\n") == "x86-64-v2"


def test_choose_level():
    built = {"x86-64-v3": "a", "x86-64-v4": "b"}
    assert _loader.choose_level("x86-64-v4", built, None) == "x86-64-v4"
    assert _loader.choose_level("x86-64-v3", built, None) == "x86-64-v3"
    assert _loader.choose_level("x86-64-v2", built, None) == "x86-64"
    assert _loader.choose_level("x86-64-v4", built, "x86-64") == "x86-64"
    with pytest.warns(UserWarning, match="needs a CPU of that level"):
        assert _loader.choose_level("x86-64-v3", built, "x86-64-v4") == "x86-64-v3"
    with pytest.warns(UserWarning, match="not one of"):
        assert _loader.choose_level("x86-64-v3", built, "avx9") == "x86-64-v3"


def _sweep_in(kernels):
    code = ("import numpy as np, directable as dr\n"
            "rng = np.random.default_rng(0); n, s, T = 12, 5, 40\n"
            "A = np.eye(n) + 0.05 * rng.standard_normal((T, n, n)); B = rng.standard_normal((n, s))\n"
            "sol = dr.lqr.solve_discrete(A, B, np.eye(n), np.eye(s), 10 * np.eye(n))\n"
            "print(dr.build_info()['kernels']); np.save('K.npy', sol.K)\n")
    env = {**os.environ, "DIRECTABLE_KERNELS": kernels}
    return env, code


@pytest.mark.skipif(not X86, reason="x86-64 levels")
def test_every_built_level_loads_and_agrees(tmp_path):
    import pathlib

    built = _loader.available_levels(pathlib.Path(directable.__file__).parent)
    if directable.build_info()["native"]:
        pytest.skip("a DIRECTABLE_NATIVE=ON build has no variants")
    cpu = _loader.cpu_level()
    results = {}
    for level in ["x86-64", *built]:
        if _loader._ORDER.index(level) > _loader._ORDER.index(cpu):
            continue  # not runnable here
        env, code = _sweep_in(level)
        folder = tmp_path / level
        folder.mkdir()
        proc = subprocess.run([sys.executable, "-c", code], env=env, cwd=folder, capture_output=True, text=True,
                              timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.split()[0] == level
        results[level] = np.load(folder / "K.npy")
    base = results.pop("x86-64")
    for level, K in results.items():
        np.testing.assert_allclose(K, base, rtol=1e-10, atol=1e-12, err_msg=level)


@pytest.mark.skipif(not X86, reason="x86-64 levels")
def test_every_level_runs_its_own_copy_of_the_hot_code():
    """A level's extension runs the level's copy of every project function of the hot files.

    The signature of the opposite is a project symbol (namespace directable)
    that the linked extension holds twice: local, the level's copy made
    invisible by the isolation, and global, the baseline's copy taken from the
    static library in its place (the SPH step's explicit instantiations,
    weak in GCC's output, were linked that way before the isolation kept the
    project's weak definitions global).
    """
    import shutil

    trees = _build_trees()
    if not trees:
        pytest.skip("no build tree with dispatched kernels in build/ (an installed wheel, or a native build)")
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("needs nm (binutils)")
    own = ("_ZN10directable", "_ZNK10directable")
    checked = 0
    for tree in trees:
        for so in sorted((tree / "isa").glob("*/_core*.so")):
            out = subprocess.run([nm, "--defined-only", "--format=posix", str(so)], capture_output=True, text=True,
                                 check=True).stdout
            local, exported = set(), set()
            for line in out.splitlines():
                parts = line.split()
                if len(parts) >= 2 and parts[0].startswith(own) and len(parts[1]) == 1:
                    (local if parts[1] in "tdbr" else exported).add(parts[0])
            assert exported, f"{so}: stripped, or no project symbols"
            twice = sorted(local & exported)
            assert twice == [], f"{so.parent.name} links the baseline's copy of: {twice[:5]}"
            checked += 1
    if not checked:
        pytest.skip("no linked level extension in the build trees")


def _build_trees():
    """The CMake build folders of this checkout that hold per-level merged kernel objects."""
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[1] / "build"
    return sorted({p.parent.parent for p in root.glob("*/*/isa/hot_*.o")} |
                  {p.parent.parent for p in root.glob("*/isa/hot_*.o")})


def _nm(path):
    """[(type letter, symbol)] of the defined external symbols of an object or archive."""
    import shutil

    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("needs nm (binutils)")
    out = subprocess.run([nm, "--defined-only", "--extern-only", "--format=posix", str(path)],
                         capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and len(parts[1]) == 1:
            rows.append((parts[1], parts[0]))
    return rows


@pytest.mark.skipif(not X86, reason="x86-64 levels")
def test_no_instantiation_is_shared_between_levels():
    """Each level's kernels call only their own inline and template code.

    The merged object of a level (cmake/isolate_objects.cmake) exports only
    strong definitions (the entry points) and, weak, the vtables and
    type_info objects of classes (one per class for pybind11; the objects'
    layout is the same at every level) and the project's own weak
    definitions (namespace directable: explicit instantiations such as
    ``template class SPHFluid<2>;`` are weak, and are a templated hot file's
    entry points). A level that compiles only some hot
    files (x86-64-v4) borrows the level below's objects of the others in a
    merged object of their own (``hot_<level>_from_<lower>.o``), isolated
    the same way. No weak function (an inline or
    template instantiation: Eigen's kernels, std:: code) is exported, so the
    linker cannot merge it with the baseline's copy: the baseline code cannot
    bind to another level's instantiation and the reverse. Static data of
    inline functions (GNU unique objects) carries the level in its name.
    """
    trees = _build_trees()
    if not trees:
        pytest.skip("no build tree with dispatched kernels in build/ (an installed wheel, or a native build)")
    for tree in trees:
        merged = sorted((tree / "isa").glob("hot_*.o"))
        baseline = sorted((tree / "CMakeFiles" / "directable_core.dir").rglob("*.o"))
        assert baseline, tree
        weak_code_at_baseline = set()
        for obj in baseline:
            weak_code_at_baseline |= {name for kind, name in _nm(obj) if kind == "W"}
        assert len(weak_code_at_baseline) > 100  # the check below has something to check against
        levels = {}
        for obj in merged:
            variant, _, lower = obj.stem[len("hot_"):].partition("_from_")
            tag = lower or variant  # borrowed objects keep the level they were compiled for
            exported = _nm(obj)
            assert exported, f"{obj} exports nothing"
            own = ("_ZN10directable", "_ZNK10directable")
            weak_code = [name for kind, name in exported if kind == "W" and not name.startswith(("_ZT", *own))]
            assert weak_code == [], f"{obj.name} exports weak functions: {weak_code[:5]}"
            weak_data = [name for kind, name in exported if kind in "VW" and not name.startswith(("_ZTV", "_ZTI",
                                                                                              "_ZTS", "_ZTT", "_ZTC",
                                                                                              *own))]
            assert weak_data == [], f"{obj.name} exports weak data other than vtables and type_info: {weak_data[:5]}"
            unique = [name for kind, name in exported if kind == "u"]
            assert all(name.endswith("." + tag) for name in unique), f"{obj.name}: unique objects {unique[:5]}"
            shared = sorted(name for kind, name in exported if name in weak_code_at_baseline and not name.startswith(own))
            assert shared == [], f"{obj.name} shares instantiations with the baseline: {shared[:5]}"
            entry = {name for kind, name in exported if kind in "TDBR"}
            assert entry, f"{obj.name} exports no entry point"
            library = [n for n in entry if n.startswith(("_ZN5Eigen", "_ZNSt", "_ZSt", "_ZNKSt"))]
            assert library == [], f"{obj.name} exports library code: {library[:5]}"
            twice = levels.setdefault(variant, set()) & entry
            assert not twice, f"{obj.name} defines entry points of the same variant again: {sorted(twice)[:5]}"
            levels[variant] |= entry
        # every variant (its own objects and those it borrows) exports the same entry points
        assert len({frozenset(v) for v in levels.values()}) == 1, sorted(levels)
