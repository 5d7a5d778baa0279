"""The executor layer (``directable.executors``): the same tasks give the same
results bit for bit in-process, on thread and process pools (fork,
forkserver, spawn), on a real ``dask.distributed.LocalCluster`` and on Ray;
results stream in task order into lists, arrays, callbacks and files with a
half-written marker; a failing task is retried once and then named; one
progress report; Ctrl-C cancels what is left; bad executors are refused
naming ``executor``.

The task functions live at module level so that worker processes import them
by name (Ray's workers get this folder on PYTHONPATH)."""
from __future__ import annotations

import concurrent.futures as cf
import multiprocessing as mp
import os
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from directable import executors, lqr
from directable.executors import TaskError, map_tasks, task_seeds

HERE = Path(__file__).resolve().parent
TIMEOUT_S = 60


def lqr_task(seed, T=200, n=6, s=2):
    """A task that runs the library's thread pool (discretize + sweep) on a
    problem drawn from its own seed."""
    rng = np.random.default_rng(seed)
    A = 0.3 * rng.standard_normal((T, n, n))
    B = rng.standard_normal((n, s))
    disc = lqr.discretize(A, B, 0.01, 10.0, 0.1)
    return np.array(lqr.retune(disc, 10.0).K)


def flaky_task(i, folder, fail_times):
    """Fails the first ``fail_times`` attempts of task i (attempts counted in files)."""
    mark = Path(folder) / f"attempt-{i}"
    with open(mark, "a") as f:
        f.write("x")
    if len(mark.read_text()) <= fail_times:
        raise ArithmeticError(f"planned failure of task {i}")
    return i * 10


def slow_task(i, started_folder):
    (Path(started_folder) / f"started-{i}").touch()
    time.sleep(0.05)
    return i


@pytest.fixture(scope="module")
def expected():
    seeds = task_seeds(7, 5)
    return seeds, [lqr_task(s) for s in seeds]


def _same(results, expected):
    assert len(results) == len(expected)
    for a, b in zip(results, expected):
        assert np.array_equal(a, b)  # bit for bit


def test_task_seeds_are_per_task_not_per_worker():
    a = task_seeds(3, 4)
    b = task_seeds(3, 6)[:4]  # more tasks do not change the first ones
    for x, y in zip(a, b):
        assert np.random.default_rng(x).random() == np.random.default_rng(y).random()
    assert len({np.random.default_rng(s).random() for s in a}) == 4


def test_inline_and_threads_bit_identical(expected):
    seeds, ref = expected
    _same(map_tasks(lqr_task, [(s,) for s in seeds]), ref)
    with cf.ThreadPoolExecutor(3) as ex:
        _same(map_tasks(lqr_task, [(s,) for s in seeds], executor=ex), ref)
        _same(map_tasks(lqr_task, [(s,) for s in seeds], executor=ex, max_in_flight=2), ref)  # bounded memory
    assert executors.describe(None) == "in-process"


def _process_pool_run(method, seeds, timeout_s=TIMEOUT_S):
    """map_tasks on a 2-process pool; a hung worker fails after ``timeout_s``
    instead of hanging the suite (the workers are killed)."""
    ex = cf.ProcessPoolExecutor(2, mp_context=mp.get_context(method))
    lqr_task(seeds[0])
    ex.submit(int, 0)  # the workers start now, right after the library's thread pool ran in this process
    box = {}

    def run():
        try:
            box["r"] = map_tasks(lqr_task, [(s,) for s in seeds], executor=ex)
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            box["e"] = exc

    th = threading.Thread(target=run, daemon=True)
    th.start()
    th.join(timeout_s)
    if th.is_alive():
        for p in list(getattr(ex, "_processes", {}).values()):
            p.kill()
        ex.shutdown(wait=False, cancel_futures=True)
        raise TimeoutError(f"process pool ({method}) did not answer in {timeout_s} s")
    ex.shutdown()
    if "e" in box:
        raise box["e"]
    return box["r"]


@pytest.mark.parametrize("method", ["fork", "forkserver", "spawn"])
def test_process_pools_bit_identical(method, expected):
    seeds, ref = expected
    # a healthy pool answers in about a second: fork's hang fails fast
    results = _process_pool_run(method, seeds, timeout_s=6 if method == "fork" else TIMEOUT_S)
    assert len(results) == len(ref)
    assert all(np.array_equal(a, b) for a, b in zip(results, ref))  # bit for bit


def test_dask_local_cluster_bit_identical(expected, dask_client):
    seeds, ref = expected
    _same(map_tasks(lqr_task, [(s,) for s in seeds], executor=dask_client), ref)
    assert executors.describe(dask_client) == "dask (2 workers)"


def test_ray_bit_identical(expected, tmp_path, monkeypatch):
    ray = pytest.importorskip("ray")
    with pytest.raises(ValueError, match="executor='ray' needs a running Ray"):
        map_tasks(lqr_task, [(1,)], executor="ray")
    # Ray's workers import this module by name
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(HERE)] + [p for p in os.environ.get("PYTHONPATH", "").split(
        os.pathsep) if p]))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        seeds, ref = expected
        _same(map_tasks(lqr_task, [(s,) for s in seeds], executor="ray"), ref)
        with pytest.raises(TaskError, match="task 1 failed 2 times.*planned failure"):
            map_tasks(flaky_task, [(0, tmp_path, 0), (1, tmp_path, 99)], executor="ray")
    finally:
        ray.shutdown()


