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
from fuzz_table import TABLE  # noqa: E402

EXAMPLES = int(os.environ.get("DIRECTABLE_FUZZ_EXAMPLES", "10"))


@pytest.mark.parametrize("entry", sorted(TABLE))
def test_entry_point_contract(entry):
    r = subprocess.run([sys.executable, str(Path(__file__).parent / "fuzz_table.py"), entry, str(EXAMPLES)],
                       capture_output=True, text=True, timeout=600)
    lines = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    done = [x for x in lines if "status" in x]
    if r.returncode != 0:
        last = lines[-1].get("start", "?") if lines else "setup"
        pytest.fail(f"{entry}: worker died (exit {r.returncode}) during {last!r}: {r.stderr[-1500:]}")
    assert done and done[0]["label"] == "valid" and done[0]["status"] == "ok", (r.stderr[-1500:], done[:1])
    bad = [f"{x['label']}: {x['detail']}" for x in done if x["status"] == "bad"]
    assert not bad, f"{entry}: " + "\n".join(bad)
    assert len(done) > 20  # the mutations ran
