"""Sphinx configuration: the API reference (autodoc + napoleon, numpydoc
style) and the notebooks, rendered by myst-nb without executing them.

The notebooks are copied into ``_generated/notebooks`` (ignored by git):
from ``build/docs/notebooks`` where ``./dev docs`` left executed copies
(run at CI size, ``DIRECTABLE_SMALL=1``), else from ``notebooks/`` as
stored (without outputs).
"""
import os
import pathlib
import shutil
import sys

import directable

ROOT = pathlib.Path(__file__).resolve().parents[1]
GENERATED = pathlib.Path(__file__).resolve().parent / "_generated" / "notebooks"


def _copy_notebooks():
    executed = ROOT / "build" / "docs" / "notebooks"
    if GENERATED.exists():
        shutil.rmtree(GENERATED)
    GENERATED.mkdir(parents=True)
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        source = executed / nb.name
        shutil.copy2(source if source.exists() else nb, GENERATED / nb.name)


_copy_notebooks()

project = "directable"
author = "the directable authors"
copyright = "the directable authors"
release = version = directable.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "myst_nb",
]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "**.ipynb_checkpoints"]

# myst-nb: render what the notebooks hold, never run them while building.
nb_execution_mode = "off"
nb_merge_streams = True
myst_enable_extensions = ["dollarmath"]
suppress_warnings = ["mystnb.unknown_mime_type", "myst.header"]

# autodoc: signatures as written, the C++ classes documented where the API exposes them.
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_mock_imports = [m for m in ("mujoco",) if not __import__("importlib.util").util.find_spec(m)]
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False

html_theme = "alabaster"
html_title = f"directable {version}"
