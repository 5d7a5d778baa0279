"""Processes: a child forked after the library's thread team ran works
(GNU OpenMP cannot restart its pool after fork, so such a child runs its
parallel loops on one thread), and the library works under
ProcessPoolExecutor with the fork, forkserver and spawn start methods. Each
check runs in a fresh interpreter with a timeout: a hang must fail the test,
not stall the suite."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX fork")

_WORK = textwrap.dedent("""
    import multiprocessing as mp, os, sys
    from concurrent.futures import ProcessPoolExecutor
    import numpy as np
    import directable as dr

    def work(seed):
        # a parallel discretization (team of all threads) and an SPH step (team chooser)
        A = np.tile(-np.eye(8), (64, 1, 1)) + 0.01 * seed
        d = dr.lqr.discretize(A, np.ones((8, 4)), 0.01, 1.0, 1.0, threads=0)
        dx = 0.05
        f = dr.sph.SPHFluid2D(dr.sph.block((0.2, 0.0), (0.5, 0.3), dx), dr.sph.box_walls((0, 0), (1, 1), dx),
                              spacing=dx, h=1.3 * dx)
        f.step(steps=3)
        return float(d.Phi.sum()), float(np.sum(f.positions))

    if __name__ == "__main__":
        dr._core.set_max_threads(2)
        expected = [work(k) for k in range(3)]  # the parent's team has run
        for method in sys.argv[1:]:
            with ProcessPoolExecutor(2, mp_context=mp.get_context(method)) as ex:
                got = list(ex.map(work, range(3)))
            assert got == expected, (method, got, expected)
            print(method, "ok", flush=True)
        pid = os.fork()
        if pid == 0:
            ok = work(1) == expected[1] and dr._core.max_threads() == 1
            os._exit(0 if ok else 3)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0, status
        print("os.fork ok", flush=True)
""")


@pytest.mark.parametrize("method", ["fork", "forkserver", "spawn"])
def test_process_pool_after_the_thread_team_ran(tmp_path, method):
    script = tmp_path / "work.py"
    script.write_text(_WORK)
    r = subprocess.run([sys.executable, str(script), method], capture_output=True, text=True, timeout=120,
                       cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert f"{method} ok" in r.stdout and "os.fork ok" in r.stdout
