"""The house rules of DESIGN.md that can be read off the source tree."""
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
INCLUDE = ROOT / "cpp" / "include" / "directable"
SRC = ROOT / "cpp" / "src"
LAYERS = ("core", "linalg", "models", "control", "sim")
# What a controller may see of models/: interfaces, never a concrete model.
MODEL_INTERFACES = {
    "models/model.hpp",
    "models/prediction_model.hpp",
    "models/articulated.hpp",
    "models/point_mass_system.hpp",
}
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*"directable/([^"]+)"', re.M)

pytestmark = pytest.mark.skipif(not INCLUDE.is_dir(), reason="needs the source tree (run from a checkout)")


def sources(layer):
    for base in (INCLUDE / layer, SRC / layer):
        yield from (p for p in base.rglob("*") if p.suffix in (".hpp", ".cpp", ".h"))


def includes(path):
    return INCLUDE_RE.findall(path.read_text())


def test_layers_mirror_each_other():
    for layer in LAYERS:
        assert (INCLUDE / layer).is_dir(), layer
        assert (SRC / layer).is_dir(), layer
    stray = [p.name for p in SRC.iterdir() if p.is_file()]
    assert stray == [], f"sources outside a layer folder: {stray}"


@pytest.mark.parametrize("layer, forbidden", [
    ("core", ("linalg/", "models/", "control/", "sim/")),
    ("linalg", ("models/", "control/", "sim/")),
    ("models", ("control/", "sim/")),
    ("control", ("sim/",)),
])
def test_no_upward_include(layer, forbidden):
    bad = [(p.relative_to(ROOT).as_posix(), inc) for p in sources(layer) for inc in includes(p)
           if inc.startswith(forbidden)]
    assert bad == [], f"{layer}/ includes a layer above it: {bad}"


def test_controllers_see_model_interfaces_only():
    bad = [(p.relative_to(ROOT).as_posix(), inc) for p in sources("control") for inc in includes(p)
           if inc.startswith("models/") and inc not in MODEL_INTERFACES]
    assert bad == [], f"a controller includes a concrete model: {bad}"


def test_no_mutable_members():
    bad = [f"{p.relative_to(ROOT).as_posix()}:{i}" for layer in LAYERS for p in sources(layer)
           for i, line in enumerate(p.read_text().splitlines(), 1)
           if re.search(r"^\s*mutable\b", line)]
    assert bad == [], f"mutable members (per-run state belongs in a Data object): {bad}"


def test_every_source_is_built():
    cmake = (ROOT / "CMakeLists.txt").read_text()
    missing = [p.relative_to(ROOT).as_posix() for p in SRC.rglob("*.cpp")
               if p.relative_to(ROOT).as_posix() not in cmake]
    assert missing == [], f"sources not in CMakeLists.txt: {missing}"
