"""Property-based fuzzing of every public entry point (table in
fuzz_table.py): each valid call with one argument replaced by NaN, +-inf,
-1, 0, 1e308, 10**12, empty, wrong shape, transposed, strided, float32,
int64, complex, object, str, list, bool or None, then hypothesis-drawn
arrays of any dtype and shape. The contract: a finite result or a
TypeError/ValueError/MemoryError; no crash (one worker process per entry,
faulthandler), no hang (a timeout per call), no other exception, no NaN."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("hypothesis")

sys.path.insert(0, str(Path(__file__).parent))
from fuzz_table import OPEN_FINDINGS, TABLE, UNNAMED_KNOWN  # noqa: E402

EXAMPLES = int(os.environ.get("DIRECTABLE_FUZZ_EXAMPLES", "10"))


def _groups(open_findings=False):
    """Entries by family (the text before the first dot): one worker per
    family shares one setup; a crash names its entry. The entries of
    OPEN_FINDINGS (known defects) apart, with open_findings=True."""
    groups = {}
    for entry in sorted(TABLE):
        if (entry in OPEN_FINDINGS) == open_findings:
            groups.setdefault(entry.split(".")[0], []).append(entry)
    return groups


@pytest.mark.parametrize("family", sorted(_groups()))
def test_entry_point_contract(family):
    _check_family(_groups()[family])


if OPEN_FINDINGS:  # (an empty parameter list would show as a skipped test)
    @pytest.mark.parametrize("family", [pytest.param(f, marks=pytest.mark.xfail(
        strict=True, reason="; ".join(f"{e}: {OPEN_FINDINGS[e]}" for e in entries)))
        for f, entries in sorted(_groups(open_findings=True).items())])
    def test_open_findings_still_fail(family):
        """The known defects of OPEN_FINDINGS still break the contract; once a family's are fixed this
        passes, and (strict) fails until its entries leave OPEN_FINDINGS."""
        _check_family(_groups(open_findings=True)[family])


def _check_family(entries):
    r = subprocess.run([sys.executable, str(Path(__file__).parent / "fuzz_table.py"), str(EXAMPLES), *entries],
                       capture_output=True, text=True, timeout=900)
    lines = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    done = [x for x in lines if "status" in x]
    if r.returncode != 0:
        last = lines[-1].get("start", "?") if lines else "setup"
        pytest.fail(f"worker died (exit {r.returncode}) during {last!r}: {r.stderr[-1500:]}")
    for entry in entries:
        mine = [x for x in done if x["label"].startswith(entry + ": ")]
        if mine and mine[0]["status"] == "skipped":  # an optional dependency is missing
            continue
        assert mine and mine[0]["label"] == f"{entry}: valid" and mine[0]["status"] == "ok", (entry, mine[:1])
        assert len(mine) > 20, entry  # the mutations ran
    bad = [f"{x['label']}: {x['detail']}" for x in done if x["status"] == "bad"]
    assert not bad, "\n".join(bad)
    # every refusal names the argument it refuses (or the name the maths gives it)
    def known(label):
        entry, mutation = label.split(": ", 1)
        return (entry, mutation.split("=")[0]) in UNNAMED_KNOWN

    unnamed = [f"{x['label']}: {x['detail']}" for x in done if x.get("named") is False and not known(x["label"])]
    assert not unnamed, "messages that do not name their argument:\n" + "\n".join(unnamed)
    # a gap that is closed leaves the list (the list only shrinks)
    still = {(x["label"].split(": ", 1)[0], x["label"].split(": ", 1)[1].split("=")[0])
             for x in done if x.get("named") is False}
    closed = sorted((e, a) for e, a in UNNAMED_KNOWN if e in entries and (e, a) not in still)
    assert not closed, f"UNNAMED_KNOWN lists pairs whose refusals all name their argument now; remove them: {closed}"
