"""The Sphinx docs (API reference + notebooks, not executed) build without a warning."""
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("sphinx")
pytest.importorskip("myst_nb")

DOCS = pathlib.Path(__file__).resolve().parents[1] / "docs"


@pytest.mark.skipif(not DOCS.is_dir(), reason="needs the source tree (run from a checkout)")
def test_docs_build_without_warnings(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-W", "--keep-going", "-q",
                           "-d", str(tmp_path / "doctrees"), str(DOCS), str(tmp_path / "html")],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-5000:]
    html = tmp_path / "html"
    api = (html / "api.html").read_text()
    for name in ("solve_continuous", "LQRSolution", "simulate", "build_info"):
        assert name in api
    assert any(html.glob("_generated/notebooks/01_lqr_vs_pd.html"))
