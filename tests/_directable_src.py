"""Make this checkout's pure-Python modules visible when the install predates them.

The package is installed non-editable (a wheel built by scikit-build-core),
so Python files added to ``python/directable`` after the last ``pip
install .`` (the demo, the CLI, the plot helpers) are not in the installed
copy yet. When the installed copy lacks one of ``SOURCE_MODULES`` or holds
an older version of it, this module builds an overlay package in a
temporary folder: links to every installed file (the compiled ``_core``
included) plus this checkout's versions of ``SOURCE_MODULES``. The overlay
is put first on ``sys.path`` / the package ``__path__`` for this process and
on ``PYTHONPATH`` for subprocesses and notebook kernels. When the install is
up to date nothing is changed.
"""
from __future__ import annotations

import atexit
import filecmp
import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCE_DIR = ROOT / "python" / "directable"
SOURCE_MODULES = ("plotting.py", "demo.py", "cli.py", "__main__.py")

_overlay_root: Path | None = None


def _installed_dir() -> Path:
    spec = importlib.util.find_spec("directable")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("directable is not installed in this environment")
    return Path(list(spec.submodule_search_locations)[0])


def _stale(installed: Path) -> list[str]:
    out = []
    for name in SOURCE_MODULES:
        src, dst = SOURCE_DIR / name, installed / name
        if src.exists() and (not dst.exists() or not filecmp.cmp(src, dst, shallow=False)):
            out.append(name)
    return out


def activate() -> dict:
    """Ensure the checkout's modules are importable; return an environment
    (a copy of ``os.environ``) for subprocesses that need them too."""
    global _overlay_root
    env = dict(os.environ)
    if _overlay_root is None:
        if "directable" in sys.modules:
            installed = Path(list(sys.modules["directable"].__path__)[-1])
        else:
            installed = _installed_dir()
        if installed == SOURCE_DIR or not _stale(installed):
            return env
        _overlay_root = Path(tempfile.mkdtemp(prefix="directable-overlay-"))
        atexit.register(shutil.rmtree, _overlay_root, True)
        pkg = _overlay_root / "directable"
        pkg.mkdir()
        for f in installed.iterdir():
            if f.name != "__pycache__" and f.name not in SOURCE_MODULES:
                (pkg / f.name).symlink_to(f)
        for name in SOURCE_MODULES:
            if (SOURCE_DIR / name).exists():
                (pkg / name).symlink_to(SOURCE_DIR / name)
    pkg = str(_overlay_root / "directable")
    if "directable" in sys.modules:
        path = sys.modules["directable"].__path__
        if pkg not in path:
            path.insert(0, pkg)
    elif str(_overlay_root) not in sys.path:
        sys.path.insert(0, str(_overlay_root))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(_overlay_root), env.get("PYTHONPATH")) if p)
    return env
