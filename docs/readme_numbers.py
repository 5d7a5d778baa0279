"""Regenerates the figures the README quotes from notebook 05 (MPC on SPH, MPC vs LQR).

Runs ``notebooks/05_mpc_sph.ipynb`` and copies the tables its cells print into
README.md, between the markers ``<!-- notebook 05 (SIZE): begin -->`` and
``<!-- notebook 05 (SIZE): end -->`` (SIZE: ``DIRECTABLE_SMALL=1`` or ``full
size``), so the README never quotes a number that the code did not print.
``tests/test_notebooks.py`` compares the small-size block with a fresh run.

    python docs/readme_numbers.py            # the small size (about a minute)
    python docs/readme_numbers.py --full     # the notebook's own size (tens of minutes on 2 cores)
"""
from __future__ import annotations

import argparse
import os
import pathlib
import platform
import re
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "05_mpc_sph.ipynb"
README = ROOT / "README.md"
SIZES = {True: "DIRECTABLE_SMALL=1", False: "full size"}


def markers(small: bool) -> tuple[str, str]:
    """The README's begin and end markers of the block for one size.

    Parameters
    ----------
    small : bool
        True for the ``DIRECTABLE_SMALL=1`` block, False for the full size.

    Returns
    -------
    begin, end : str
        HTML comments that enclose the block.
    """
    return f"<!-- notebook 05 ({SIZES[small]}): begin -->", f"<!-- notebook 05 ({SIZES[small]}): end -->"


def printed_tables(nb) -> str:
    """The text that the notebook's table cells printed, in cell order.

    Parameters
    ----------
    nb : nbformat.NotebookNode
        An executed notebook.

    Returns
    -------
    str
        The ``stdout`` of every code cell whose output starts with a header
        row (cells that print tables), joined by blank lines.
    """
    blocks = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        text = "".join(o.get("text", "") for o in cell.get("outputs", [])
                       if o.get("output_type") == "stream" and o.get("name") == "stdout")
        if text.strip() and "\n(" in text:  # a table: rows, then the "(units ...)" line
            blocks.append(text.rstrip("\n"))
    return "\n\n".join(blocks)


def run_notebook(small: bool, timeout: int = 7200) -> str:
    """Executes notebook 05 at one size and returns its printed tables.

    Parameters
    ----------
    small : bool
        Run with ``DIRECTABLE_SMALL=1`` (the test suite's size) or at full size.
    timeout : int, optional
        Seconds one cell may take.

    Returns
    -------
    str
        What :func:`printed_tables` extracts.
    """
    import nbclient
    import nbformat

    env = {"MPLBACKEND": "Agg"}
    if small:
        env["DIRECTABLE_SMALL"] = "1"
    else:
        os.environ.pop("DIRECTABLE_SMALL", None)
    os.environ.update(env)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    out = ROOT / "build" / "readme_numbers"
    out.mkdir(parents=True, exist_ok=True)
    nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(out)}}).execute()
    return printed_tables(nb)


def readme_block(small: bool, text: str | None = None) -> str:
    """The printed tables quoted in the README for one size.

    Parameters
    ----------
    small : bool
        Which block.
    text : str, optional
        README text (read from the checkout when None).

    Returns
    -------
    str
        The block's content without its fences.
    """
    text = README.read_text() if text is None else text
    begin, end = markers(small)
    m = re.search(re.escape(begin) + r"\n```text\n(.*?)\n```\n" + re.escape(end), text, re.S)
    if m is None:
        raise LookupError(f"README.md has no block between {begin} and {end}")
    body = m.group(1)
    return "\n".join(line for line in body.splitlines() if not line.startswith("# "))


def write_block(small: bool, tables: str, seconds: float) -> None:
    """Replaces the README block of one size with freshly printed tables.

    Parameters
    ----------
    small : bool
        Which block.
    tables : str
        What the notebook printed.
    seconds : float
        How long the run took (recorded in the block's first line).
    """
    text = README.read_text()
    begin, end = markers(small)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    note = (f"# python docs/readme_numbers.py{'' if small else ' --full'}: {time.strftime('%Y-%m-%d')}, "
            f"{platform.machine()}, {os.cpu_count()} cores, load {load:.1f}, {seconds / 60:.0f} min")
    block = f"{begin}\n```text\n{note}\n{tables}\n```\n{end}"
    pattern = re.escape(begin) + r".*?" + re.escape(end)
    if re.search(pattern, text, re.S) is None:
        raise LookupError(f"README.md has no block between {begin} and {end}: add the two markers first")
    README.write_text(re.sub(pattern, lambda _: block, text, flags=re.S))


def main(argv=None) -> int:
    """Command line: run the notebook at one size and update the README.

    Parameters
    ----------
    argv : list of str, optional
        Arguments (``sys.argv[1:]`` when None).

    Returns
    -------
    int
        Exit status.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="the notebook's own size instead of DIRECTABLE_SMALL=1")
    args = parser.parse_args(argv)
    small = not args.full
    start = time.perf_counter()
    tables = run_notebook(small)
    seconds = time.perf_counter() - start
    write_block(small, tables, seconds)
    print(tables)
    print(f"README.md updated ({SIZES[small]}, {seconds:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
