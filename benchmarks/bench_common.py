"""Shared by the benchmark scripts: a best-of timer, and the RESULTS.md
writer (each script owns one section, delimited by ``<!-- name:begin -->`` /
``<!-- name:end -->``, and replaces only that section, appending it the
first time)."""
from __future__ import annotations

import os
import pathlib
import platform
import time

RESULTS = pathlib.Path(__file__).with_name("RESULTS.md")


def write_section(section: str, begin: str, end: str) -> pathlib.Path:
    """Put ``section`` (which starts with ``begin`` and ends with ``end``) into RESULTS.md."""
    text = RESULTS.read_text() if RESULTS.exists() else "# Benchmark results\n"
    if begin in text and end in text:
        i, j = text.index(begin), text.index(end) + len(end)
        text = text[:i] + section + text[j:]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    RESULTS.write_text(text)
    return RESULTS


def host() -> str:
    """The machine line of a RESULTS.md section: architecture, cores, Python."""
    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def best_of(f, repeat=5, number=1) -> float:
    """Smallest mean wall time of ``number`` calls of f(), over ``repeat`` tries."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        for _ in range(number):
            f()
        best = min(best, (time.perf_counter() - t) / number)
    return best
