"""Shared by the benchmark scripts: the timers, the independent references
(``tests/reference``, importable as ``reference`` once this module is
imported), and the RESULTS.md writer (each script owns one section,
delimited by ``<!-- name:begin -->`` / ``<!-- name:end -->``, and replaces
only that section, appending it the first time; hand-written notes after a
``<!-- name:notes -->`` line in the section survive the rerun)."""
from __future__ import annotations

import json
import os
import pathlib
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import timeit

RESULTS = pathlib.Path(__file__).with_name("RESULTS.md")
# the references of the test suite, shared with the benchmarks
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "tests"))


def write_section(section: str, begin: str, end: str) -> pathlib.Path:
    """Put ``section`` (which starts with ``begin`` and ends with ``end``) into RESULTS.md.

    Hand-written notes survive a rerun: whatever the old section holds from a
    ``<!-- name:notes -->`` line (``name`` as in ``begin``) to its end is kept,
    after the new generated text."""
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    if begin in text and end in text:
        i, j = text.index(begin), text.index(end) + len(end)
        notes = begin.replace(":begin -->", ":notes -->")
        old = text[i:j]
        if notes in old and notes not in section:
            kept = old[old.index(notes):len(old) - len(end)]
            section = section[:len(section) - len(end)].rstrip("\n") + "\n\n" + kept.rstrip("\n") + "\n" + end
        text = text[:i] + section + text[j:]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    RESULTS.write_text(text)
    return RESULTS


def publish(name: str, title: str, conditions: str, table: str) -> pathlib.Path:
    """Write the section ``name`` of RESULTS.md: heading ``title``, the command
    (``benchmarks/bench_<name>.py``), machine and date, then ``conditions``
    (text after the date) and ``table``. Returns the path written."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    section = (f"{begin}\n## {title}\n\n`python benchmarks/bench_{name}.py` on {host()} "
               f"({time.strftime('%Y-%m-%d')}){conditions}\n\n{table}\n{end}")
    path = write_section(section, begin, end)
    print(f"wrote {path}")
    return path


def host() -> str:
    """The machine line of a RESULTS.md section: architecture, cores, Python."""
    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def best(fn, repeats=3, warmup=True, **kw):
    """Minimum wall time of fn() over `repeats` runs (after one warm-up run); see best_cpu."""
    return best_cpu(fn, repeats, warmup, **kw)[0]


def best_cpu(fn, repeats=3, warmup=True, min_time=0.3, max_repeats=30):
    """(minimum wall time, CPU time / wall time of that run): the second is the cores it kept busy.

    Runs at least `repeats` times and, for cheap calls, keeps going until
    `min_time` seconds have been spent (at most `max_repeats` runs), so that
    short measurements get more chances to hit an undisturbed moment.
    """
    if warmup:
        fn()
    t, cores, spent, k = float("inf"), float("nan"), 0.0, 0
    while k < repeats or (spent < min_time and k < max_repeats):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        spent += dt
        k += 1
        if dt < t:
            t, cores = dt, (time.process_time() - c0) / dt
    return t, cores


def per_call(stmt, number, repeats=7):
    """Best per-call time of a statement (callable) with timeit (garbage collection off)."""
    return min(timeit.repeat(stmt, number=number, repeat=repeats)) / number


def best_of(f, repeat=5, number=1, clock=time.perf_counter) -> float:
    """Smallest mean time of ``number`` calls of f(), over ``repeat`` tries.

    ``clock`` is wall time by default; ``time.thread_time`` gives the CPU
    time of the calling thread, which a loaded machine inflates far less.
    """
    best = float("inf")
    for _ in range(repeat):
        t = clock()
        for _ in range(number):
            f()
        best = min(best, (clock() - t) / number)
    return best


def json_from_subprocess(code: str, env: dict) -> dict:
    """Runs ``code`` in a fresh interpreter (outside the checkout, so the
    installed or PYTHONPATH package is imported) and returns the JSON object
    its last line of output prints; the child's stderr on failure."""
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          cwd=tempfile.gettempdir())
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def package_with(extension: pathlib.Path, into: pathlib.Path) -> str:
    """A copy of the installed package under ``into`` whose only extension is
    ``extension`` (for a PYTHONPATH that loads that build); returns ``into``."""
    import directable

    pkg = into / "directable"
    shutil.copytree(pathlib.Path(directable.__file__).parent, pkg,
                    ignore=shutil.ignore_patterns("_isa", "_core.*.so", "__pycache__"))
    shutil.copy2(extension, pkg / extension.name)
    return str(into)
