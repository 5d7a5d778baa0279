"""Every Python block of the README runs as written, each in a fresh
interpreter, from a folder outside the checkout (so it uses the installed
package, as a reader who copies it would)."""
import os
import pathlib
import re
import subprocess
import sys

import pytest

README = pathlib.Path(__file__).resolve().parents[1] / "README.md"
TEXT = README.read_text()
BLOCKS = [(TEXT.count("\n", 0, m.start()) + 2, m.group(1)) for m in re.finditer(r"```python\n(.*?)```", TEXT, re.S)]
# Optional extras a block may need: skipped (with the reason) where not installed.
EXTRAS = {"mujoco": "mujoco", "skfmm": "crowds", "meshio": "fem"}


def test_readme_has_blocks():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("line, code", BLOCKS, ids=[f"README.md:{line}" for line, _ in BLOCKS])
def test_block_runs(line, code, tmp_path):
    for module, extra in EXTRAS.items():
        if re.search(rf"^\s*(import|from)\s+{module}\b", code, re.M):
            pytest.importorskip(module, reason=f"the block needs directable[{extra}]")
    checkout = str(README.parent)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(MPLBACKEND="Agg", DIRECTABLE_SMALL="1")
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, f"README.md block at line {line} failed:\n{proc.stderr[-3000:]}"
    assert not tmp_path.resolve().is_relative_to(checkout)
