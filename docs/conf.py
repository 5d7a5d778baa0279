"""Sphinx configuration: the API reference (autodoc + napoleon, numpydoc
style) and the notebooks, rendered by myst-nb without executing them.

The notebooks are copied into ``_generated/notebooks`` (ignored by git):
from ``build/docs/notebooks`` where ``./dev docs`` left executed copies
(run at CI size, ``DIRECTABLE_SMALL=1``), else from ``notebooks/`` as
stored (without outputs).
"""
import os
import pathlib
import re
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
# "ref.python": a type named in a docstring (n, s, steps) that several classes have as an attribute
suppress_warnings = ["mystnb.unknown_mime_type", "myst.header", "ref.python"]

# autodoc: signatures as written, the C++ classes documented where the API exposes them.
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": False}
autodoc_member_order = "bysource"
autodoc_typehints = "signature"
autodoc_mock_imports = [m for m in ("mujoco",) if not __import__("importlib.util").util.find_spec(m)]
napoleon_google_docstring = False
napoleon_numpy_docstring = True
napoleon_use_rtype = False
napoleon_use_ivar = True  # an Attributes section beside the properties it names: one entry each

html_theme = "alabaster"
html_title = f"directable {version}"



_OPENS_BODY = re.compile(r"^\s*(:[^:]+:|[-*+] |\d+[.)] |\.\. )")


def _plain_text_docstring(app, what, name, obj, options, lines):
    """The docstrings are plain text first (help() is where most readers see
    them): ``|x|`` is a norm, not an rst substitution, and a line indented
    under a paragraph (an example, a continued list) is a block of its own.
    Runs after napoleon has turned the numpydoc sections into fields."""
    out, prev, field_indent = [], None, None
    for line in lines:
        indent = len(line) - len(line.lstrip())
        is_field = bool(re.match(r"^\s*:[^:`]+:(\s|$)", line))
        if line.strip() and prev is not None and prev.strip():
            prev_indent = len(prev) - len(prev.lstrip())
            opens = _OPENS_BODY.match(prev) or prev.rstrip().endswith("::")
            ends_fields = field_indent is not None and indent <= field_indent and not is_field
            if ends_fields or indent < prev_indent or (indent > prev_indent and not opens):
                out.append("")
        if is_field:
            field_indent = indent
        elif line.strip() and field_indent is not None and indent <= field_indent:
            field_indent = None
        out.append(re.sub(r"(?<!\\)\|", r"\\|", line))
        prev = line
    lines[:] = out


def setup(app):
    app.connect("autodoc-process-docstring", _plain_text_docstring, priority=900)
