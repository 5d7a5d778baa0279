"""The wheel installs into a fresh virtual environment and the quick start
runs there, from a folder outside the checkout.

The wheel is the one ``./dev wheel`` left in ``dist/`` when there is one;
otherwise it is packed from ./dev's own build folder (``build/dev``), which
costs no compilation. Installing its dependencies needs PyPI or pip's cache.
"""
import os
import pathlib
import re
import subprocess
import sys
import venv
import zipfile

import pytest

import directable

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

pytestmark = pytest.mark.skipif(not (ROOT / "pyproject.toml").is_file(), reason="needs the source tree")


def _wheel(tmp: pathlib.Path) -> pathlib.Path:
    tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
    built = sorted((ROOT / "dist").glob(f"directable-{directable.__version__}-{tag}-*.whl"),
                   key=lambda p: p.stat().st_mtime)
    if built:
        return built[-1]
    if not any((ROOT / "build" / "dev").glob("*/CMakeCache.txt")):
        pytest.skip("no wheel in dist/ and no ./dev build to pack one from (run ./dev wheel)")
    env = {**os.environ, "DIRECTABLE_NATIVE": os.environ.get("DIRECTABLE_NATIVE", "OFF")}
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                           "-C", "build-dir=build/dev/{wheel_tag}", "-w", str(tmp), str(ROOT)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return next(tmp.glob("directable-*.whl"))


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """(python of a fresh venv with the wheel installed, the wheel)."""
    tmp = tmp_path_factory.mktemp("wheel")
    wheel = _wheel(tmp)
    env_dir = tmp / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    proc = subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)], capture_output=True, text=True,
                          timeout=600, cwd=tmp)
    if proc.returncode != 0 and "No matching distribution" in proc.stderr:
        pytest.skip(f"the wheel's dependencies cannot be installed here: {proc.stderr[-500:]}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return python, wheel


def _run(python, code, cwd):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["MPLBACKEND"] = "Agg"
    return subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=300, cwd=cwd, env=env)


def test_wheel_is_portable(installed):
    _, wheel = installed
    names = zipfile.ZipFile(wheel).namelist()
    assert any(re.fullmatch(r"directable/_core\..*\.so", n) for n in names)
    assert "directable/_core.pyi" in names and "directable/py.typed" in names
    assert not any(n.startswith(("tests/", "notebooks/", "cpp/")) for n in names)
    if wheel.name.endswith("x86_64.whl"):  # the dispatched kernels travel with the baseline
        for level in ("x86_64_v3", "x86_64_v4"):
            assert any(n.startswith(f"directable/_isa/{level}/_core.") for n in names), level


def test_quick_start_from_outside_the_checkout(installed, tmp_path):
    python, _ = installed
    code = re.search(r"## Quick start\n\n```python\n(.*?)```", README.read_text(), re.S).group(1)
    code += ("\nimport directable, pathlib, sys\n"
             "print('FILE', directable.__file__)\n"
             "print('INFO', directable.build_info())\n"
             "assert run.tracking_error[-1] < 1e-2 * run.tracking_error.max()\n")
    proc = _run(python, code, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    where = re.search(r"^FILE (.*)$", proc.stdout, re.M).group(1)
    assert pathlib.Path(where).is_relative_to(python.parents[1])  # the venv's copy, not the checkout
    assert "'native': False" in proc.stdout
    assert (tmp_path / "gains.npz").is_file()


def test_console_script_and_demo(installed, tmp_path):
    python, _ = installed
    script = python.with_name("directable")
    proc = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith(f"directable {directable.__version__}"), proc.stderr
    proc = subprocess.run([str(script), "demo", "--masses", "2", "--steps", "40", "--no-progress", "--out", "plots"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env={**os.environ, "MPLBACKEND": "Agg"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert len(list((tmp_path / "plots").glob("*.png"))) == 4
