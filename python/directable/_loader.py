"""Runtime CPU dispatch: load the build of the C++ core that suits this CPU.

A portable build holds the baseline extension ``directable/_core*.so`` and,
on x86-64, copies whose hot kernels were compiled for higher levels, in
``directable/_isa/<level>/_core*.so`` (``x86_64_v3``: AVX2 + FMA, ``x86_64_v4``:
AVX-512). The highest level that both exists and runs on this CPU is loaded
as ``directable._core``, once, at import. ``DIRECTABLE_KERNELS=x86-64`` (or
``x86-64-v3``, ``x86-64-v4``) asks for a given level instead; a level the
CPU cannot run is refused with a warning, never loaded.
"""
from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import pathlib
import platform
import sys
import warnings

#: x86-64 micro-architecture levels and the /proc/cpuinfo flags each adds.
_LEVEL_FLAGS = {
    "x86-64": set(),
    "x86-64-v2": {"cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"},
    "x86-64-v3": {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"},
    "x86-64-v4": {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"},
}
_ORDER = list(_LEVEL_FLAGS)


def cpu_level(cpuinfo: str | None = None) -> str:
    """The highest x86-64 level this CPU supports ("x86-64" when unknown).

    Parameters
    ----------
    cpuinfo : str, optional
        Text of ``/proc/cpuinfo`` (read when None; elsewhere than Linux the
        answer is the baseline, which is always safe).
    """
    if cpuinfo is None:
        try:
            cpuinfo = pathlib.Path("/proc/cpuinfo").read_text()
        except OSError:
            return "x86-64"
    flags = set()
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
            break
    level = "x86-64"
    needed = set()
    for name in _ORDER[1:]:
        needed |= _LEVEL_FLAGS[name]
        if not needed <= flags:
            break
        level = name
    return level


def available_levels(package_dir: pathlib.Path) -> dict:
    """{level: path of its extension} for the levels built beside the baseline."""
    found = {}
    isa = package_dir / "_isa"
    for name in _ORDER[1:]:
        folder = isa / name.replace("-", "_")
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = folder / f"_core{suffix}"
            if path.is_file():
                found[name] = path
                break
    return found


def choose_level(cpu: str, built: dict, requested: str | None) -> str:
    """The level to load: ``requested`` if given and runnable, else the highest built level the CPU runs."""
    runnable = [lvl for lvl in built if _ORDER.index(lvl) <= _ORDER.index(cpu)]
    if requested:
        if requested not in _ORDER:
            warnings.warn(f"DIRECTABLE_KERNELS={requested!r} is not one of {_ORDER}: ignored", stacklevel=3)
        elif requested == "x86-64" or requested in runnable:
            return requested
        else:
            why = "was not built" if requested not in built else f"needs a CPU of that level (this one: {cpu})"
            warnings.warn(f"DIRECTABLE_KERNELS={requested!r} {why}: using the best available kernels",
                          stacklevel=3)
    return max(runnable, key=_ORDER.index, default="x86-64")


def load_core():
    """Import ``directable._core`` from the build that suits this CPU; returns the module."""
    name = "directable._core"
    if name in sys.modules:
        return sys.modules[name]
    package_dir = pathlib.Path(__file__).resolve().parent
    built = available_levels(package_dir)
    if built and platform.machine().lower() in ("x86_64", "amd64"):
        level = choose_level(cpu_level(), built, os.environ.get("DIRECTABLE_KERNELS"))
        if level != "x86-64":
            spec = importlib.util.spec_from_file_location(name, built[level])
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            try:
                spec.loader.exec_module(module)
            except BaseException:
                del sys.modules[name]
                raise
            return module
    return importlib.import_module(name)
