"""Every notebook in notebooks/ runs top to bottom without a cell error (small sizes),
and the figures the README quotes from a notebook are the ones it prints."""
import importlib.util
import math
import os
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
pytest.importorskip("matplotlib")

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def _readme_numbers():
    spec = importlib.util.spec_from_file_location("readme_numbers", ROOT / "docs" / "readme_numbers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _rows(text):
    """{(table, row name): numbers} of printed tables; a row is a name followed by numbers."""
    rows, table = {}, 0
    for line in text.splitlines():
        tokens = line.split()
        if not tokens or line.startswith("("):
            table += line.startswith("(")
            continue
        numbers = []
        while tokens:
            try:
                numbers.insert(0, float(tokens[-1]))
            except ValueError:
                break
            tokens.pop()
        if numbers:
            rows[(table, " ".join(tokens))] = numbers
    return rows


def assert_tables_match(printed, quoted, rtol=0.25, floor=1e-5, skip_last_in=(0,)):
    """The README's quoted tables hold the same rows and, within rtol, the same numbers.

    Timing columns (the last one of the tables in ``skip_last_in``) are machine-dependent and not compared;
    values below ``floor`` (errors at round-off level, which differ between instruction sets) only have to
    stay below it.
    """
    got, want = _rows(printed), _rows(quoted)
    assert got.keys() == want.keys(), f"rows differ: printed {sorted(got)}, README {sorted(want)}"
    for key, numbers in want.items():
        fresh = got[key][:-1] if key[0] in skip_last_in else got[key]
        numbers = numbers[:-1] if key[0] in skip_last_in else numbers
        for a, b in zip(fresh, numbers):
            ok = (abs(a) < floor and abs(b) < floor) or math.isclose(a, b, rel_tol=rtol)
            assert ok, f"README quotes {numbers} for {key[1]!r}, the notebook printed {fresh}: " \
                       "rerun python docs/readme_numbers.py"


def test_notebooks_exist():
    assert any(p.name == "01_lqr_vs_pd.ipynb" for p in NOTEBOOKS)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_output_free(path):
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert not cell.get("outputs") and cell.get("execution_count") is None, \
                f"{path.name}: cell {i} has outputs; clear them before committing"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_runs(path, tmp_path, monkeypatch):
    # The kernel inherits this process's environment.
    for key, value in {"MPLBACKEND": "Agg", "DIRECTABLE_SMALL": "1"}.items():
        monkeypatch.setenv(key, value)
    nb = nbformat.read(path, as_version=4)
    # a cell's time limit; the sanitized extension (./dev sanitize) runs about 10x slower
    timeout = 1200 if os.environ.get("DIRECTABLE_SANITIZED") else 120
    client = nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as exc:  # names the cell and shows the traceback
        pytest.fail(f"{path.name}: {exc}", pytrace=False)
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
    images = sum("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert images >= 3, "the notebook should show its plots inline"
    if path.name == _readme_numbers().NOTEBOOK.name:
        numbers = _readme_numbers()
        assert_tables_match(numbers.printed_tables(nb), numbers.readme_block(small=True))


def test_table_comparison_catches_stale_numbers():
    printed = "name  a  b  ms\nMPC H=1  1.0e-3  2.0  5.0\n(units)\npush  x\n24 N  0.5\n(units)"
    assert_tables_match(printed, printed.replace("5.0", "9.0"))  # the timing column is not compared
    with pytest.raises(AssertionError, match="MPC H=1"):
        assert_tables_match(printed, printed.replace("2.0", "3.0"))
    with pytest.raises(AssertionError, match="rows differ"):
        assert_tables_match(printed, printed.replace("24 N", "25 N"))