def test_outputs_stream_into_arrays_callbacks_and_disk(expected, tmp_path, dask_client):
    seeds, ref = expected
    tasks = [(s,) for s in seeds]
    out = np.zeros((len(seeds),) + ref[0].shape)
    assert map_tasks(lqr_task, tasks, executor=dask_client, out=out) is out
    _same(list(out), ref)
    got = {}
    map_tasks(lqr_task, tasks, out=got.__setitem__)
    _same([got[i] for i in range(len(seeds))], ref)
    path = tmp_path / "gains.npy"
    d = executors.disk_array(path, out.shape)
    assert d.marker.exists()
    arr = map_tasks(lqr_task, tasks, executor=dask_client, out=d)
    assert not d.marker.exists()
    _same(list(arr), ref)
    _same(list(executors.load_complete(path)), ref)
    with pytest.raises(ValueError, match="out must have 5 rows"):
        map_tasks(lqr_task, tasks, out=np.zeros((4, 2)))


def test_failure_leaves_marker_on_disk(tmp_path):
    d = executors.disk_array(tmp_path / "r.npy", (3,))
    with pytest.raises(TaskError):
        map_tasks(flaky_task, [(0, tmp_path, 0), (1, tmp_path / "missing", 0), (2, tmp_path, 0)], out=d)
    assert d.marker.exists() and "1 of 3 rows" in d.marker.read_text()
    with pytest.raises(ValueError, match="half-written"):
        executors.load_complete(tmp_path / "r.npy")


@pytest.mark.parametrize("where", ["inline", "dask"])
def test_retry_once_then_name_the_task(where, tmp_path, dask_client):
    ex = dask_client if where == "dask" else None
    # fails once: the retry succeeds
    assert map_tasks(flaky_task, [(i, tmp_path, 1 if i == 2 else 0) for i in range(4)], executor=ex) == [0, 10, 20, 30]
    # fails twice: TaskError with the index and the original exception
    with pytest.raises(TaskError, match="task 3 failed 2 times; last error: ArithmeticError: planned failure of task 3") \
            as info:
        map_tasks(flaky_task, [(i + 10, tmp_path, 0) for i in range(3)] + [(3, tmp_path, 99)], executor=ex)
    assert info.value.index == 3
    (tmp_path / "c").mkdir()
    with pytest.raises(TaskError) as info:
        map_tasks(flaky_task, [(0, tmp_path / "c", 5)], executor=ex, retries=2)
    assert info.value.attempts == 3 and isinstance(info.value.cause, ArithmeticError)


def test_one_progress_report_over_all_tasks(expected):
    seeds, _ = expected
    calls = []
    with cf.ThreadPoolExecutor(2) as ex:
        map_tasks(lqr_task, [(s,) for s in seeds], executor=ex, progress=lambda d, t: calls.append((d, t)))
    assert calls[0] == (0, 5) and calls[-1] == (5, 5)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls) and {t for _, t in calls} == {5}


def test_ctrl_c_cancels_the_remaining_tasks(tmp_path):
    n = 40

    def interrupt(done, total):
        if done == 2:
            raise KeyboardInterrupt

    with cf.ThreadPoolExecutor(1) as ex:
        t0 = time.perf_counter()
        with pytest.raises(KeyboardInterrupt):
            map_tasks(slow_task, [(i, tmp_path) for i in range(n)], executor=ex, progress=interrupt)
        assert time.perf_counter() - t0 < 2.0
    started = len(list(tmp_path.glob("started-*")))
    assert started <= 4, f"{started} of {n} tasks ran after Ctrl-C"


def test_bad_executors_name_executor(dask_client):
    with pytest.raises(TypeError, match="executor must be None, a concurrent.futures.Executor.*got int"):
        map_tasks(lqr_task, [(1,)], executor=3)
    with pytest.raises(ValueError, match="executor must be.*got the string 'dask'"):
        map_tasks(lqr_task, [(1,)], executor="dask")
    ex = cf.ThreadPoolExecutor(1)
    ex.shutdown()
    with pytest.raises(ValueError, match="executor is a ThreadPoolExecutor that was shut down"):
        map_tasks(lqr_task, [(1,)], executor=ex)
    distributed = pytest.importorskip("distributed")
    closed = distributed.Client(dask_client.scheduler.address)
    closed.close()
    with pytest.raises(ValueError, match="executor is a dask.distributed.Client that is not running"):
        map_tasks(lqr_task, [(1,)], executor=closed)
    with pytest.raises(ValueError, match="retries must be >= 0"):
        map_tasks(lqr_task, [(1,)], retries=-1)


def test_cached_builds_once_per_key():
    built = []
    key = executors.spec_key(np.arange(3.0), "a", 1)
    assert key == executors.spec_key(np.arange(3.0), "a", 1) != executors.spec_key(np.arange(3), "a", 1)
    for _ in range(3):
        assert executors.cached(key, lambda: built.append(1) or "model") == "model"
    assert built == [1]
