"""The README's quick start runs as printed and returns to the reference."""
import pathlib
import re


def test_quick_start_runs(tmp_path, monkeypatch):
    readme = pathlib.Path(__file__).resolve().parents[1] / "README.md"
    code = re.search(r"## Quick start\n\n```python\n(.*?)```", readme.read_text(), re.S).group(1)
    assert len(code.splitlines()) <= 20
    monkeypatch.chdir(tmp_path)
    ns = {}
    exec(compile(code, "README.md", "exec"), ns)
    run, z_ref = ns["run"], ns["z_ref"]
    assert run.tracking_error[-1] < 1e-2 * run.tracking_error.max()
    assert (tmp_path / "gains.npz").exists()
