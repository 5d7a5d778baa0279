"""Shared by the benchmark scripts: each owns one section of RESULTS.md,
delimited by ``<!-- name:begin -->`` / ``<!-- name:end -->``, and replaces
only that section (appending it the first time)."""
from __future__ import annotations

import pathlib

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
